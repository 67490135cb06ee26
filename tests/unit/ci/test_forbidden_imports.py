"""`ci/check_forbidden_imports.py` on a copy of tier2/: each import form of a denied module is caught with its file
and line, a clean tree passes. The check runs as a subprocess, as `make lint` runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tier2.settings.loader import REPO_ROOT

CHECK = REPO_ROOT / "ci" / "check_forbidden_imports.py"


def run_check(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CHECK), "--root", str(root), *extra], capture_output=True, text=True,
                          timeout=120)


def plant(root: Path, rel: str, source: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


def test_the_clean_tree_passes(clean_tree: Path) -> None:
    proc = run_check(clean_tree)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "forbidden imports: 0 violation(s)" in proc.stdout


def test_the_checkout_itself_passes() -> None:
    proc = subprocess.run([sys.executable, str(CHECK)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("rel", "source", "line", "module"), [
    ("tier2/runs/legacy.py", "import os\nimport saa\n", 2, "saa"),
    ("tier2/runs/legacy.py", "import json, studio.board as board\n", 1, "studio.board"),
    ("tier2/tools/legacy.py", "from game_cloud.api import Client\n", 1, "game_cloud.api"),
    ("tier2/tools/legacy.py", "from saa import agents\n", 1, "saa"),
    ("tier2/service/legacy.py", "def lazy():\n    import studio\n    return studio\n", 2, "studio"),
    ("tier2/service/legacy.py", "import importlib\n\nmod = importlib.import_module('saa.runtime')\n", 3,
     "saa.runtime"),
    ("tier2/service/legacy.py", "import importlib as il\nmod = il.import_module('game_cloud')\n", 2, "game_cloud"),
    ("tier2/service/legacy.py", "from importlib import import_module\nm = import_module(name='studio')\n", 2,
     "studio"),
    ("tier2/service/legacy.py", "x = 1\nmod = __import__('saa.core', fromlist=['x'])\n", 2, "saa.core"),
    # relative: climbs out of tier2/ (tier2.service -> tier2 -> the top level)
    ("tier2/service/legacy.py", "from ... import saa\n", 1, "saa"),
])
def test_each_import_form_is_caught_with_file_and_line(tree: Path, rel: str, source: str, line: int,
                                                       module: str) -> None:
    plant(tree, rel, source)
    proc = run_check(tree)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{rel}:{line}: forbidden import of {module!r}" in proc.stdout, proc.stdout
    assert "forbidden imports: 1 violation(s)" in proc.stdout


def test_relative_imports_are_resolved_against_the_package(tree: Path, tmp_path: Path) -> None:
    """A denied tier2 module (here a vendored copy of legacy code) reached by relative and dynamic imports."""
    denylist = tmp_path / "deny.txt"
    denylist.write_text("# test list\ntier2.store.legacy  # vendored legacy code\n")
    plant(tree, "tier2/store/legacy.py", "X = 1\n")
    plant(tree, "tier2/store/a.py", "from .legacy import X\n")
    plant(tree, "tier2/store/sub/b.py", "\nfrom .. import legacy\n")
    plant(tree, "tier2/runs/c.py", "from ..store.legacy import X\n")
    plant(tree, "tier2/store/d.py", "import importlib\nm = importlib.import_module('.legacy', package=__package__)\n")
    plant(tree, "tier2/store/e.py", "m = __import__('legacy', globals(), None, ['X'], 1)\n")
    plant(tree, "tier2/runs/fine.py", "from ..store import keys\nfrom . import legacy_free\n")
    proc = run_check(tree, "--denylist", str(denylist))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for where in ("tier2/store/a.py:1:", "tier2/store/sub/b.py:2:", "tier2/runs/c.py:1:", "tier2/store/d.py:2:",
                  "tier2/store/e.py:1:"):
        assert f"{where} forbidden import of 'tier2.store.legacy" in proc.stdout, (where, proc.stdout)
    assert "fine.py" not in proc.stdout and "forbidden imports: 5 violation(s)" in proc.stdout


def test_similar_names_are_not_denied(tree: Path) -> None:
    plant(tree, "tier2/runs/ok.py", "import saas\nimport studio_tools\nfrom tier2.store import saa_like\n"
                                    "import importlib\nm = importlib.import_module(name)\n")
    proc = run_check(tree)
    assert proc.returncode == 0, proc.stdout


def test_the_denylist_names_the_legacy_runtime() -> None:
    text = (REPO_ROOT / "ci" / "forbidden_imports.txt").read_text()
    names = [ln.split("#")[0].strip() for ln in text.splitlines() if ln.split("#")[0].strip()]
    assert names == ["saa", "studio", "game_cloud"]
    assert "To deny another module" in text
