"""`ci/check_imports.py` (import direction) on tier2/ (the full tree, and skeletons with a planted violation):
absolute and relative upward imports are caught with their file and line, a clean tree passes. The check runs as a
subprocess, as `make lint` runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tier2.settings.loader import REPO_ROOT

CHECK = REPO_ROOT / "ci" / "check_imports.py"


def run_check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True, timeout=120)


def test_the_clean_tree_passes(clean_tree: Path) -> None:
    proc = run_check(clean_tree)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "import direction: 0 violation(s)" in proc.stdout


@pytest.mark.parametrize(("rel", "source", "line", "message"), [
    ("tier2/store/bad.py", "import tier2.runs\n", 1, "store (layer 3) must not import tier2.runs (layer 7)"),
    ("tier2/store/bad.py", "from tier2.runs import x\n", 1, "store (layer 3) must not import tier2.runs"),
    ("tier2/store/bad.py", "from tier2 import runs\n", 1, "store (layer 3) must not import tier2.runs"),
    ("tier2/store/bad.py", "def f():\n    from tier2.tools import y\n", 2,
     "store (layer 3) must not import tier2.tools"),
    # relative forms: resolved against the importing file's package
    ("tier2/runs/bad.py", "\nfrom ..service import app\n", 2, "runs (layer 7) must not import tier2.service (layer 8)"),
    ("tier2/runs/bad.py", "from .. import service\n", 1, "runs (layer 7) must not import tier2.service"),
    ("tier2/store/deep/bad.py", "x = 1\nfrom ...runs.loop import go\n", 2,
     "store (layer 3) must not import tier2.runs"),
    ("tier2/service/__init__.py", "from ..cli import main\n", 1, "service (layer 8) must not import tier2.cli"),
])
def test_an_upward_import_is_caught_with_file_and_line(tree: Path, rel: str, source: str, line: int,
                                                       message: str) -> None:
    path = tree / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    proc = run_check(tree)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{rel}:{line}: {message}" in proc.stdout, proc.stdout


def test_relative_imports_downward_and_within_a_package_pass(tree: Path) -> None:
    (tree / "tier2/service/ok.py").write_text("from ..runs import Runtime\nfrom . import app\nfrom .app import x\n")
    (tree / "tier2/store/ok.py").write_text("from ..settings import loader\nfrom tier2 import __version__\n")
    proc = run_check(tree)
    assert proc.returncode == 0, proc.stdout


def test_an_import_cycle_inside_a_package_is_caught(tree: Path) -> None:
    """Two modules of one package importing each other (one of them only for typing) fail the check."""
    (tree / "tier2/store/cycle_a.py").write_text("from tier2.store.cycle_b import B\nA = 1\n")
    (tree / "tier2/store/cycle_b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tier2.store.cycle_a import A\nB = 2\n")
    proc = run_check(tree)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "import cycle between 2 modules: tier2.store.cycle_a -> tier2.store.cycle_b" in proc.stdout, proc.stdout


def test_a_longer_cycle_through_relative_imports_is_caught(tree: Path) -> None:
    (tree / "tier2/runs/c1.py").write_text("from .c2 import x\n")
    (tree / "tier2/runs/c2.py").write_text("def f():\n    from . import c3\nx = 1\n")
    (tree / "tier2/runs/c3.py").write_text("from tier2.runs import c1\n")
    proc = run_check(tree)
    assert proc.returncode == 1 and "import cycle between 3 modules: tier2.runs.c1 -> tier2.runs.c2 -> " \
        "tier2.runs.c3" in proc.stdout, proc.stdout


def test_a_run_part_importing_the_session_is_caught(tree: Path) -> None:
    (tree / "tier2/runs/loop/session.py").write_text("class RunSession:\n    pass\n")
    (tree / "tier2/runs/generate.py").write_text("from tier2.runs.loop.session import RunSession\n")
    (tree / "tier2/runs/loop/addons/peek.py").write_text("\nfrom tier2.runs.loop.session import RunSession\n")
    proc = run_check(tree)
    assert proc.returncode == 1, proc.stdout
    assert ("tier2/runs/loop/addons/peek.py:2: tier2.runs.loop.addons.peek must not import "
            "tier2.runs.loop.session (only tier2.runs.generate may)") in proc.stdout, proc.stdout
    assert "tier2/runs/generate.py" not in proc.stdout, proc.stdout
