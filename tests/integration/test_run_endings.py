"""Every way a run ends goes through the one fenced `finish_run`: the terminal status (with ``finished_at``, which
only it writes), exactly one ``run_finished`` event and the released project marker, written together.

Real parts (Redis, pack toolchain, Chromium where validation runs); where a path needs a crash or a limit, the
phase raises it.
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path
from typing import Any

import pytest

import tier2.runs.loop.session as session_mod
import tier2.runs.process.owner as owner_mod
import tier2.runs.process.worker as worker_mod
from tier2.errors import RunLimitReached
from tier2.runs import RunRequest, Runtime, execute_run
from tier2.runs.loop.phases.implement import ImplementPhase
from tier2.runs.process.owner import sweep_orphans
from tier2.runs.process.worker import Worker, ensure_group
from tier2.store.finish import finish_run

pytestmark = [pytest.mark.redis]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


@pytest.fixture
def finishes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str]]:
    """(caller module, run id, status) of every finish_run call."""
    calls: list[tuple[str, str, str]] = []
    for mod in (session_mod, worker_mod, owner_mod):
        async def spy(store: Any, run_id: str, end: Any, fence: Any = None, _m: str = mod.__name__) -> Any:
            calls.append((_m.rsplit(".", 1)[1], run_id, end.status))
            return await finish_run(store, run_id, end, fence)
        monkeypatch.setattr(mod, "finish_run", spy)
    return calls


async def _ended_through_finish(rt: Runtime, run_id: str, status: str) -> dict[str, Any]:
    record = await rt.store.get_run(run_id)
    assert record is not None and record["status"] == status, record
    assert record.get("finished_at"), "the terminal record was not written by finish_run"
    events = [e for _, e in await rt.store.read_events(run_id)]
    assert sum(e.type == "run_finished" for e in events) == 1 and events[-1].type == "run_finished"
    assert events[-1].status == status and events[-1].stop_reason == record["stop_reason"]  # type: ignore[union-attr]
    assert await rt.store.project_writer(record["project_id"]) is None
    return record


@pytest.mark.browser  # validates the delivered game in Chromium
async def test_a_delivered_run(runtime: Runtime, tmp_path: Path, finishes: list) -> None:
    out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g"))
    assert out.status == "delivered"
    record = await _ended_through_finish(runtime, out.run_id, "delivered")
    assert record["delivery"]["verified"] and record["timings_ms"]["total"] > 0 and record["usage"]["model_calls"]
    assert finishes == [("session", out.run_id, "delivered")]


async def test_a_crashing_run_ends_failed(runtime: Runtime, tmp_path: Path, finishes: list,
                                          monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Issue #21 (f): the exception's text (here a server path and a host, as an OSError or a provider's answer
    would carry) stays in the server log; the stop reason is a fixed code and sentence."""
    async def crash(self: ImplementPhase, session: Any, inp: Any) -> Any:
        raise RuntimeError("the phase blew up at /srv/secret/path on db.internal:5432")

    monkeypatch.setattr(ImplementPhase, "run", crash)
    with caplog.at_level("ERROR", logger="tier2.runs.loop.session"):
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g"))
    assert out.status == "failed"
    assert out.stop_reason == "internal_error: the run crashed (RuntimeError); the details are in the server log"
    record = await _ended_through_finish(runtime, out.run_id, "failed")
    assert "blew up" not in record["stop_reason"] and "blew up" not in str(out.delivery)
    assert any("blew up at /srv/secret/path" in r.getMessage() + str(r.exc_info) for r in caplog.records)
    assert finishes == [("session", out.run_id, "failed")]


async def test_a_cancelled_run_ends_stopped(runtime: Runtime, tmp_path: Path, finishes: list) -> None:
    cancel = asyncio.Event()
    cancel.set()
    out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", cancel=cancel))
    assert out.status == "stopped" and out.stop_reason == "cancelled by request"
    await _ended_through_finish(runtime, out.run_id, "stopped")
    assert finishes == [("session", out.run_id, "stopped")]


async def test_a_budget_stop(runtime: Runtime, tmp_path: Path, finishes: list) -> None:
    out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g",
                                                options={"budget": {"tokens": 10}}))
    assert out.status == "stopped" and out.stop_reason.startswith("budget:")
    await _ended_through_finish(runtime, out.run_id, "stopped")
    assert finishes == [("session", out.run_id, "stopped")]


