"""Clean hand-over: a process holding a run attempt's sandbox is SIGKILLed while its command writes to the project
(as a worker killed mid-Bash); before the next attempt works on the project, nothing of the dead attempt writes
any more. Real sandboxes (bubblewrap, a private Docker daemon), real processes, stopped by pid.

* isolated — bubblewrap dies with its parent (``--die-with-parent``) and the command's pid namespace with it: the
  writes stop by themselves;
Then the new attempt asks about the dead attempt's command sessions (seed 000 §2.6, `tier2.store.commands`).

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
from tier2.sandbox import CommandSessions, SandboxOwner, UnknownSession, make_sandbox
from tier2.sandbox.docker import DockerEngine
from tier2.settings.sandbox import DockerConfig, SandboxLimits
from tier2.store.commands import CommandRecords
from tier2.store.keys import Keys
from tier2.store.run_store import resilient_client
from tier2.testing.cluster import wait_until

pytestmark = [pytest.mark.slow]

#: the executor of attempt 1: opens the sandbox, runs one command to its end, then starts one that appends to the
#: project forever; both journalled in Redis as a run's attempt would
_CHILD = """
import asyncio, sys
from pathlib import Path
from tier2.sandbox import CommandSessions, SandboxOwner, make_sandbox
from tier2.settings.sandbox import SandboxLimits
from tier2.store.commands import CommandRecords
from tier2.store.keys import Keys
from tier2.store.run_store import resilient_client

async def main():
    kind, project, home, ws, url, prefix = sys.argv[1:7]
    box = make_sandbox(kind, Path(project), Path(home), limits=SandboxLimits(pids=64, memory_mb=512),
                       workspaces=Path(ws), label="tier2-handover", owner=SandboxOwner(RUN, 1))
    await box.start()
    journal = CommandRecords(resilient_client(url), Keys(prefix=prefix), RUN, 1)
    sessions = CommandSessions(box, Path(home) / "commands", journal=journal)
    first = await sessions.start("echo done-first; exit 3", wait_s=30)
    loop = await sessions.start("while true; do echo tick | tee -a tick.txt; sleep 0.1; done", wait_s=0)
    print("ready", first.session_id, loop.session_id, flush=True)
    await asyncio.Event().wait()

RUN = "r-handover"
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


def _start_attempt_one(kind: str, tmp_path: Path, redis_url: str, prefix: str
                       ) -> tuple[subprocess.Popen[str], Path, list[str]]:
    project = tmp_path / "game"
    project.mkdir()
    child = subprocess.Popen([sys.executable, "-c", _CHILD, kind, str(project), str(tmp_path / "home"),
                              str(tmp_path / "ws"), redis_url, prefix], stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    assert child.stdout is not None
    line = child.stdout.readline().split()
    assert line[:1] == ["ready"], f"attempt 1's executor did not start (exit {child.poll()})"
    tick = project / "tick.txt"
    wait_until(lambda: _size(tick) > 0, 60, "attempt 1's command to write")
    return child, tick, line[1:]


def _kill(child: subprocess.Popen[str]) -> None:
    os.kill(child.pid, signal.SIGKILL)  # by pid: the worker dies without a word
    child.wait(timeout=30)
    if child.stdout is not None:
        child.stdout.close()


async def _attempt_two_asks(box, tmp_path: Path, redis_url: str, prefix: str, sids: list[str]) -> None:
    """§2.6 from the new attempt: the ended session's exit code and the output attempt 1 had not shown, the lost
    one said lost with what to do by its kind, an id nobody recorded unknown."""
    client = resilient_client(redis_url)
    try:
        await _ask(CommandSessions(box, tmp_path / "home" / "commands",
                                   journal=CommandRecords(client, Keys(prefix=prefix), "r-handover", 2)), sids)
    finally:
        await client.aclose()


async def _ask(sessions: CommandSessions, sids: list[str]) -> None:
    ended = await sessions.poll(sids[0])
    assert (ended.exit_code, ended.running) == (3, False)
    assert "done-first" not in ended.output and "were shown before" in ended.output  # attempt 1 saw it: no repeat
    assert "done-first" in sessions.page(sids[0])
    assert "ended in attempt 1 with exit code 3" in ended.text()
    lost = await sessions.poll(sids[1])
    assert not lost.running and lost.exit_code is None and "tick" in lost.output
    assert "lost: it was still running when attempt 1's worker stopped" in lost.text()
    assert "look at the project" in lost.text()                 # it wrote files (tee): not blindly re-run
    assert "tick" in sessions.page(sids[1])                      # its full log pages like a live one's
    with pytest.raises(UnknownSession):
        await sessions.poll("c9-ffff")
    await sessions.close()


@pytest.mark.redis
async def test_isolated_a_killed_attempts_command_stops_with_it(tmp_path: Path, docker_host: str | None,
                                                                redis_url: str) -> None:
    skip_unless_kind("isolated", docker_host)
    prefix = f"ho-{tmp_path.name}"
    child, tick, sids = _start_attempt_one("isolated", tmp_path, redis_url, prefix)
    assert _growing(tick)
    _kill(child)
    wait_until(lambda: _stopped(tick), 60, "the dead attempt's command to stop writing")
    box = make_sandbox("isolated", tick.parent, tmp_path / "home", limits=SandboxLimits(pids=64, memory_mb=512),
                       workspaces=tmp_path / "ws", owner=SandboxOwner("r-handover", 2))
    await box.start()
    try:
        await _attempt_two_asks(box, tmp_path, redis_url, prefix, sids)
    finally:
        await box.close()


@pytest.mark.redis
async def test_docker_the_next_attempt_removes_the_dead_attempts_container(tmp_path: Path, docker_host: str | None,
                                                                           redis_url: str) -> None:
    skip_unless_kind("docker", docker_host)
    prefix = f"ho-{tmp_path.name}"
    child, tick, sids = _start_attempt_one("docker", tmp_path, redis_url, prefix)
    _kill(child)
    engine = DockerEngine.shared(tmp_path / "ws" / ".docker", DockerConfig())
    assert [c.attempt for c in engine.run_containers("r-handover")] == [1]
    assert _growing(tick), "the container should outlive its killed process (what the hand-over is for)"
    box = make_sandbox("docker", tick.parent, tmp_path / "home", limits=SandboxLimits(pids=64, memory_mb=512),
                       workspaces=tmp_path / "ws", label="tier2-handover", owner=SandboxOwner("r-handover", 2))
    await box.start()
    try:
        assert _stopped(tick)                                  # nothing of attempt 1 writes any more
        assert [c.attempt for c in engine.run_containers("r-handover")] == [2]
        done = await box.exec(["/bin/sh", "-c", "echo second >> tick.txt"])
        assert done.code == 0 and tick.read_text().endswith("second\n")
        await _attempt_two_asks(box, tmp_path, redis_url, prefix, sids)
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
