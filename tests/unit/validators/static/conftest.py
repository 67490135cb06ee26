"""Fixtures for the static L1 gates: the pack's real node_modules, the template's sources, the create-game demos."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from capability_packs.phaser.corpus import fetch_create_game_demos
from tests.unit.validators.static.helpers import CREATE_GAME, DEMOS, NODE_MODULES, PACK, TEMPLATE, adapter_module
from tier2.settings.loader import REPO_ROOT
from tier2.validators.static import read_sources

_api = adapter_module("api")
PhaserApi, load_phaser_api = _api.PhaserApi, _api.load_phaser_api


@pytest.fixture(scope="session")
def node_modules() -> Path:
    # installed by `make setup` (scripts/setup.sh): missing means a broken setup, a failure rather than a skip
    if shutil.which("node") is None:
        pytest.fail("node is not installed (run scripts/setup.sh)")
    if not (NODE_MODULES / "acorn").is_dir() or not (NODE_MODULES / "phaser").is_dir():
        pytest.fail(f"pack toolchain not installed: run `npm ci` in {PACK}")
    return NODE_MODULES


@pytest.fixture(scope="session")
def api(node_modules: Path) -> PhaserApi:
    return load_phaser_api(node_modules)


@pytest.fixture()
def template_src() -> dict[str, str]:
    """The template's src/ (read fresh per test: it is a moving target, never edited here)."""
    return read_sources(TEMPLATE)


@pytest.fixture(scope="session")
def demo_games() -> dict[str, Path]:
    """The three MIT demo games of `@phaserjs/create-game@1.3.2`: `npm pack` once into the git-ignored
    workspaces/.cache (shared with the e2e tests, under a file lock); no npm or no registry is a failure."""
    demos = fetch_create_game_demos(REPO_ROOT / "workspaces" / ".cache")
    assert set(demos) == set(DEMOS), (CREATE_GAME, sorted(demos))
    missing = [n for n, p in demos.items() if not (p / "src").is_dir()]
    assert not missing, f"{CREATE_GAME} no longer ships demos {missing}"
    return demos
