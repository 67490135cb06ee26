"""Composing a template: the genre's files over the pack's common ones, one cache directory per content, built
whole or not at all, never from links, never in a cache another user owns."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tier2.errors import PackError
from tier2.packs.templates import compose_template


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_genre_files_win_and_the_result_is_cached_by_content(tmp_path: Path) -> None:
    common = _tree(tmp_path / "common", {"index.html": "shared", "src/hook.js": "hook", "dist/x.js": "built"})
    genre = _tree(tmp_path / "genre", {"index.html": "mine", "src/state.js": "state"})
    cache = tmp_path / "cache"
    out = compose_template("p-g", [common, genre], cache)
    got = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*") if p.is_file()}
    assert got == {"index.html": "mine", "src/hook.js": "hook", "src/state.js": "state"}  # no build output
    assert compose_template("p-g", [common, genre], cache) == out           # same content: same directory
    (common / "src/hook.js").write_text("hook v2")
    changed = compose_template("p-g", [common, genre], cache)
    assert changed != out and (changed / "src/hook.js").read_text() == "hook v2"
    assert (out / "src/hook.js").read_text() == "hook"                    # an earlier composition is untouched
    assert [p.name for p in cache.iterdir() if p.name.startswith(".")] == []  # no staging left behind
    assert compose_template("p-g", [genre], cache) != out              # no common: only the genre's files
    view = _tree(tmp_path / "view", {"src/main.js": "entry", "index.html": "view's"})
    three = compose_template("p-g", [common, genre, view], cache)      # shared rules, then a pack's view
    got = {p.relative_to(three).as_posix(): p.read_text() for p in three.rglob("*") if p.is_file()}
    assert got == {"index.html": "view's", "src/hook.js": "hook v2", "src/state.js": "state", "src/main.js": "entry"}


def test_links_and_a_foreign_cache_are_refused(tmp_path: Path) -> None:
    genre = _tree(tmp_path / "genre", {"src/state.js": "state"})
    (genre / "src/leak.js").symlink_to("/etc/passwd")
    with pytest.raises(PackError, match="is a link"):
        compose_template("p-g", [genre], tmp_path / "cache")
    (genre / "src/leak.js").unlink()
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    if os.getuid() != 0:
        pytest.skip("needs root to hand the cache to another user")
    os.chown(foreign, 65534, 65534)
    with pytest.raises(PackError, match="not a directory of this user"):
        compose_template("p-g", [genre], foreign)
    with pytest.raises(PackError, match="missing or empty"):
        compose_template("p-g", [tmp_path / "nothing"], tmp_path / "cache")


def test_compositions_a_pack_change_left_behind_are_pruned(tmp_path: Path) -> None:
    import os
    import time

    genre = _tree(tmp_path / "genre", {"src/state.js": "v0"})
    cache = tmp_path / "cache"
    made = []
    for v in range(5):
        (genre / "src/state.js").write_text(f"v{v}")
        made.append(compose_template("p-g", [genre], cache))
        day_old = time.time() - 2 * 24 * 3600 + v  # every older one unused for two days (in order)
        os.utime(made[-1], (day_old, day_old))
    other = compose_template("p-other", [genre], cache)  # another genre's composition is never touched
    (genre / "src/state.js").write_text("v5")
    newest = compose_template("p-g", [genre], cache)
    left = sorted(p.name for p in cache.iterdir() if p.name.startswith("p-g-"))
    assert newest.name in left and len(left) == 3  # the newest and the two newest older ones
    assert made[4].exists() and made[3].exists() and not made[0].exists() and other.exists()
    fresh = compose_template("p-g", [_tree(tmp_path / "g2", {"a.js": "x"})], cache)  # recent older ones stay
    assert newest.exists() and fresh.exists()
