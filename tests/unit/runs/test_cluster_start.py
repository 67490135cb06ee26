"""A ``redis+cluster://`` REDIS_URL is accepted (every script touches one slot: docs/operations.md §14): AgentScope's
storage and bus get tier2's cluster client; only ``[redis] min_replicas`` > 0 is refused there, at start and
plainly (an acceptance writes to several primaries, and ``WAIT`` counts one)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tier2.app import _agentscope_backends, _agentscope_redis, _ClusterBus, _ClusterStorage
from tier2.errors import SetupError
from tier2.runs import open_runtime
from tier2.settings.loader import REPO_ROOT, Settings

CLUSTER = "redis+cluster://127.0.0.1:7000,127.0.0.1:7001"


async def test_min_replicas_on_a_cluster_is_refused_before_anything_starts(tmp_path: Path) -> None:
    config = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    toml = config / "security" / "runtime.toml"
    text = toml.read_text()
    toml.write_text(re.sub(r"(?m)^min_replicas\s*=\s*\d+", "min_replicas = 1", text))
    assert "min_replicas = 1" in toml.read_text()
    with pytest.raises(SetupError, match="min_replicas"):
        async with open_runtime(Settings(workspaces=tmp_path / "ws", redis_url=CLUSTER, config_dir=config), CLUSTER):
            pass
    assert not (tmp_path / "ws").exists()  # refused before the workspaces root was touched


def test_agentscope_gets_one_servers_address_or_the_cluster_client() -> None:
    assert _agentscope_redis("redis://:pw@10.0.0.5:6380/2") == {"host": "10.0.0.5", "port": 6380, "db": 2,
                                                                 "password": "pw"}
    storage, bus = _agentscope_backends(CLUSTER)
    assert isinstance(storage, _ClusterStorage) and isinstance(bus, _ClusterBus)
    assert storage.cluster_url == bus.cluster_url == CLUSTER
