"""Each pytest-xdist worker (or the single serial session) has its own Redis server, temp tree, key prefix and
workspaces root: parallel workers cannot collide on keys, ports or files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import WORKER
from tier2.settings.loader import Settings
from tier2.store.embedded import EmbeddedRedis


def test_the_environment_defaults_are_per_worker(tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.getbasetemp()
    assert os.environ["TIER2_KEY_PREFIX"] == f"tier2-{WORKER}"
    defaults = Settings()
    assert defaults.key_prefix == f"tier2-{WORKER}"
    assert Path(defaults.workspaces).is_relative_to(base)   # never the checkout's shared workspaces/


@pytest.mark.redis
def test_the_redis_server_and_workspaces_belong_to_this_worker(redis_server: EmbeddedRedis, workspaces: Path,
                                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.getbasetemp()
    assert Path(redis_server.data_dir).is_relative_to(base) and workspaces.is_relative_to(base)
    if WORKER != "main":                                       # xdist gives each worker its own base temp
        assert base.name == f"popen-{WORKER}"
