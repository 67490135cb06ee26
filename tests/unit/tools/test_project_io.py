"""The agents' Read/Write/Edit on tier2's project backend (`tier2.tools.project_io`): a cancelled read closes its
file inside its own call, non-regular files are refused without blocking, writes replace what is at the name, and
an Edit's result is capped like a Write (issues #21 H1/H2, #29)."""

from __future__ import annotations

import asyncio
import gc
import os
import stat
import sys
import threading
import tracemalloc
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentscope.message import ToolResultState
from agentscope.tool import Edit, Read, ToolChunk, Write

from tier2.tools.project_io import TOOL_IO, TOOL_IO_THREADS, FileLimits, ProjectFiles, ProjectIOError

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="O_NOFOLLOW walk and FIFOs: Linux")


def _text(chunk: ToolChunk) -> str:
    return "".join(getattr(b, "text", "") for b in chunk.content)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    for i in range(40):
        (root / "src" / f"f{i}.js").write_text(f"// file {i}\n" + "x = 1;\n" * 20_000)
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("tenant B's secret\n")
    return out


@pytest.fixture
def unraisable() -> Iterator[list[Any]]:
    """Unraisable exceptions (an unclosed file found by the GC is one) caught while the test runs, tracemalloc on
    so a leak's report names where the file was opened."""
    caught: list[Any] = []
    hook, sys.unraisablehook = sys.unraisablehook, caught.append
    tracemalloc.start(10)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            yield caught
    finally:
        gc.collect()
        tracemalloc.stop()
        sys.unraisablehook = hook


async def test_a_read_cancelled_at_any_point_leaves_no_open_file(project: Path, unraisable: list[Any]) -> None:
    """Cancel 300 Reads at staggered points (before, during and after the open in the worker thread). With
    AgentScope's own backend this leaks a few `BufferedReader`s per run (the open finishes in a thread whose caller
    is gone); here each read opens, reads and closes inside one function, so nothing is left for the GC."""
    read = Read(backend=ProjectFiles(project))
    for i in range(300):
        task = asyncio.ensure_future(read.call(file_path=str(project / "src" / f"f{i % 40}.js")))
        for _ in range(i % 7):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    # the abandoned reads still run in the tool threads: once TOOL_IO_THREADS tasks queued after them meet at one
    # barrier, every thread is free of earlier work (the executor runs its queue in order), so they have all ended
    barrier, loop = threading.Barrier(TOOL_IO_THREADS), asyncio.get_running_loop()
    await asyncio.gather(*(loop.run_in_executor(TOOL_IO, barrier.wait, 60) for _ in range(TOOL_IO_THREADS)))
    gc.collect()
    leaks = [u for u in unraisable if isinstance(u.exc_value, ResourceWarning)]
    assert not leaks, [str(u.exc_value) for u in leaks]
    done = await read.call(file_path=str(project / "src" / "f1.js"), limit=1)
    assert _text(done).strip() == "1\t// file 1"


