from __future__ import annotations

from tier2.design.assets import ASSET_KEY, asset_key


def test_ascii_names_become_readable_keys() -> None:
    assert asset_key("player", "Paper Airplane") == "player.paper_airplane"
    assert asset_key("enemy", "angry origami birds!") == "enemy.angry_origami_birds"


def test_other_scripts_get_a_stable_digest_key() -> None:
    key = asset_key("player", "纸飞机")
    assert key == asset_key("player", " 纸飞机 ") and key.startswith("player.u") and ASSET_KEY.match(key)
    assert asset_key("player", "纸飞机") != asset_key("player", "折纸鸟")
    assert asset_key("enemy", "café crow") != asset_key("enemy", "caf crow")  # never a lossy ASCII slug


def test_every_key_matches_the_pattern() -> None:
    for role, name in [("player", "x" * 200), ("9lives", "cat"), ("", ""), ("sound", "fireball cast")]:
        assert ASSET_KEY.match(asset_key(role, name)), asset_key(role, name)
