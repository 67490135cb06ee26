"""Clean hand-over: a process holding a run attempt's sandbox is SIGKILLed while its command writes to the project
(as a worker killed mid-Bash); before the next attempt works on the project, nothing of the dead attempt writes
any more. Real sandboxes (bubblewrap, a private Docker daemon), real processes, stopped by pid.

* isolated — bubblewrap dies with its parent (``--die-with-parent``) and the command's pid namespace with it: the
  writes stop by themselves;
* docker — the container outlives the killed process (``Up``, the project mounted read-write: the writes go on);
  the next attempt's sandbox removes it before it starts its own, and a worker's start-up sweep removes the
  containers no live attempt owns (`tier2.runs.process.handover`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sandbox.conftest import skip_unless_kind
from tier2.sandbox import SandboxOwner, make_sandbox
from tier2.sandbox.docker import DockerEngine
from tier2.settings.sandbox import DockerConfig, SandboxLimits
from tier2.testing.cluster import wait_until

pytestmark = [pytest.mark.slow]

#: the executor of attempt 1: opens the sandbox, starts a command session that appends to the project forever
_CHILD = """
import asyncio, sys
from pathlib import Path
from tier2.sandbox import CommandSessions, SandboxOwner, make_sandbox
from tier2.settings.sandbox import SandboxLimits

async def main():
    kind, project, home, ws = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
    box = make_sandbox(kind, project, home, limits=SandboxLimits(pids=64, memory_mb=512), workspaces=ws,
                       label="tier2-handover", owner=SandboxOwner("r-handover", 1))
    await box.start()
    sessions = CommandSessions(box, home / "commands")
    await sessions.start("while true; do echo tick >> tick.txt; sleep 0.1; done", wait_s=0)
    print("ready", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _growing(path: Path) -> bool:
    before = _size(path)
    time.sleep(1.0)
    return _size(path) > before


def _stopped(path: Path) -> bool:
    """Two successive seconds without a write (a command killed mid-write may land one last line)."""
    return not _growing(path) and not _growing(path)


def _start_attempt_one(kind: str, tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    project = tmp_path / "game"
    project.mkdir()
    child = subprocess.Popen([sys.executable, "-c", _CHILD, kind, str(project), str(tmp_path / "home1"),
                              str(tmp_path / "ws")], stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == "ready", f"attempt 1's executor did not start (exit {child.poll()})"
    tick = project / "tick.txt"
    wait_until(lambda: _size(tick) > 0, 60, "attempt 1's command to write")
    return child, tick


def _kill(child: subprocess.Popen[str]) -> None:
    os.kill(child.pid, signal.SIGKILL)  # by pid: the worker dies without a word
    child.wait(timeout=30)
    if child.stdout is not None:
        child.stdout.close()


def test_isolated_a_killed_attempts_command_stops_with_it(tmp_path: Path, docker_host: str | None) -> None:
    skip_unless_kind("isolated", docker_host)
    child, tick = _start_attempt_one("isolated", tmp_path)
    assert _growing(tick)
    _kill(child)
    wait_until(lambda: _stopped(tick), 60, "the dead attempt's command to stop writing")


async def test_docker_the_next_attempt_removes_the_dead_attempts_container(tmp_path: Path,
                                                                           docker_host: str | None) -> None:
    skip_unless_kind("docker", docker_host)
    child, tick = _start_attempt_one("docker", tmp_path)
    _kill(child)
    engine = DockerEngine.shared(tmp_path / "ws" / ".docker", DockerConfig())
    assert [c.attempt for c in engine.run_containers("r-handover")] == [1]
    assert _growing(tick), "the container should outlive its killed process (what the hand-over is for)"
    box = make_sandbox("docker", tick.parent, tmp_path / "home2", limits=SandboxLimits(pids=64, memory_mb=512),
                       workspaces=tmp_path / "ws", label="tier2-handover", owner=SandboxOwner("r-handover", 2))
    await box.start()
    try:
        assert _stopped(tick)                                  # nothing of attempt 1 writes any more
        assert [c.attempt for c in engine.run_containers("r-handover")] == [2]
        done = await box.exec(["/bin/sh", "-c", "echo second >> tick.txt"])
        assert done.code == 0 and tick.read_text().endswith("second\n")
    finally:
        await box.close()
    assert engine.run_containers("r-handover") == []


@pytest.mark.redis
async def test_a_worker_start_sweeps_the_containers_no_live_attempt_owns(tmp_path: Path, docker_host: str | None,
                                                                         runtime) -> None:
    skip_unless_kind("docker", docker_host)
    from tier2.runs.process.handover import sweep_run_containers

    store, k = runtime.store, runtime.store.keys
    runs = {"r-ended": "delivered", "r-newer": "running", "r-live": "running", "r-no-lease": "running"}
    for run_id, status in runs.items():
        await store.accept_run(run_id, {"status": status}, project_id=f"p-{run_id}", dispatch=False)
    await store.r.set(k.run_fence("r-newer"), 2)
    await store.r.set(k.run_lease("r-newer"), "w2|2")
    await store.r.set(k.run_fence("r-live"), 1)
    await store.r.set(k.run_lease("r-live"), "w1|1")
    await store.r.set(k.run_fence("r-no-lease"), 1)
    boxes = [make_sandbox("docker", tmp_path, tmp_path / "home-other", workspaces=runtime.settings.workspaces,
                          limits=SandboxLimits(pids=64, memory_mb=256), owner=SandboxOwner("r-other-store", 1, "x"))]
    await boxes[0].start()
    for run_id in [*runs, "r-unknown"]:
        project = tmp_path / run_id
        project.mkdir()
        box = make_sandbox("docker", project, tmp_path / f"home-{run_id}", workspaces=runtime.settings.workspaces,
                           limits=SandboxLimits(pids=64, memory_mb=256), owner=SandboxOwner(run_id, 1, k.prefix))
        await box.start()
        boxes.append(box)
    engine = DockerEngine.shared(runtime.settings.workspaces / ".docker", DockerConfig())
    try:
        removed = await sweep_run_containers(runtime)
        left = {c.run_id for c in engine.run_containers(store=k.prefix)}
        assert left == {"r-live"}                        # only the attempt that holds its run's lease keeps its own
        assert len(removed) == 4
        assert [c.attempt for c in engine.run_containers("r-other-store")] == [1]  # another store's: untouched
        assert await sweep_run_containers(runtime) == []  # nothing more to do
    finally:
        for box in boxes:
            await box.close()
