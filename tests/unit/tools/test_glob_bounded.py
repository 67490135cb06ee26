"""tier2's Glob: pathlib's matching, without its unbounded recursion (issue #21 H3: ``**/**/**/…`` over a 20-deep
tree ran for days in a thread nobody could stop)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agentscope.message import ToolResultState

from tier2.tools.files import ProjectGlob, glob_regex
from tier2.workspace.paths import PathRefused, check_glob_pattern


def _text(chunk: object) -> str:
    return "".join(getattr(b, "text", "") for b in getattr(chunk, "content", []))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for rel in ("index.html", "src/main.js", "src/scenes/Boot.js", "src/scenes/Play.js", "src/a.ts", "data/items.json",
                "data/x/deep.json", ".hidden/h.js", "node_modules/phaser/x.js", "s1.js", "s2.js", "sa.js"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    return root


@pytest.mark.parametrize("pattern", ["*.html", "src/*.js", "src/**/*.js", "**/*.json", "**/*", "data/*.json",
                                     "src/scenes/*", "s[12].js", "s[!1].js", "s?.js", "**/Boot.js", "src/**",
                                     "data/**/*.json"])
async def test_matches_what_pathlib_matches(tree: Path, pattern: str) -> None:
    expected = {str(p) for p in tree.glob(pattern) if p.is_file()
                and not {"node_modules"} & set(p.relative_to(tree).parts)}
    if pattern == "src/**":  # pathlib 3.11 yields only directories for a trailing '**'; tier2's Glob gives files
        expected = {str(p) for p in tree.glob("src/**/*") if p.is_file()}
    out = await ProjectGlob(tree).call(pattern=pattern, path=str(tree))
    got = set(_text(out).splitlines()) if "No files found" not in _text(out) else set()
    assert got == expected
    assert glob_regex(pattern).fullmatch("node_modules") is None or pattern.startswith("**")


def test_more_than_one_double_star_is_refused() -> None:
    check_glob_pattern("src/**/*.js")
    for bad in ("**/**/*", "a/**/b/**/c", "**/**/**/**/**/**/**/**/**/**/*"):
        with pytest.raises(PathRefused, match="more than one"):
            check_glob_pattern(bad)


async def test_a_deep_wide_tree_stops_at_the_entry_budget(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    d = root
    for i in range(20):
        d = d / f"d{i}"
        for j in range(150):
            (d / f"w{j}").mkdir(parents=True, exist_ok=True)
    glob = ProjectGlob(root, max_entries=2_000)
    out = await asyncio.wait_for(glob.call(pattern="**/*", path=str(root)), 60)
    assert out.state == ToolResultState.SUCCESS
    assert "search stopped after 2000 entries" in _text(out)


async def test_the_walk_stops_at_its_deadline(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "a").mkdir(parents=True)
    (root / "a" / "f.js").write_text("x")
    out = await ProjectGlob(root, deadline_s=0.0).call(pattern="**/*.js", path=str(root))
    assert "search stopped" in _text(out)


async def test_a_directory_link_is_not_walked(tmp_path: Path) -> None:
    root, outside = tmp_path / "proj", tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "secret.js").write_text("x")
    root.mkdir()
    (root / "out").symlink_to(outside)
    (root / "loop").symlink_to(root)
    out = await ProjectGlob(root).call(pattern="**/*.js", path=str(root))
    assert "secret" not in _text(out)
