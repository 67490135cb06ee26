"""Issue #27 item 1, the lock/url/take-over logic of `tier2.store.embedded` on real redis-server processes: every
process of a root uses one store; when its owner stops or dies (SIGKILL of a real process) a user takes the same
data dir over on the same URL; a stale URL, a planted link and a file others could read are never believed."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from tier2.errors import RedisUnavailable
from tier2.settings.loader import REPO_ROOT
from tier2.store.embedded import URL_FILE, EmbeddedRedis
from tier2.store.embedded_home import hold_shared, open_lock, prepare_dir, process_start, read_owner, write_private
from tier2.testing.cluster import free_port, wait_until

pytestmark = pytest.mark.redis

OWNER = """
import sys, time
from pathlib import Path
from tier2.store.embedded import EmbeddedRedis
server = EmbeddedRedis(Path(sys.argv[1]))
server.start()
print(server.role, server.proc.pid, flush=True)
time.sleep(600)
"""


@pytest.fixture
def client_of() -> Iterator[list[redis.Redis]]:
    clients: list[redis.Redis] = []
    yield clients
    for c in clients:
        c.close()


def _client(url: str, clients: list[redis.Redis]) -> redis.Redis:
    c = redis.Redis.from_url(url, decode_responses=True, socket_timeout=10,
                             retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 40),
                             retry_on_error=[redis.ConnectionError, redis.TimeoutError, OSError])
    clients.append(c)
    return c


def test_a_clean_stop_of_the_owner_hands_the_same_data_and_url_to_a_user(tmp_path: Path,
                                                                         client_of: list[redis.Redis]) -> None:
    with EmbeddedRedis(tmp_path) as a, EmbeddedRedis(tmp_path) as b:
        assert (a.role, b.role) == ("owner", "user") and a.proc is not None
        c = _client(b.url, client_of)
        c.set("accepted", "run-1")
        old = a.proc.pid
        a.stop()
        wait_until(lambda: b.role == "owner" and b.proc is not None, 30, "the user to take the store over")
        assert b.proc is not None and b.proc.pid != old and process_start(old) is None
        assert c.get("accepted") == "run-1"  # same data dir (AOF), same URL: the client just reconnected
        c.set("after", "run-2")
        assert (b.data_dir / URL_FILE).read_text().strip() == b.url  # type: ignore[operator]
    assert not (tmp_path / "default" / URL_FILE).exists()  # the last one out takes the URL with it


@pytest.mark.slow
def test_kill_9_of_the_owner_process_leaves_nothing_lost(tmp_path: Path, client_of: list[redis.Redis]) -> None:
    """A real process owns the store and is SIGKILLed while this one uses it: its redis-server dies with it
    (PDEATHSIG), and this process restarts one on the same data dir; every acknowledged write is there."""
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(tmp_path)], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                             text=True, start_new_session=True)
    try:
        assert owner.stdout is not None
        role, server_pid = owner.stdout.readline().split()
        assert role == "owner"
        with EmbeddedRedis(tmp_path) as user:
            assert user.role == "user"
            c = _client(user.url, client_of)
            for i in range(50):
                c.set(f"run:{i}", "accepted")
            os.kill(owner.pid, signal.SIGKILL)
            owner.wait()
            wait_until(lambda: user.role == "owner" and user.proc is not None, 30, "the take-over")
            assert process_start(int(server_pid)) is None  # the old child is gone, not sharing the data dir
            assert [c.get(f"run:{i}") for i in range(50)] == ["accepted"] * 50
            assert c.set("run:new", "accepted") and c.get("run:new") == "accepted"
            record = read_owner(tmp_path / "default")
            assert record is not None and record.pid == os.getpid() and record.server_pid == user.proc.pid
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        if owner.stdout:
            owner.stdout.close()


def test_the_owner_restarts_its_own_child_when_it_dies(tmp_path: Path, client_of: list[redis.Redis]) -> None:
    with EmbeddedRedis(tmp_path) as server:
        assert server.proc is not None
        c = _client(server.url, client_of)
        c.set("k", "v")
        first = server.proc.pid
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: server.proc is not None and server.proc.pid != first, 30, "the restarted child")
        assert c.get("k") == "v"


def test_a_stale_url_of_a_dead_server_is_replaced(tmp_path: Path) -> None:
    home = tmp_path / "default"
    home.mkdir(mode=0o700)
    stale = f"redis://127.0.0.1:{free_port()}/0?password=stale-password"
    (home / URL_FILE).write_text(stale + "\n")
    os.chmod(home / URL_FILE, 0o600)
    with EmbeddedRedis(tmp_path) as server:  # no owner holds the lock and no one uses it: a fresh store
        assert server.role == "owner" and "stale-password" not in server.url
        assert (home / URL_FILE).read_text().strip() == server.url


def _planted_server(tmp_path: Path) -> Iterator[str]:
    """Another Redis (the attacker's) with a known password: a URL that does answer PING."""
    with EmbeddedRedis(tmp_path / "other") as other:
        yield other.url


@pytest.mark.parametrize("plant", ["symlink", "mode-0644", "other-uid"])
def test_a_user_never_believes_a_url_file_others_could_have_written(tmp_path: Path, plant: str) -> None:
    if plant == "other-uid" and os.getuid() != 0:
        pytest.skip("chown to another uid needs root")
    for decoy in _planted_server(tmp_path):
        with EmbeddedRedis(tmp_path / "root", start_timeout_s=1) as owner:
            url_file = tmp_path / "root" / "default" / URL_FILE
            if plant == "symlink":
                target = tmp_path / "decoy.url"
                target.write_text(decoy + "\n")
                os.chmod(target, 0o600)
                url_file.unlink()
                url_file.symlink_to(target)
            else:
                url_file.write_text(decoy + "\n")
                if plant == "mode-0644":
                    os.chmod(url_file, 0o644)
                else:
                    os.chown(url_file, 65534, 65534)
            with pytest.raises(RedisUnavailable, match="not believed") as err:
                EmbeddedRedis(tmp_path / "root", start_timeout_s=1).start()
            assert str(url_file) in str(err.value) and owner.password not in str(err.value)


def test_an_owner_replaces_a_planted_link_and_leaves_its_target_alone(tmp_path: Path) -> None:
    home = tmp_path / "default"
    home.mkdir(mode=0o700)
    target = tmp_path / "victim.txt"
    target.write_text("keep me\n")
    (home / URL_FILE).symlink_to(target)
    with EmbeddedRedis(tmp_path) as server:
        assert server.role == "owner"
        url_file = home / URL_FILE
        assert not url_file.is_symlink() and stat.S_IMODE(url_file.stat().st_mode) == 0o600
        assert url_file.read_text().strip() == server.url
    assert target.read_text() == "keep me\n"


@pytest.mark.parametrize("where", ["default", ".lock"])
def test_a_planted_link_for_the_home_or_its_lock_is_refused(tmp_path: Path, where: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    if where == "default":
        (root / "default").symlink_to(elsewhere)
    else:
        (root / "default").mkdir(mode=0o700)
        (root / "default" / ".lock").symlink_to(elsewhere / "lock")
    with pytest.raises(RedisUnavailable, match="link"):
        EmbeddedRedis(root).start()
    assert list(elsewhere.iterdir()) == []


def test_a_kept_port_taken_by_another_program_moves_the_store_and_says_so(tmp_path: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    """A process takes the store over while another still holds its URL (here: this test holds ``.users``), and
    another program listens on the kept port: past the timeout the store starts on a new port (same password, same
    data dir) and the log says the processes of the old URL must be restarted."""
    import socket

    home = tmp_path / "default"
    prepare_dir(home)
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    port = squatter.getsockname()[1]
    write_private(home, URL_FILE, f"redis://127.0.0.1:{port}/0?password=kept-password\n")
    users = open_lock(home / ".users")
    try:
        hold_shared(users)  # someone still holds the old URL: the address is kept, not renewed
        with EmbeddedRedis(tmp_path, start_timeout_s=1) as server:
            assert server.role == "owner" and server.password == "kept-password" and server.port != port
            assert (home / URL_FILE).read_text().strip() == server.url
            assert f"port {port} stays taken" in caplog.text
    finally:
        os.close(users)
        squatter.close()
