"""The CI checks' tests: each plants a violation in its own skeleton of ``tier2/`` and runs the check on it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tier2.settings.loader import REPO_ROOT


@pytest.fixture(scope="module")
def clean_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    shutil.copytree(REPO_ROOT / "tier2", root / "tier2", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The package skeleton of ``tier2/`` (every ``__init__.py``, nothing else) to plant a violation in: what the
    checks read of the rest is what the planted files import, and the full tree is checked by ``clean_tree``."""
    root = tmp_path / "repo"
    for init in (REPO_ROOT / "tier2").rglob("__init__.py"):
        if "__pycache__" not in init.parts:
            target = root / init.relative_to(REPO_ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(init, target)
    return root
