"""Issue #21 (b, c, M6) on a real ``python -m tier2 serve`` process with its embedded Redis and, where docker can
run, the private dockerd a docker-workspace run starts: its logs (stdout and stderr: the access log, tier2's own
lines) name no run token and no Redis password, and SIGTERM leaves none of its child processes behind (checked by
pid and start time, never by name)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.e2e.helpers import TIER2
from tier2.sandbox.docker import docker_available
from tier2.settings.loader import REPO_ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
KEY = "key-of-serve-process-77"
A = {"Authorization": f"Bearer {KEY}"}


def _stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of a live or zombie pid, None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return fields[0], fields[19]


def _tree(pid: int) -> dict[int, tuple[int, str, str]]:
    """Every descendant of ``pid``: pid → (parent, comm, start time)."""
    out: dict[int, tuple[int, str, str]] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except (FileNotFoundError, ProcessLookupError):
                continue
            for kid in kids:
                st = _stat(kid)
                if st is not None and kid not in out:
                    comm = Path(f"/proc/{kid}/comm").read_text().strip() if Path(f"/proc/{kid}").exists() else "?"
                    out[kid] = (parent, comm, st[1])
                    todo.append(kid)
    return out


def _wait(check: object, what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@dataclass
class Stopped:
    log: str
    password: str
    tokens: list[str]
    children: dict[int, tuple[int, str, str]]
    serve_pid: int
    returncode: int
    docker: bool


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stopped]:
    """``tier2 serve`` (API keys, access log on) is started, used (a run, stream and play tokens in URLs), given
    SIGTERM and waited for."""
    root = tmp_path_factory.mktemp("serve-process")
    log_path = root / "serve.log"
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIER2_", "REDIS_URL", "OTEL_"))}
    env.update(TIER2_API_KEYS=f"tenant-s:{KEY}", TIER2_WORKSPACES=str(root / "ws"), PYTHONUNBUFFERED="1")
    with log_path.open("wb") as log:
        proc = subprocess.Popen([*TIER2, "serve", "--port", str(port), "--log-level", "info", "--workers", "1"],
                                cwd=REPO_ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        def up() -> bool:
            assert proc.poll() is None, log_path.read_text()[-3000:]
            try:
                return httpx.get(f"{base}/healthz", timeout=5).status_code in (200, 503)
            except httpx.HTTPError:
                return False

        _wait(up, "tier2 serve to answer")
        docker = docker_available() is None
        body = {"brief": POTION, **({"workspace": "docker"} if docker else {})}
        run_id = httpx.post(f"{base}/v1/runs", json=body, headers=A, timeout=30).json()["run_id"]
        stream = httpx.post(f"{base}/v1/runs/{run_id}/stream-token", headers=A, timeout=30).json()["token"]
        events = httpx.get(f"{base}/v1/runs/{run_id}/events", params={"token": stream, "limit": 1}, timeout=60)
        assert events.status_code == 200, events.text
        play = httpx.post(f"{base}/v1/runs/{run_id}/play-token", headers=A, timeout=30).json()["token"]
        httpx.get(f"{base}/v1/runs/{run_id}/play/{play}/index.html", timeout=30)  # 200 or 404: it is logged
        url = (root / "ws" / ".redis" / "default" / "redis.url").read_text().strip()
        password = parse_qs(urlsplit(url).query)["password"][0]
        if docker:  # the run's workspace started the private dockerd under this process
            _wait(lambda: any(c == "dockerd" for _, c, _ in _tree(proc.pid).values()), "the private dockerd")
        children = _tree(proc.pid)
        assert any(c == "redis-server" for _, c, _ in children.values()), children
        proc.send_signal(signal.SIGTERM)
        returncode = proc.wait(timeout=180)
        yield Stopped(log_path.read_text(errors="replace"), password, [stream, play], children, proc.pid,
                      returncode, docker)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_logs_hold_no_run_token_and_no_redis_password(stopped: Stopped) -> None:
    assert "GET /v1/runs/" in stopped.log and "/events?token=[redacted]" in stopped.log  # the access log ran
    assert "/play/[redacted]/index.html" in stopped.log
    for secret in (*stopped.tokens, stopped.password):
        assert secret not in stopped.log, secret
    assert "more workers: tier2 worker (it finds this root's Redis; its URL: " in stopped.log  # where, not what


def test_sigterm_stops_every_child_by_pid(stopped: Stopped) -> None:
    """The direct children (the embedded Redis, the private dockerd) are stopped and reaped by the service itself:
    their pids are gone, not left running or as zombies; every other descendant has exited."""
    assert stopped.returncode == 128 + signal.SIGTERM, stopped.log[-3000:]
    assert "tier2: terminated (SIGTERM)" in stopped.log
    if stopped.docker:
        assert any(c == "dockerd" for _, c, _ in stopped.children.values()), stopped.children
    left = []
    for pid, (parent, comm, started) in stopped.children.items():
        now = _stat(pid)
        if now is None or now[1] != started:
            continue  # gone (or the pid was reused by another process)
        if parent == stopped.serve_pid or now[0] != "Z":
            left.append((pid, comm, now[0]))
    assert left == [], left
