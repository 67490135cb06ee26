"""The writer's file I/O, bound to one project: AgentScope's Read/Write/Edit run on this backend.

AgentScope's `LocalBackend` opens files through aiofiles in the event loop's default executor, follows every
symlink, opens FIFOs and devices (an ``open()`` on a FIFO blocks its thread forever) and writes in place. This
backend (`ProjectFiles`, an AgentScope `BackendBase`) is what the writer's file tools use instead:

* **bounded, own executor** — every file operation runs whole (open, read or write, close) in one function on
  `TOOL_IO`, a small thread pool of its own that HTTP routes never use. A file descriptor never outlives the
  function that opened it, so a cancelled or timed-out tool call leaks nothing: the caller stops waiting, the
  function still closes its file (issue #29);
* **regular files only** — a path is resolved (symlinks inside the project are followed as strings, then checked
  to stay inside), then opened through `tier2.hostio.ProjectDir` — component by component from a descriptor of the
  project root with ``O_NOFOLLOW`` (and ``O_NONBLOCK``: a FIFO never blocks); anything but a regular file with one
  name is refused with a reason;
* **writes replace, never write through** — `ProjectDir.write_bytes`: a temporary file in the target directory,
  then ``rename``: a symlink, FIFO, device or hard link at the name is replaced, not followed; set-id bits are
  never kept;
* **sizes capped** — one file's content (a Write's or an Edit's *result*: ``replace_all`` cannot grow a file past
  it) and the project's total bytes (tracked from a bounded walk plus every write's delta); reads are capped too.

Commands: AgentScope's Write runs ``mkdir -p <parent>`` through the backend; that is the only command this backend
runs (as safe directory creation, never a process); anything else is refused.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
import typing
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final, TypeVar

from agentscope.tool import BackendBase

from tier2.hostio import ProjectDir, UnsafePath

__all__ = ["FileLimits", "ProjectFiles", "ProjectIOError", "TOOL_IO", "run_tool_io", "project_bytes"]

T = TypeVar("T")

#: Threads for all writer file-tool I/O of this process (never the default executor HTTP routes use).
TOOL_IO_THREADS: Final = 4
TOOL_IO = ThreadPoolExecutor(max_workers=TOOL_IO_THREADS, thread_name_prefix="tier2-tool-io")

#: AgentScope's ExecResult, taken from the public BackendBase's own signature (the class is not re-exported).
_ExecResult: Any = typing.get_type_hints(BackendBase.exec_shell)["return"]

_WALK_ENTRY_CAP: Final = 200_000


class ProjectIOError(OSError):
    """A file operation refused or failed; the message is meant for the agent."""


@dataclass(frozen=True)
class FileLimits:
    max_file_bytes: int = 1_000_000  # one file's content after a Write or an Edit
    max_project_bytes: int = 200_000_000  # all regular files of the project
    max_read_bytes: int = 20_000_000  # one Read


async def run_tool_io(fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(*args)`` on the tool executor. A cancelled caller stops waiting; ``fn`` still runs to its end
    (and closes what it opened)."""
    return await asyncio.get_running_loop().run_in_executor(TOOL_IO, partial(fn, *args))


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device")):
        if test(mode):
            return name
    return "not a regular file"


def project_bytes(root: Path, cap: int = _WALK_ENTRY_CAP) -> int:
    """Bytes of the regular files under ``root`` (symlinks never followed; at most ``cap`` entries looked at)."""
    total, seen, stack = 0, 0, [str(root)]
    while stack and seen < cap:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    seen += 1
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return total


