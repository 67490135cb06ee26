from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tier2.runs import Runtime, open_runtime
from tier2.settings.loader import REPO_ROOT, Settings
from tier2.store.keys import Keys


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    """A private copy of config/ that a test may extend (e.g. with a model route)."""
    dest = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", dest)
    return dest


@pytest.fixture
async def runtime(tmp_path: Path, redis_url: str, config_dir: Path) -> AsyncIterator[Runtime]:
    settings = Settings(workspaces=tmp_path / "ws", redis_url=redis_url, config_dir=config_dir)
    async with open_runtime(settings, redis_url, Keys(prefix=f"test-{tmp_path.name}")) as rt:
        yield rt
