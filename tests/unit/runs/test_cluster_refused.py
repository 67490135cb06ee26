"""A ``redis+cluster://`` REDIS_URL is refused at start with a plain error (tier2's keys are not hash-tagged for a
Cluster yet: docs/operations.md §14), by the runtime and by the service's AgentScope storage alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from tier2.app import _agentscope_redis
from tier2.errors import SetupError
from tier2.runs import open_runtime
from tier2.settings.loader import Settings

CLUSTER = "redis+cluster://127.0.0.1:7000,127.0.0.1:7001"


async def test_the_runtime_refuses_a_cluster_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match="Redis Cluster"):
        async with open_runtime(Settings(workspaces=tmp_path / "ws", redis_url=CLUSTER), CLUSTER):
            pass
    assert not (tmp_path / "ws").exists()  # refused before the workspaces root was touched


def test_agentscope_gets_host_and_port_of_one_server_and_no_cluster() -> None:
    assert _agentscope_redis("redis://:pw@10.0.0.5:6380/2") == {"host": "10.0.0.5", "port": 6380, "db": 2,
                                                                 "password": "pw"}
    with pytest.raises(SetupError, match="Redis Cluster"):
        _agentscope_redis(CLUSTER)
