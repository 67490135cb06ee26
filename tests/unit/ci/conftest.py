"""The CI checks' tests: each plants a violation in its own copy of ``tier2/`` and runs the check on it."""

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
def tree(clean_tree: Path, tmp_path: Path) -> Path:
    shutil.copytree(clean_tree, tmp_path / "repo")
    return tmp_path / "repo"
