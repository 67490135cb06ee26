"""`make lint` type-checks and lints the capability packs' Python with the repository's own config: a genre module
(no ``__init__.py``, relative imports, as `tier2.packs.genres` loads it) with a type error, an untyped function or
a ruff finding fails mypy / ruff; the clean version passes. Run as subprocesses, as `make lint` runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tier2.settings.loader import REPO_ROOT

BIN = Path(sys.executable).parent
CONFIG = REPO_ROOT / "pyproject.toml"
RULES = "def score(n: int) -> int:\n    return n * 2\n"
PROBE = "from . import rules\n\n\ndef win_action(n: int) -> int:\n    return rules.score(n)\n"


def genre(root: Path, probe: str) -> Path:
    where = root / "capability_packs" / "demo" / "genres" / "g"
    where.mkdir(parents=True)
    (where / "rules.py").write_text(RULES)
    (where / "probe.py").write_text(probe)
    return root


def mypy(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "mypy"), "--config-file", str(CONFIG), "--cache-dir", str(root / ".cache"),
                           "capability_packs"], cwd=root, capture_output=True, text=True, timeout=300)


def ruff(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "ruff"), "check", "--config", str(CONFIG), "capability_packs"], cwd=root,
                          capture_output=True, text=True, timeout=120)


def test_make_lint_runs_ruff_and_mypy_over_the_packs() -> None:
    proc = subprocess.run(["make", "-n", "-o", "setup", "lint"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any("ruff check" in line and "capability_packs" in line.split() for line in lines), proc.stdout
    assert any(line.split()[-1].endswith("mypy") for line in lines if line.strip()), proc.stdout


def test_a_clean_genre_module_passes(tmp_path: Path) -> None:
    root = genre(tmp_path, PROBE)
    for proc in (mypy(root), ruff(root)):
        assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("probe", "code"), [
    (PROBE.replace("-> int:", "-> str:"), "[return-value]"),               # the sibling module's type is known
    (PROBE.replace("rules.score(n)", "rules.score(str(n))"), "[arg-type]"),
    (PROBE + "\n\ndef lose_action(n):\n    return n\n", "[no-untyped-def]"),  # strict: every def is typed
], ids=["return-value", "arg-type", "untyped-def"])
def test_mypy_fails_on_a_type_error_in_a_genre_module(tmp_path: Path, probe: str, code: str) -> None:
    proc = mypy(genre(tmp_path, probe))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "capability_packs/demo/genres/g/probe.py" in proc.stdout and code in proc.stdout, proc.stdout


def test_ruff_fails_on_a_finding_in_a_genre_module(tmp_path: Path) -> None:
    proc = ruff(genre(tmp_path, "import os\n" + PROBE))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "F401" in proc.stdout, proc.stdout
