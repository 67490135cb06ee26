"""A local tier2 deployment of real processes for end-to-end tests and benchmarks: one redis-server (restartable,
AOF), one ``tier2 serve`` and any number of ``tier2 worker`` processes, all on loopback.

Only process control lives here (start, SIGKILL, SIGSTOP/SIGCONT, restart Redis); what to assert is up to the
caller. Every process is stopped by pid on `close()`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import yaml

from tier2.settings.loader import REPO_ROOT
from tier2.store.embedded import EmbeddedRedis

__all__ = ["LocalCluster", "free_port", "wait_until"]

TIER2 = [sys.executable, "-m", "tier2"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(check: Callable[[], Any], timeout: float, what: str, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")


#: Drills and benchmarks submit their runs at once as the local tenant: measure the platform, not the quotas.
_DRILL_TENANT = "[tenants.overrides.local]\nmax_queued = 1000\nsubmissions_per_minute = 600\nmax_running = 64\n"


class LocalCluster:
    """``root``: scratch directory (config copy, workspaces, logs, Redis data)."""

    def __init__(self, root: Path, *, policy: dict[str, Any] | None = None, redis_url: str | None = None,
                 key_prefix: str = "tier2", env: dict[str, str] | None = None) -> None:
        self.root = root
        self.config = root / "config"
        shutil.copytree(REPO_ROOT / "config", self.config, dirs_exist_ok=True)
        if policy:
            (self.config / "policy" / "zz-cluster.yaml").write_text(yaml.safe_dump(policy))
        (self.config / "security" / "zz-cluster.toml").write_text(_DRILL_TENANT)
        self.redis: EmbeddedRedis | None = None
        if redis_url is None:
            self.redis = EmbeddedRedis(root / "redis")
            redis_url = self.redis.start()
        self.redis_url = redis_url
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("TIER2_", "REDIS_URL", "OTEL_"))}
        self.env.update(REDIS_URL=redis_url, TIER2_WORKSPACES=str(root / "ws"), TIER2_CONFIG_DIR=str(self.config),
                        TIER2_KEY_PREFIX=key_prefix, **(env or {}))
        self.logs = root / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.serve_proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self._n = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _spawn(self, args: list[str], log_name: str) -> subprocess.Popen[bytes]:
        log = (self.logs / log_name).open("ab")
        try:
            return subprocess.Popen([*TIER2, *args], cwd=REPO_ROOT, env=self.env, stdout=log, stderr=log,  # noqa: S603
                                    start_new_session=True)
        finally:
            log.close()

    def start_service(self, workers: int = 0, timeout: float = 60, attempts: int = 3) -> None:
        """``tier2 serve`` takes a port number, not a bound socket: when another process took the free port between
        `free_port` and the bind, start again on a new port (up to ``attempts`` times)."""
        for attempt in range(1, attempts + 1):
            seen = len(self.log("serve.log"))
            self.port = free_port()
            self.serve_proc = self._spawn(["serve", "--port", str(self.port), "--log-level", "warning",
                                           "--workers", str(workers)], "serve.log")

            def up(seen: int = seen) -> bool:
                if self.serve_proc is not None and self.serve_proc.poll() is not None:
                    raise RuntimeError("tier2 serve exited: " + self.log("serve.log")[seen:][-2000:])
                try:
                    return httpx.get(f"{self.base}/healthz", timeout=5).status_code in (200, 503)
                except httpx.HTTPError:
                    return False

            try:
                wait_until(up, timeout, "tier2 serve to answer /healthz")
                return
            except RuntimeError as exc:
                if attempt == attempts or "address already in use" not in str(exc).lower():
                    raise

    def start_worker(self, concurrency: int = 1) -> str:
        self._n += 1
        name = f"w{self._n}"
        self.workers[name] = self._spawn(["worker", "--name", name, "--concurrency", str(concurrency)],
                                         f"{name}.log")
        return name

    def signal_worker(self, name: str, sig: signal.Signals) -> None:
        """Signal the worker's whole process group (its Chromium too): SIGKILL is a machine dying, not a leak."""
        proc = self.workers[name]
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
        if sig in (signal.SIGKILL, signal.SIGTERM):
            proc.wait(timeout=60)

    def alive_workers(self) -> list[str]:
        return [n for n, p in self.workers.items() if p.poll() is None]

    def restart_redis(self) -> None:
        if self.redis is None:
            raise RuntimeError("this cluster does not own its Redis")
        self.redis.restart(hard=True)

    def log(self, name: str) -> str:
        path = self.logs / name
        return path.read_text(errors="replace") if path.exists() else ""

    def close(self) -> None:
        procs = [p for p in [self.serve_proc, *self.workers.values()] if p is not None]
        for proc in procs:
            if proc.poll() is None:
                try:
                    os.kill(proc.pid, signal.SIGCONT)  # a stopped process cannot act on SIGTERM
                except ProcessLookupError:
                    pass
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.redis is not None:
            self.redis.stop()

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
