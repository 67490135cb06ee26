"""Host-side file access to a project: never through a link the sandbox could have planted.

**The rule: the host never follows a path the sandbox could have changed.** In the ``isolated`` and ``docker``
workspace kinds the model's commands run as a (mapped) root that can replace any name in the project — a file
tier2 writes later (``delivery.json``), a directory it creates (``.tier2``, ``docs/design``) — with a symlink, a
FIFO, a device or a hard link. tier2 runs as root on the host: a plain ``open()``/``write_text``/``mkdir(parents=
True)``/``copyfile`` would follow the link and write, create or read anywhere on the host.

So every host-side read, write, mkdir, copy, listing and removal of a project path goes through `ProjectDir`:

* every component is opened relative to the descriptor of its parent, starting at the real project root, with
  ``O_NOFOLLOW`` (and ``O_DIRECTORY`` for directories) — ``os.open(name, ..., dir_fd=parent)``, never a path
  string the kernel would resolve through a link;
* **writes** go to a temp file created (``O_EXCL|O_NOFOLLOW``) in the target's directory, then
  ``os.rename(tmp, name, src_dir_fd=d, dst_dir_fd=d)``: a symlink, FIFO, device or hard link at the name is
  *replaced*, never written through;
* **reads** open with ``O_NOFOLLOW|O_NONBLOCK`` (a FIFO never blocks the host) and refuse anything but a regular
  file with one name (``fstat``: ``S_ISREG``, ``st_nlink == 1``), up to a size cap;
* **directories**: a symlink or non-directory where tier2 needs one of its own directories (`TIER2_DIRS`:
  ``.tier2`` and everything under it, ``docs/design``, ``design``, ``data``) is removed and replaced by a real
  directory; anywhere else it is refused (`UnsafePath`, a message for people).

What stays outside this module, because the sandbox cannot reach it: the workspaces root and the directories tier2
keeps beside the projects (``agent-homes/``, ``sandbox-homes``, ``validations/``, upload staging, the validation
cache, the docs index), and a project directory itself (its parent is tier2's; a sandbox mounts the project at its
path and cannot rename its own mount point). Paths tier2 handles as absolute host paths under a project's
``.tier2/`` (validation reports and screenshots) go through `host_file`, which anchors them at the project root.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

__all__ = ["DEFAULT_MAX_READ", "TIER2_DIRS", "ProjectDir", "UnsafePath", "ensure_dir", "host_file", "is_host_file",
           "read_file", "write_file"]

#: directories tier2 itself creates in a project: whatever the sandbox put at these names is replaced
TIER2_DIRS: tuple[tuple[str, ...], ...] = ((".tier2",), ("docs", "design"), ("design",), ("data",))
#: top-level files tier2 writes: a directory the sandbox made at one of these names is removed first
TIER2_FILES = frozenset({"delivery.json", "screenshot.png"})
DEFAULT_MAX_READ = 16_000_000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafePath(OSError):
    """A project path tier2 will not use: a link, FIFO, device or other non-regular file where a file or directory
    was expected, a path leaving the project, a file over the size cap. The message is meant for people."""


def _owned(parts: tuple[str, ...]) -> bool:
    """Whether ``parts`` is one of tier2's own directories, under one, or on the way to one."""
    if parts and parts[0] == ".tier2":
        return True
    return any(parts[:len(d)] == d or d[:len(parts)] == parts for d in TIER2_DIRS)


