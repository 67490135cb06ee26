"""Fixtures of the data-gate tests: the real-game corpus (in the repository, and the pinned minecraft-data package)
and the Phaser pack's template tables. A missing fixture is a failure, never a skip."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tier2.settings.loader import REPO_ROOT

# real-game data copied into the repository with its licences (tests/fixtures/corpus/README.md)
CORPUS = Path(REPO_ROOT) / "tests" / "fixtures" / "corpus"
TEMPLATE_DATA = Path(REPO_ROOT) / "capability_packs" / "phaser" / "genres" / "shop" / "template" / "data"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    for name in ("farming-amcolash/crops.json", "grmc/tables.json"):
        assert (CORPUS / name).is_file(), f"corpus fixture missing from the repository: {CORPUS / name}"
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
    """``data/data`` of the installed minecraft-data package (PyPI minecraft-data==3.20.0, a pinned dev dependency)."""
    import minecraft_data  # an ImportError fails the test: the package is in requirements.lock

    return Path(minecraft_data.__file__).parent / "data" / "data"


@pytest.fixture(scope="session")
def minecraft_119(minecraft_data_dir: Path) -> tuple[Path, Path]:
    """``(items.json, recipes.json)`` of Minecraft 1.19: pc/1.19.2 items and pc/1.19 recipes, per dataPaths.json."""
    paths = load_json(minecraft_data_dir / "dataPaths.json")["pc"]["1.19.2"]
    items = minecraft_data_dir / paths["items"] / "items.json"
    recipes = minecraft_data_dir / paths["recipes"] / "recipes.json"
    assert (paths["items"], paths["recipes"]) == ("pc/1.19.2", "pc/1.19"), paths
    return items, recipes
