"""The embedded Redis's home directory (``<workspaces>/.redis/default/``): its locks, its private files and the
identity of the processes recorded there. Everything here distrusts the directory's contents: a link is never
followed, a file another user could read or own is never believed, a pid is checked with its start time.

Files (all 0600 in a 0700 directory, owned by this user):

- ``.lock``: held (``flock`` exclusive) by the **owner**, the one process whose ``redis-server`` child serves the
  store; the kernel drops it when that process dies, ``kill -9`` included, which is how survivors learn of it.
- ``.users``: held shared by every process using the store (the owner too), so a starter can tell whether anybody
  still holds the store's address and password (`alone`).
- ``redis.conf`` (``requirepass``), ``redis.url`` (the full URL clients use), ``owner.json`` (owner pid, its
  ``redis-server`` pid and start time, the port).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

from tier2.errors import RedisUnavailable

__all__ = [
    "OWNER_FILE", "OwnerRecord", "UntrustedFile", "alone", "hold_shared", "open_lock", "prepare_dir",
    "process_cmdline", "process_start", "read_owner", "read_private", "try_lock", "write_private",
]

OWNER_FILE = "owner.json"


class UntrustedFile(Exception):
    """A file of the home directory that is not this user's private regular file: never believed."""


def _check_dir(path: Path) -> None:
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise RedisUnavailable(f"{path} is not a directory (a link or a file was planted there): refusing to use it "
                               "for the embedded Redis")
    if st.st_uid != os.getuid():
        raise RedisUnavailable(f"{path} belongs to uid {st.st_uid}, not to this user: refusing to use it for the "
                               "embedded Redis")


def prepare_dir(path: Path) -> None:
    """Create ``path`` (and its parent) 0700 if missing; refuse a link, a file or another user's directory."""
    for d in (path.parent, path):
        with contextlib.suppress(FileExistsError):
            d.mkdir(mode=0o700, parents=True)
        _check_dir(d)
        os.chmod(d, 0o700, follow_symlinks=False)  # the AOF holds every run, the config the password


def open_lock(path: Path) -> int:
    """An fd on the lock file ``path`` (created 0600); a link there is refused, never replaced (another process may
    hold a lock on the file it names)."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise RedisUnavailable(f"cannot open the lock file {path} ({exc.strerror}): is a link planted there?") from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
        os.close(fd)
        raise RedisUnavailable(f"{path} is not a regular file of this user: refusing it as the store's lock")
    return fd


def try_lock(fd: int, exclusive: bool = True) -> bool:
    """Take ``flock`` on ``fd`` without waiting; False when another process holds a conflicting one."""
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def hold_shared(fd: int) -> None:
    """Take ``flock`` shared on ``fd``, waiting while another process converts its own (`alone`)."""
    fcntl.flock(fd, fcntl.LOCK_SH)


def alone(users_fd: int) -> bool:
    """Whether no other process holds ``.users``; the caller holds it shared, before and after."""
    sole = try_lock(users_fd, exclusive=True)  # a conversion: not atomic, the shared lock may be dropped meanwhile
    hold_shared(users_fd)
    return sole


def read_private(path: Path) -> str | None:
    """The text of ``path``; None when it does not exist; `UntrustedFile` when it is a link, not a regular file,
    another user's, or readable or writable by group or others."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UntrustedFile(f"{path} cannot be opened without following a link ({exc.strerror})") from exc
    with os.fdopen(fd, "r", errors="replace") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedFile(f"{path} is not a regular file")
        if st.st_uid != os.getuid():
            raise UntrustedFile(f"{path} belongs to uid {st.st_uid}, not to this user")
        if st.st_mode & 0o077:
            raise UntrustedFile(f"{path} has mode {stat.S_IMODE(st.st_mode):04o}: others could have read or written "
                                "it")
        return f.read(64 * 1024)


def write_private(directory: Path, name: str, text: str) -> Path:
    """``text`` into ``directory/name`` (0600) through a new temporary file renamed over it: a reader sees the old
    file or the new one, never a part; a link planted at ``name`` is replaced, its target untouched."""
    path = directory / name
    tmp = directory / f".{name}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def process_start(pid: int) -> str | None:
    """The start time (clock ticks since boot) of a live pid; None when it is gone or a zombie: a pid with another
    start time is another process that reused the number."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError, PermissionError):
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def process_cmdline(pid: int) -> list[str]:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    return []


@dataclass(frozen=True)
class OwnerRecord:
    """Who serves the store: the owner process, its ``redis-server`` child (pid and start time) and the port."""

    pid: int
    server_pid: int
    server_start: str
    port: int

    def server_alive(self) -> bool:
        return self.server_start != "" and process_start(self.server_pid) == self.server_start

    def write(self, directory: Path) -> None:
        write_private(directory, OWNER_FILE, json.dumps(asdict(self)) + "\n")


def read_owner(directory: Path) -> OwnerRecord | None:
    """The recorded owner, or None when absent, untrusted or malformed."""
    try:
        text = read_private(directory / OWNER_FILE)
        raw = json.loads(text) if text else None
        if not isinstance(raw, dict):
            return None
        return OwnerRecord(int(raw["pid"]), int(raw["server_pid"]), str(raw["server_start"]), int(raw["port"]))
    except (UntrustedFile, ValueError, KeyError, TypeError):
        return None
