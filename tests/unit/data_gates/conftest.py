"""Fixtures of the data-gate tests: the read-only real-game corpus and the Phaser pack's template tables."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tier2.settings.loader import REPO_ROOT

# shared/ sits beside the project root (on developer machines and in CI); TIER2_CORPUS overrides
CORPUS = Path(os.environ.get("TIER2_CORPUS", str(REPO_ROOT.parent / "shared" / "corpus")))
TEMPLATE_DATA = Path(REPO_ROOT) / "capability_packs" / "phaser" / "template" / "data"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        if os.environ.get("CI"):  # CI always has shared/ beside the clone: a missing corpus is a failure there
            pytest.fail(f"real-game corpus not found at {CORPUS}")
        pytest.skip(f"real-game corpus not found at {CORPUS} (set TIER2_CORPUS)")
    return CORPUS


@pytest.fixture(scope="session")
def _template_tables() -> dict[str, dict]:
    return {p.name: load_json(p) for p in sorted(TEMPLATE_DATA.glob("*.json"))}


@pytest.fixture
def tables(_template_tables: dict[str, dict]) -> dict[str, dict]:
    """A fresh deep copy of the template's six tables (tests mutate it)."""
    return copy.deepcopy(_template_tables)


@pytest.fixture(scope="session")
def minecraft_data_dir() -> Path:
    """``data/data`` of the installed minecraft-data package (PyPI minecraft-data==3.20.0)."""
    mcd = pytest.importorskip("minecraft_data")
    return Path(mcd.__file__).parent / "data" / "data"