async def test_a_breaker_stop(runtime: Runtime, tmp_path: Path, finishes: list,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    async def stuck(self: ImplementPhase, session: Any, inp: Any) -> Any:
        raise RunLimitReached("stuck", "same action+observation repeated 4x: Read data/theme.json")

    monkeypatch.setattr(ImplementPhase, "run", stuck)
    out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g"))
    assert out.status == "stopped" and out.stop_reason.startswith("stuck: same action")
    await _ended_through_finish(runtime, out.run_id, "stopped")
    assert finishes == [("session", out.run_id, "stopped")]


async def test_the_orphan_sweep(runtime: Runtime, finishes: list) -> None:
    dead = {"host": socket.gethostname(), "pid": 2**22 + 7, "start": "1"}  # no such process
    live = {"host": socket.gethostname(), "pid": os.getpid(), "start": owner_mod._start_ticks(os.getpid())}
    for run_id, owner in (("r-orphan", dead), ("r-alive", live)):
        await runtime.store.accept_run(run_id, {"status": "running", "project_id": f"p-{run_id}", "owner": owner},
                                       project_id=f"p-{run_id}", dispatch=False)
    assert await sweep_orphans(runtime.store) == ["r-orphan"]
    record = await _ended_through_finish(runtime, "r-orphan", "failed")
    assert "died before the run ended" in record["stop_reason"]
    assert (await runtime.store.get_run("r-alive"))["status"] == "running"  # type: ignore[index]
    assert finishes == [("owner", "r-orphan", "failed")]
    assert await sweep_orphans(runtime.store) == []                           # a second sweep: nothing to do


async def _accept(rt: Runtime, run_id: str, tmp_path: Path) -> None:
    project_id = f"game-{run_id[2:]}"
    got = await rt.store.accept_run(run_id, {
        "status": "queued", "phase": "setup", "brief": POTION, "project_id": project_id, "tenant": "local",
        "model_route": None, "thread_id": None, "dispatched": True, "project_dir": str(tmp_path / project_id),
        "source_dir": None, "continues_thread": False, "options": {}}, project_id=project_id, dispatch=True)
    assert got.outcome == "created"


async def _work_until_terminal(rt: Runtime, run_id: str, timeout_s: float = 120) -> None:
    await ensure_group(rt)
    stop = asyncio.Event()
    task = asyncio.create_task(Worker(rt, "w-test", block_ms=100).serve(stop))
    try:
        for _ in range(int(timeout_s * 10)):
            if ((await rt.store.get_run(run_id)) or {}).get("status") in ("delivered", "failed", "stopped"):
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"run {run_id} did not end")
    finally:
        stop.set()
        await task


async def test_a_worker_that_gives_up_after_max_attempts(runtime: Runtime, tmp_path: Path, finishes: list) -> None:
    await _accept(runtime, "r-giveup", tmp_path)
    max_attempts = runtime.policies.snapshot().durability.max_attempts
    await runtime.store.r.set(runtime.store.keys.run_fence("r-giveup"), max_attempts)  # every attempt died
    await _work_until_terminal(runtime, "r-giveup")
    record = await _ended_through_finish(runtime, "r-giveup", "failed")
    assert record["stop_reason"].startswith(f"gave up after {max_attempts} attempts")
    assert finishes == [("worker", "r-giveup", "failed")]


async def test_a_worker_error_outside_the_run_loop(runtime: Runtime, tmp_path: Path, finishes: list,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(self: Worker, lease: Any, record: Any, cancel: Any, policy: Any = None) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(Worker, "_attempt", broken)
    await _accept(runtime, "r-crash", tmp_path)
    await _work_until_terminal(runtime, "r-crash")
    record = await _ended_through_finish(runtime, "r-crash", "failed")
    assert record["stop_reason"] == ("worker_error: the worker crashed outside the run loop (OSError); the details "
                                     "are in the server log")  # issue #21 (f): not the exception's text
    assert finishes == [("worker", "r-crash", "failed")]


async def test_a_queued_run_cancelled_before_a_worker_takes_it(runtime: Runtime, tmp_path: Path,
                                                               finishes: list) -> None:
    await _accept(runtime, "r-cancel", tmp_path)
    await runtime.store.request_cancel("r-cancel")
    await runtime.store.update_run("r-cancel", cancel_requested=True)
    await _work_until_terminal(runtime, "r-cancel")
    record = await _ended_through_finish(runtime, "r-cancel", "stopped")
    assert record["stop_reason"] == "cancelled by request" and record["cancel_requested"] is True
    assert finishes == [("session", "r-cancel", "stopped")]