class ProjectFiles(BackendBase):
    """A `BackendBase` confined to one project directory (see the module docstring)."""

    def __init__(self, project: Path, limits: FileLimits | None = None) -> None:
        self.root = os.path.realpath(project)
        self.dir = ProjectDir(self.root)  # every path is opened through tier2's one host-side file helper
        self.limits = limits or FileLimits()
        self._used: int | None = None  # the project's bytes, measured on first write
        self._lock = threading.Lock()

    # --- paths -------------------------------------------------------------------------------------------------

    def _rel(self, path: str) -> str:
        """``path`` (absolute; links inside the project resolved as strings) relative to the project root."""
        if not isinstance(path, str) or not os.path.isabs(path) or "\x00" in path:
            raise ProjectIOError(f"{path!r} is not an absolute path")
        real = os.path.realpath(path)
        if real == self.root:
            return ""
        if not real.startswith(self.root + os.sep):
            raise ProjectIOError(f"{path} is outside the project directory {self.root}")
        return real[len(self.root) + 1:]

    def _lstat(self, path: str) -> os.stat_result | None:
        try:
            return self.dir.lstat(self._rel(path))
        except OSError:
            return None

    # --- whole operations (each runs on the tool executor) -----------------------------------------------------

    def _read(self, path: str) -> bytes:
        rel = self._rel(path)
        if not rel:
            raise ProjectIOError(f"{path} is a directory, not a file")
        try:
            return self.dir.read_bytes(rel, max_bytes=self.limits.max_read_bytes)
        except UnsafePath as exc:
            raise ProjectIOError(f"cannot read {path}: {exc}") from None

    def _write(self, path: str, data: bytes) -> None:
        rel = self._rel(path)
        if not rel:
            raise ProjectIOError(f"{path} names the project directory")
        if len(data) > self.limits.max_file_bytes:
            raise ProjectIOError(f"the new content of {path} would be {len(data)} bytes, over the "
                                 f"{self.limits.max_file_bytes}-byte limit of one file")
        old = self.dir.lstat(rel)
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise ProjectIOError(f"{path} is a directory")
        regular = old is not None and stat.S_ISREG(old.st_mode)
        before = old.st_size if old is not None and regular else 0
        with self._lock:
            if self._used is None:
                self._used = project_bytes(Path(self.root))
            after = self._used - before + len(data)
            if len(data) > before and after > self.limits.max_project_bytes:
                raise ProjectIOError(f"the project would hold {after} bytes, over its "
                                     f"{self.limits.max_project_bytes}-byte limit")
            self._used = after
        mode = stat.S_IMODE(old.st_mode) & 0o777 if old is not None and regular else 0o644  # never a set-id bit
        try:
            self.dir.write_bytes(rel, data, mode=mode)
        except UnsafePath as exc:
            raise ProjectIOError(f"cannot write {path}: {exc}") from None

    def _mkdirs(self, path: str) -> None:
        try:
            self.dir.mkdirs(self._rel(path))
        except UnsafePath as exc:
            raise ProjectIOError(str(exc)) from None

    # --- BackendBase -------------------------------------------------------------------------------------------

    async def exec_shell(self, command: list[str], *, cwd: str | None = None,
                         timeout: float | None = None) -> Any:
        if len(command) == 3 and command[:2] == ["mkdir", "-p"]:
            try:
                await run_tool_io(self._mkdirs, command[2])
            except OSError as exc:
                return _ExecResult(exit_code=1, stdout=b"", stderr=str(exc).encode())
            return _ExecResult(exit_code=0, stdout=b"", stderr=b"")
        return _ExecResult(exit_code=126, stdout=b"", stderr=b"the writer's file tools run no commands")

    async def read_file(self, path: str) -> bytes:
        return await run_tool_io(self._read, path)

    async def write_file(self, path: str, data: bytes) -> None:
        await run_tool_io(self._write, path, data)

    async def file_exists(self, path: str) -> bool:
        return await run_tool_io(self._lstat, path) is not None

    async def is_dir(self, path: str) -> bool:
        st = await run_tool_io(self._lstat, path)
        return st is not None and stat.S_ISDIR(st.st_mode)

    async def stat_mtime(self, path: str) -> float | None:
        st = await run_tool_io(self._lstat, path)
        return st.st_mtime if st is not None else None

    async def list_dir(self, path: str, *, recursive: bool = False) -> list[str]:
        raise ProjectIOError("listing is the Glob tool's job")

    async def delete_path(self, path: str) -> None:
        raise ProjectIOError("the writer's file tools delete nothing")
