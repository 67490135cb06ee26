"""The embedded Redis default against a real redis-server binary."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest
import redis

from tier2.errors import RedisUnavailable
from tier2.store.embedded import EmbeddedRedis, find_url_file, redis_url

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


def test_a_second_instance_uses_the_first_ones_store(tmp_path: Path) -> None:
    """Issue #27 item 1: one store per root; the second process never gets a private one (tests of the sharing,
    the take-over and the hostile files: test_one_store.py)."""
    with EmbeddedRedis(tmp_path) as a, EmbeddedRedis(tmp_path) as b:
        assert (a.role, b.role) == ("owner", "user") and a.url == b.url and b.proc is None
    assert [p.name for p in tmp_path.iterdir()] == ["default"]


def test_missing_binary_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr("tier2.store.embedded.find_redis_server", lambda _c: None)
    with pytest.raises(RedisUnavailable, match="no redis-server found"):
        EmbeddedRedis(tmp_path).start()


def test_unreachable_redis_url_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RedisUnavailable, match="unreachable"), redis_url("redis://127.0.0.1:1/0", tmp_path):
        pass


def test_an_unauthenticated_client_is_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue #21 M6: any local user (or a page of a local browser) reaches a loopback port; without the password
    the embedded Redis answers nothing. The password is in 0600 files, never on the command line or in a log."""
    caplog.set_level("DEBUG", logger="tier2.store.embedded")
    with EmbeddedRedis(tmp_path) as server:
        assert server.port is not None and server.proc is not None and server.data_dir is not None
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:  # a bare client
            raw.sendall(b"PING\r\nGET anything\r\n")
            replies = b""
            while replies.count(b"\r\n") < 2:
                replies += raw.recv(4096)
        assert replies.startswith(b"-NOAUTH"), replies
        anonymous = redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=5)
        with pytest.raises(redis.AuthenticationError):
            anonymous.ping()
        anonymous.close()
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(host="127.0.0.1", port=server.port, password="guess", socket_timeout=5).ping()
        client = redis.Redis.from_url(server.url)
        assert client.ping() and client.config_get("requirepass")["requirepass"] == server.password
        client.close()
        cmdline = Path(f"/proc/{server.proc.pid}/cmdline").read_bytes()
        assert server.password.encode() not in cmdline
        url_file = server.url_file
        assert url_file is not None and url_file.read_text().strip() == server.url
        for path in (url_file, server.data_dir / "redis.conf"):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        for path in (tmp_path, server.data_dir):
            assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
        assert server.password not in server.public_url and server.public_url.endswith("password=[redacted]")
        assert find_url_file(server.url, tmp_path) == url_file
    assert not url_file.exists()  # stopped: the URL is gone with the server
    assert caplog.records and all(server.password not in r.getMessage() for r in caplog.records)


def test_a_restart_keeps_the_password_its_clients_hold(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path) as server:
        url = server.url
        assert server.restart(hard=True) == url
        client = redis.Redis.from_url(url)
        assert client.ping()
        client.close()


def test_an_unreachable_redis_url_is_reported_without_its_password(tmp_path: Path) -> None:
    with pytest.raises(RedisUnavailable) as err, redis_url("redis://:hunter2-secret@127.0.0.1:1/0", tmp_path):
        pass
    assert "hunter2-secret" not in str(err.value) and "[redacted]" in str(err.value)