def _what(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def _lstat(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _rmtree_at(name: str, dir_fd: int) -> None:
    """Remove ``name`` (a file, link or whole tree) in ``dir_fd`` without following any link."""
    st = _lstat(name, dir_fd)
    if st is None:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=dir_fd)
        return
    fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    try:
        for child in os.listdir(fd):
            _rmtree_at(child, fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dir_fd)


class ProjectDir:
    """A project directory, accessed from the host without following anything the sandbox could have planted.

    Paths are project-relative (``"delivery.json"``, ``".tier2/reports/final/report.json"``); an absolute path
    inside the project is accepted too. ``..``, empty names and NUL are refused."""

    def __init__(self, root: Path | str) -> None:
        given = os.path.normpath(os.path.abspath(root))
        self.root = Path(os.path.realpath(root))
        #: absolute paths are accepted under the real root or the root as given (tier2's own path to it)
        self._bases = tuple(dict.fromkeys((str(self.root), given)))

    def __repr__(self) -> str:
        return f"ProjectDir({str(self.root)!r})"

    # --- paths ---------------------------------------------------------------------------------------------------

    def parts(self, rel: str | os.PathLike[str]) -> tuple[str, ...]:
        """``rel`` as checked components (`UnsafePath` for a path that leaves the project)."""
        raw = os.fspath(rel)
        if "\x00" in raw:
            raise UnsafePath(f"{raw!r}: a path may not contain NUL")
        if os.path.isabs(raw):
            norm = os.path.normpath(raw)
            base = next((b for b in self._bases if norm == b or norm.startswith(b.rstrip(os.sep) + os.sep)), None)
            if base is None:
                raise UnsafePath(f"{raw} is outside the project {self.root}")
            raw = os.path.relpath(norm, base)
        parts = tuple(p for p in PurePosixPath(raw).parts if p != ".")
        if any(p in ("..", "/") or not p for p in parts):
            raise UnsafePath(f"{raw!r} leaves the project {self.root}")
        return parts

    def path(self, rel: str | os.PathLike[str] = "") -> Path:
        """The host path of ``rel`` (for messages and records: never open it by this path)."""
        return self.root.joinpath(*self.parts(rel))

    def rel(self, rel: str | os.PathLike[str]) -> str:
        return "/".join(self.parts(rel))

    # --- directory descriptors -----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _dir(self, parts: tuple[str, ...], *, create: bool = False) -> Iterator[int]:
        """A descriptor of the directory ``parts`` (the root for ``()``), walked one component at a time without
        following links. ``create``: make missing directories (and replace a link or non-directory at a tier2
        directory, `TIER2_DIRS`). Without ``create``, a missing or non-directory component is `FileNotFoundError` /
        `UnsafePath`."""
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for i, name in enumerate(parts):
                parent, fd = fd, -1
                fd = self._step(parent, name, parts[:i + 1], create)  # (closes parent, whatever happens)
            yield fd
        finally:
            if fd >= 0:
                os.close(fd)

    def _step(self, parent: int, name: str, prefix: tuple[str, ...], create: bool) -> int:
        """Open ``name`` in ``parent`` as a directory (closing ``parent``); see `_dir`."""
        try:
            try:
                return os.open(name, _DIR_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):  # (made meanwhile: opened below, checked again)
                    os.mkdir(name, 0o755, dir_fd=parent)
                return os.open(name, _DIR_FLAGS, dir_fd=parent)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                st = _lstat(name, parent)
                where = "/".join(prefix)
                if not create or not _owned(prefix) or st is None:
                    kind = _what(st.st_mode) if st is not None else "missing"
                    raise UnsafePath(f"{where} is {kind}, not a directory: tier2 does not follow it") from None
                os.unlink(name, dir_fd=parent)  # a link/file/FIFO at tier2's own directory: replaced
                os.mkdir(name, 0o755, dir_fd=parent)
                return os.open(name, _DIR_FLAGS, dir_fd=parent)
        finally:
            os.close(parent)

    # --- reading -------------------------------------------------------------------------------------------------

    def open_read(self, rel: str | os.PathLike[str], *, max_bytes: int | None = DEFAULT_MAX_READ) -> BinaryIO:
        """The regular file ``rel`` opened for reading (the caller closes it): `FileNotFoundError` when it is not
        there, `UnsafePath` for a link, FIFO, device, directory, a file with another name (hard link) or over
        ``max_bytes``."""
        parts = self.parts(rel)
        if not parts:
            raise UnsafePath(f"the project directory {self.root} is not a file")
        with self._dir(parts[:-1]) as d:
            try:
                fd = os.open(parts[-1], _READ_FLAGS, dir_fd=d)
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                raise UnsafePath(f"{'/'.join(parts)} is a symbolic link: tier2 does not follow it") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise UnsafePath(f"{'/'.join(parts)} is {_what(st.st_mode)}, not a regular file")
            if st.st_nlink != 1:
                raise UnsafePath(f"{'/'.join(parts)} has {st.st_nlink} names (a hard link): tier2 does not read it")
            if max_bytes is not None and st.st_size > max_bytes:
                raise UnsafePath(f"{'/'.join(parts)} is {st.st_size} bytes, over the limit of {max_bytes}")
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def read_bytes(self, rel: str | os.PathLike[str], *, max_bytes: int | None = DEFAULT_MAX_READ) -> bytes:
        with self.open_read(rel, max_bytes=max_bytes) as fh:
            data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
        if max_bytes is not None and len(data) > max_bytes:  # grew after the check
            raise UnsafePath(f"{self.rel(rel)} is over the limit of {max_bytes} bytes")
        return data

    def read_text(self, rel: str | os.PathLike[str], *, max_bytes: int | None = DEFAULT_MAX_READ,
                  errors: str = "strict") -> str:
        return self.read_bytes(rel, max_bytes=max_bytes).decode("utf-8", errors)

    def lstat(self, rel: str | os.PathLike[str]) -> os.stat_result | None:
        """``rel``'s own status (a link is a link), or None when it — or a directory on the way — is missing or
        not a real directory."""
        parts = self.parts(rel)
        if not parts:
            return os.stat(self.root)
        try:
            with self._dir(parts[:-1]) as d:
                return _lstat(parts[-1], d)
        except (FileNotFoundError, UnsafePath):
            return None

    def is_file(self, rel: str | os.PathLike[str]) -> bool:
        """A regular file with one name (what `read_bytes` reads) reached through real directories."""
        st = self.lstat(rel)
        return st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink == 1

    def is_dir(self, rel: str | os.PathLike[str]) -> bool:
        st = self.lstat(rel)
        return st is not None and stat.S_ISDIR(st.st_mode)

    def listdir(self, rel: str | os.PathLike[str] = "") -> list[tuple[str, os.stat_result]]:
        """The entries of the real directory ``rel`` with their own status, sorted by name ([] when it is missing
        or not a real directory)."""
        try:
            with self._dir(self.parts(rel)) as d:
                out = [(n, st) for n in os.listdir(d) if (st := _lstat(n, d)) is not None]
        except (FileNotFoundError, UnsafePath, NotADirectoryError):
            return []
        return sorted(out, key=lambda e: e[0])

    def walk(self, rel: str | os.PathLike[str] = "") -> Iterator[tuple[str, os.stat_result]]:
        """Every regular file under the real directory ``rel`` (project-relative path, status), depth first in name
        order; links are never entered."""
        base = self.parts(rel)
        for name, st in self.listdir("/".join(base)):
            if stat.S_ISDIR(st.st_mode):
                yield from self.walk(PurePosixPath(*base, name))
            elif stat.S_ISREG(st.st_mode):
                yield "/".join((*base, name)), st

    def text_files(self, rel: str | os.PathLike[str] = "", *, suffixes: tuple[str, ...] | None = None,
                   max_bytes: int = DEFAULT_MAX_READ, skip: frozenset[str] = frozenset(),
                   ) -> Iterator[tuple[str, str]]:
        """(path, text) of the regular files under ``rel`` (`walk` order) whose name ends with one of ``suffixes``
        (None: any), at most ``max_bytes`` each, outside directories named in ``skip``; undecodable bytes are
        replaced, a file that changed into something else meanwhile is left out."""
        for path, st in self.walk(rel):
            if (suffixes is not None and not path.endswith(suffixes)) or st.st_size > max_bytes \
                    or skip.intersection(path.split("/")[:-1]):
                continue
            try:
                yield path, self.read_text(path, max_bytes=max_bytes, errors="replace")
            except OSError:
                continue

    # --- writing -------------------------------------------------------------------------------------------------

    def mkdirs(self, rel: str | os.PathLike[str]) -> Path:
        """Make ``rel`` and its parents real directories (see `_dir` for what a link at one of them does)."""
        with self._dir(self.parts(rel), create=True):
            pass
        return self.path(rel)

    def write_bytes(self, rel: str | os.PathLike[str], data: bytes, *, mode: int = 0o644) -> Path:
        """Write ``data`` to ``rel`` by replacing the name (temp file + rename in the same directory)."""
        parts = self.parts(rel)
        if not parts:
            raise UnsafePath(f"the project directory {self.root} is not a file")
        name = parts[-1]
        with self._dir(parts[:-1], create=True) as d:
            tmp = f".{name[:100]}.{uuid.uuid4().hex[:12]}.tier2-tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=d)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    os.fchmod(fh.fileno(), mode)
                try:
                    os.rename(tmp, name, src_dir_fd=d, dst_dir_fd=d)
                except OSError as exc:
                    if exc.errno not in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                        raise
                    if not (_owned(parts) or (len(parts) == 1 and name in TIER2_FILES)):
                        raise UnsafePath(f"{'/'.join(parts)} is a directory: tier2 does not replace it") from None
                    _rmtree_at(name, d)  # a directory the sandbox made at one of tier2's file names
                    os.rename(tmp, name, src_dir_fd=d, dst_dir_fd=d)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=d)
                raise
        return self.path(rel)

    def write_text(self, rel: str | os.PathLike[str], text: str, *, mode: int = 0o644) -> Path:
        return self.write_bytes(rel, text.encode("utf-8"), mode=mode)

    def copy_in(self, src: Path, rel: str | os.PathLike[str], *, max_bytes: int | None = DEFAULT_MAX_READ) -> Path:
        """Copy the host file ``src`` (read with `read_file`: no link followed) to ``rel``."""
        return self.write_bytes(rel, read_file(src, max_bytes=max_bytes))

    def chmod(self, rel: str | os.PathLike[str], mode: int) -> None:
        """Set the mode of the regular file ``rel`` (never of a link's target)."""
        with self.open_read(rel, max_bytes=None) as fh:
            os.fchmod(fh.fileno(), mode)

    def readlink(self, rel: str | os.PathLike[str]) -> str | None:
        """The target of the symbolic link ``rel`` (never followed), None when it is not a link."""
        parts = self.parts(rel)
        try:
            with self._dir(parts[:-1]) as d:
                return os.readlink(parts[-1], dir_fd=d)
        except (OSError, IndexError):
            return None

    def symlink(self, rel: str | os.PathLike[str], target: str) -> Path:
        """Make ``rel`` a symbolic link to ``target`` (stored as is: tier2 never follows it); the name must be free."""
        parts = self.parts(rel)
        if not parts:
            raise UnsafePath("the project directory cannot be a link")
        with self._dir(parts[:-1], create=True) as d:
            os.symlink(target, parts[-1], dir_fd=d)
        return self.path(rel)

    def remove(self, rel: str | os.PathLike[str]) -> bool:
        """Remove ``rel`` (a file, a link itself, or a whole tree, never following a link); False if missing."""
        parts = self.parts(rel)
        if not parts:
            raise UnsafePath("tier2 does not remove a project directory through ProjectDir")
        try:
            with self._dir(parts[:-1]) as d:
                if _lstat(parts[-1], d) is None:
                    return False
                _rmtree_at(parts[-1], d)
                return True
        except FileNotFoundError:
            return False


