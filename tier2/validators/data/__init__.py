"""Deterministic L1 data gates of any genre: the schema gate and the genre's own data checks (`pack_checks`).

What a genre's data means (a crafting graph and its economy, a level's solvability) belongs to the
``checks.py`` in its pack; core only runs them (`pack_checks.genre_data_gates`).
"""