async def test_eight_parallel_reads_of_a_fifo_return_at_once(project: Path) -> None:
    """The audit's H1: a FIFO in the project and 8 parallel Reads blocked every thread of the default executor."""
    fifo = project / "pipe"
    os.mkfifo(fifo)
    read = Read(backend=ProjectFiles(project))
    results = await asyncio.wait_for(asyncio.gather(*(read.call(file_path=str(fifo)) for _ in range(8))), 30)
    for r in results:
        assert r.state == ToolResultState.ERROR and "FIFO" in _text(r), _text(r)


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
async def test_a_device_in_the_project_is_not_read(project: Path) -> None:
    os.mknod(project / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero: a read would never end
    r = await asyncio.wait_for(Read(backend=ProjectFiles(project)).call(file_path=str(project / "zero")), 30)
    assert r.state == ToolResultState.ERROR and "device" in _text(r)


async def test_links_never_lead_outside(project: Path, outside: Path) -> None:
    files = ProjectFiles(project)
    (project / "leak.txt").symlink_to(outside / "secret.txt")
    (project / "out").symlink_to(outside)
    for path in (project / "leak.txt", project / "out" / "secret.txt"):
        r = await Read(backend=files).call(file_path=str(path))
        assert r.state == ToolResultState.ERROR and "tenant B" not in _text(r)
        with pytest.raises(ProjectIOError, match="outside the project"):
            await files.write_file(str(path), b"overwritten")
    assert (outside / "secret.txt").read_text() == "tenant B's secret\n"


async def test_a_write_replaces_a_hard_link_instead_of_writing_through(project: Path, outside: Path) -> None:
    os.link(outside / "secret.txt", project / "src" / "linked.js")
    await ProjectFiles(project).write_file(str(project / "src" / "linked.js"), b"let a = 1;\n")
    assert (project / "src" / "linked.js").read_text() == "let a = 1;\n"
    assert (outside / "secret.txt").read_text() == "tenant B's secret\n"


async def test_a_write_keeps_no_set_id_bit(project: Path) -> None:
    target = project / "src" / "f0.js"
    target.chmod(0o6755)
    await ProjectFiles(project).write_file(str(target), b"x\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


async def test_write_creates_parents_and_refuses_past_the_file_cap(project: Path) -> None:
    files = ProjectFiles(project, FileLimits(max_file_bytes=1000))
    ok = await Write(backend=files).call(file_path=str(project / "src" / "new" / "deep" / "a.js"), content="a;\n")
    assert ok.state != ToolResultState.ERROR and (project / "src/new/deep/a.js").read_text() == "a;\n"
    with pytest.raises(ProjectIOError, match="1000-byte limit of one file"):
        await Write(backend=files).call(file_path=str(project / "src" / "big.js"), content="x" * 1001)
    assert not (project / "src" / "big.js").exists()
    assert not [p for p in (project / "src").iterdir() if p.name.endswith(".tier2-tmp")]


async def test_edit_replace_all_cannot_grow_a_file_past_the_cap(project: Path) -> None:
    """The audit's H2: ``replace_all`` turned a 100 KB file into 100 MB (the write cap checked only the argument)."""
    target = project / "src" / "grow.js"
    target.write_text("a" * 100_000)
    files = ProjectFiles(project, FileLimits(max_file_bytes=1_000_000))
    read, edit = Read(backend=files), Edit(backend=files)
    await read.call(file_path=str(target))
    r = await edit.call(file_path=str(target), old_string="a", new_string="b" * 1000, replace_all=True)
    assert r.state == ToolResultState.ERROR and "limit of one file" in _text(r), _text(r)
    assert target.stat().st_size == 100_000


async def test_the_project_total_is_capped(project: Path) -> None:
    used = sum(p.stat().st_size for p in project.rglob("*") if p.is_file())
    files = ProjectFiles(project, FileLimits(max_file_bytes=1_000_000, max_project_bytes=used + 500))
    await files.write_file(str(project / "small.txt"), b"y" * 400)
    with pytest.raises(ProjectIOError, match="over its .*-byte limit"):
        await files.write_file(str(project / "more.txt"), b"y" * 400)
    await files.write_file(str(project / "small.txt"), b"y" * 10)  # shrinking is always allowed
    await files.write_file(str(project / "more.txt"), b"y" * 300)  # and frees room


async def test_commands_other_than_mkdir_never_run(project: Path, tmp_path: Path) -> None:
    files = ProjectFiles(project)
    marker = tmp_path / "ran"
    result = await files.exec_shell(["touch", str(marker)])
    assert result.exit_code != 0 and not marker.exists()
    assert (await files.exec_shell(["mkdir", "-p", str(tmp_path / "elsewhere")])).exit_code != 0
    assert not (tmp_path / "elsewhere").exists()


def test_the_tool_executor_is_bounded() -> None:
    assert 1 <= TOOL_IO_THREADS <= 8