def host_file(path: Path | str) -> tuple[ProjectDir, str]:
    """The anchor and relative path for an absolute host path tier2 handles by name: a path under a project's
    ``.tier2/`` is walked from the project root (the part before ``.tier2``); any other path from its parent
    directory (tier2's own, outside every sandbox)."""
    p = PurePosixPath(os.path.normpath(os.path.abspath(path)))
    if ".tier2" in p.parts:
        i = p.parts.index(".tier2")
        return ProjectDir(PurePosixPath(*p.parts[:i]).as_posix()), PurePosixPath(*p.parts[i:]).as_posix()
    return ProjectDir(p.parent.as_posix()), p.name


def is_host_file(path: Path | str) -> bool:
    """`ProjectDir.is_file` of an absolute host path (anchored by `host_file`)."""
    anchor, rel = host_file(path)
    return anchor.is_file(rel)


def ensure_dir(path: Path | str) -> Path:
    """`ProjectDir.mkdirs` of an absolute host path under a project's ``.tier2/``; any other path (tier2's own) is
    made with its parents as usual."""
    anchor, rel = host_file(path)
    if rel.split("/", 1)[0] == ".tier2":
        return anchor.mkdirs(rel)
    Path(path).mkdir(parents=True, exist_ok=True)
    return Path(path)


def read_file(path: Path | str, *, max_bytes: int | None = DEFAULT_MAX_READ) -> bytes:
    """`ProjectDir.read_bytes` of an absolute host path (anchored by `host_file`)."""
    anchor, rel = host_file(path)
    return anchor.read_bytes(rel, max_bytes=max_bytes)


def write_file(path: Path | str, data: bytes | str) -> Path:
    """`ProjectDir.write_bytes` of an absolute host path (anchored by `host_file`; a parent outside every project's
    ``.tier2/`` is tier2's own and made as usual)."""
    anchor, rel = host_file(path)
    if rel.split("/", 1)[0] != ".tier2":
        anchor.root.mkdir(parents=True, exist_ok=True)
    return anchor.write_bytes(rel, data.encode("utf-8") if isinstance(data, str) else data)
