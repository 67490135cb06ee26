"""Each genre template's pure state logic has `node --test` unit tests, and they pass (run by the test command)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tier2.packs import load_pack

ROOT = Path(__file__).resolve().parents[3]
PACK = load_pack(ROOT / "capability_packs", "phaser")


@pytest.mark.parametrize("genre", sorted(PACK.genres))
def test_the_templates_node_tests_pass(genre: str) -> None:
    tests = sorted((PACK.genres[genre].root / "tests").glob("*.test.mjs"))
    assert tests, f"genre {genre} has no tests/*.test.mjs for its src/state.js"
    node = shutil.which("node")
    assert node is not None, "node is not on PATH"
    run = subprocess.run([node, "--test", *map(str, tests)], capture_output=True, text=True, timeout=120,
                         cwd=PACK.genres[genre].root)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "# fail 0" in run.stdout and "# pass 0" not in run.stdout
