"""Fixtures for the static L1 gates: the pack's real node_modules, the template's sources, the create-game demos."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.unit.static_gates.helpers import CREATE_GAME, DEMOS, NODE_MODULES, PACK, TEMPLATE
from tier2.validators.static import PhaserApi, load_phaser_api, read_sources


@pytest.fixture(scope="session")
def node_modules() -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (NODE_MODULES / "acorn").is_dir() or not (NODE_MODULES / "phaser").is_dir():
        pytest.skip(f"pack toolchain not installed: run `npm ci` in {PACK}")
    return NODE_MODULES


@pytest.fixture(scope="session")
def api(node_modules: Path) -> PhaserApi:
    return load_phaser_api(node_modules)


@pytest.fixture()
def template_src() -> dict[str, str]:
    """The template's src/ (read fresh per test: it is a moving target, never edited here)."""
    return read_sources(TEMPLATE)


@pytest.fixture(scope="session")
def demo_games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three MIT demo games of `@phaserjs/create-game@1.3.2`, fetched with `npm pack` into a temp dir."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: cannot fetch the create-game demos")
    tmp = tmp_path_factory.mktemp("create-game")
    try:
        proc = subprocess.run([npm, "pack", CREATE_GAME, "--silent", "--pack-destination", str(tmp)], cwd=tmp,
                              capture_output=True, text=True, timeout=180, check=False)
    except subprocess.TimeoutExpired:
        pytest.skip(f"`npm pack {CREATE_GAME}` timed out (registry unreachable?)")
    tarballs = list(tmp.glob("*.tgz"))
    if proc.returncode != 0 or not tarballs:
        pytest.skip(f"`npm pack {CREATE_GAME}` failed (registry unreachable?): {proc.stderr.strip()[-300:]}")
    with tarfile.open(tarballs[0]) as tar:
        tar.extractall(tmp, filter="data")
    demos = {name: tmp / "package" / "scaffolding" / "demo" / name for name in DEMOS}
    missing = [n for n, p in demos.items() if not (p / "src").is_dir()]
    assert not missing, f"{CREATE_GAME} no longer ships demos {missing}"
    return demos
