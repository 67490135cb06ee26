"""The embedded Redis default against a real redis-server binary."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import redis

from tier2.errors import RedisUnavailable
from tier2.store.embedded import EmbeddedRedis, redis_url

pytestmark = pytest.mark.redis


def test_child_runs_on_loopback_with_aof_and_stops_by_pid(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path)
    url = server.start()
    try:
        assert url.startswith("redis://127.0.0.1:")
        client = redis.Redis.from_url(url)
        assert client.config_get("appendonly")["appendonly"] == "yes"
        assert client.config_get("bind")["bind"] == "127.0.0.1"
        client.set("k", "v")
        client.close()
        pid = server.proc.pid
    finally:
        server.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_second_instance_gets_its_own_data_dir(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path) as a, EmbeddedRedis(tmp_path) as b:
        assert a.data_dir != b.data_dir and a.port != b.port
    assert [p.name for p in tmp_path.iterdir()] == ["default"]


def test_missing_binary_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr("tier2.store.embedded.find_redis_server", lambda _c: None)
    with pytest.raises(RedisUnavailable, match="no redis-server found"):
        EmbeddedRedis(tmp_path).start()


def test_unreachable_redis_url_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RedisUnavailable, match="unreachable"), redis_url("redis://127.0.0.1:1/0", tmp_path):
        pass
