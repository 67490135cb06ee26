"""The one fenced finish: status, the single ``run_finished`` event and the project marker, all or nothing."""

from __future__ import annotations

import json
import uuid

import pytest
import redis.asyncio as aioredis

from tier2.errors import StaleLease
from tier2.events import PhaseChanged
from tier2.store.finish import RunEnd, finish_run
from tier2.store.keys import Keys
from tier2.store.leases import Lease, LeaseStore
from tier2.store.lifecycle import IllegalTransition
from tier2.store.records import DeliverySummary
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis


@pytest.fixture
async def store(redis_url: str):
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"f-{uuid.uuid4().hex[:8]}"))
    yield s
    await s.close()


async def _events(store: RunStore, run_id: str) -> list[tuple[int, dict]]:
    return [(seq, e.model_dump()) for seq, e in await store.read_events(run_id)]


async def _running(store: RunStore, run_id: str = "r-1", project: str = "p1") -> None:
    got = await store.accept_run(run_id, {"status": "running", "project_id": project}, project_id=project,
                                 dispatch=False)
    assert got.outcome == "created"
    await store.append_event(PhaseChanged(run_id=run_id, phase="implement"))


async def test_finish_writes_status_event_and_releases_the_marker_together(store: RunStore) -> None:
    await _running(store)
    end = RunEnd(status="delivered", stop_reason="all L1 gates passed", delivery_path="/p/delivery.json",
                 usage={"model_calls": 3}, timings_ms={"total": 1200},
                 delivery=DeliverySummary(verified=True, failed_gates=[]))
    done = await finish_run(store, "r-1", end)
    assert done.outcome == "finished" and done.status == "delivered" and done.released_project
    record = await store.get_record("r-1")
    assert record is not None and record.status == "delivered" and record.stop_reason == "all L1 gates passed"
    assert record.usage == {"model_calls": 3} and record.timings_ms == {"total": 1200}
    assert record.delivery is not None and record.delivery.verified and record.finished_at is not None
    events = await _events(store, "r-1")
    assert [seq for seq, _ in events] == [1, 2] and done.seq == 2          # the next monotonic id
    assert events[-1][1] == {**done.event.model_dump(), "type": "run_finished"}  # type: ignore[union-attr]
    assert events[-1][1]["status"] == "delivered" and events[-1][1]["delivery_path"] == "/p/delivery.json"
    assert await store.project_writer("p1") is None


async def test_a_stale_fence_writes_nothing(store: RunStore) -> None:
    await _running(store)
    leases = LeaseStore(store.r, store.keys)
    old = await leases.acquire("r-1", "w1", ttl_ms=10_000)
    assert isinstance(old, Lease)
    await leases.release(old)
    new = await leases.acquire("r-1", "w2", ttl_ms=10_000)
    assert isinstance(new, Lease) and new.token == 2
    with pytest.raises(StaleLease):
        await finish_run(store, "r-1", RunEnd(status="failed", stop_reason="late"), old.fence)
    assert (await store.get_record("r-1")).status == "running"  # type: ignore[union-attr]
    assert [e["type"] for _, e in await _events(store, "r-1")] == ["phase_changed"]
    assert await store.project_writer("p1") == "r-1"
    done = await finish_run(store, "r-1", RunEnd(status="stopped", stop_reason="cancelled by request"), new.fence)
    assert done.outcome == "finished"


async def test_a_second_finish_is_a_no_op(store: RunStore) -> None:
    await _running(store)
    first = await finish_run(store, "r-1", RunEnd(status="failed", stop_reason="boom"))
    again = await finish_run(store, "r-1", RunEnd(status="delivered", stop_reason="late success"))
    assert first.outcome == "finished"
    assert again.outcome == "already_terminal" and again.status == "failed" and again.event is None
    record = await store.get_record("r-1")
    assert record is not None and record.status == "failed" and record.stop_reason == "boom"
    assert sum(e["type"] == "run_finished" for _, e in await _events(store, "r-1")) == 1


async def test_the_marker_of_another_run_is_left_alone(store: RunStore) -> None:
    await _running(store)
    await store.r.set(store.keys.project_active("p1"), "r-other")  # the project moved on (taken over)
    done = await finish_run(store, "r-1", RunEnd(status="failed", stop_reason="x"))
    assert done.outcome == "finished" and not done.released_project
    assert await store.project_writer("p1") == "r-other"


async def test_a_queued_run_may_end_failed_or_stopped_but_never_delivered(store: RunStore) -> None:
    await store.accept_run("r-q", {"status": "queued", "project_id": "pq"}, project_id="pq", dispatch=True)
    with pytest.raises(IllegalTransition):  # a queued run never ran: it cannot have been delivered
        await finish_run(store, "r-q", RunEnd(status="delivered", stop_reason="?"))
    assert (await store.get_record("r-q")).status == "queued"  # type: ignore[union-attr]
    done = await finish_run(store, "r-q", RunEnd(status="stopped", stop_reason="cancelled by request"))
    assert done.outcome == "finished" and await store.project_writer("pq") is None


async def test_finishing_an_unknown_run_writes_nothing(store: RunStore) -> None:
    done = await finish_run(store, "r-none", RunEnd(status="failed", stop_reason="x"))
    assert done.outcome == "missing" and await store.read_events("r-none") == []
    assert await store.r.get(store.keys.run("r-none")) is None


async def test_a_concurrent_update_makes_finish_read_again(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    await _running(store)
    real_get = store.r.get
    calls = {"n": 0}

    async def racing_get(key: str):  # the first read is overtaken by an update (cancel_requested) before the script
        raw = await real_get(key)
        if key == store.keys.run("r-1") and calls["n"] == 0:
            calls["n"] += 1
            await store.update_run("r-1", cancel_requested=True)
        return raw

    monkeypatch.setattr(store.r, "get", racing_get)
    done = await finish_run(store, "r-1", RunEnd(status="stopped", stop_reason="cancelled by request"))
    assert done.outcome == "finished" and calls["n"] == 1
    record = json.loads(await real_get(store.keys.run("r-1")))
    assert record["status"] == "stopped" and record["cancel_requested"] is True  # the update was not lost


async def test_update_run_never_writes_a_terminal_status_or_leaves_one(store: RunStore) -> None:
    await _running(store)
    with pytest.raises(ValueError, match="finish_run"):
        await store.update_run("r-1", status="delivered")
    await finish_run(store, "r-1", RunEnd(status="failed", stop_reason="x"))
    with pytest.raises(IllegalTransition):
        await store.update_run("r-1", status="running")
    await store.update_run("r-1", cancel_requested=True)  # a flag on an ended run: harmless, allowed


async def test_accept_takes_over_a_marker_naming_a_terminal_or_unknown_run(store: RunStore) -> None:
    await _running(store, "r-1", "p1")
    busy = await store.accept_run("r-2", {"status": "queued"}, project_id="p1", dispatch=True)
    assert busy.outcome == "busy" and busy.active_run == "r-1"      # a live writer holds it
    # the run ended without releasing (an old record, before finish_run existed): its marker is stale
    await store.r.set(store.keys.run("r-1"), json.dumps({"schema_version": 1, "run_id": "r-1", "status": "failed"}))
    took = await store.accept_run("r-2", {"status": "queued"}, project_id="p1", dispatch=True)
    assert took.outcome == "created" and await store.project_writer("p1") == "r-2"
    await store.r.set(store.keys.project_active("p2"), "r-ghost")   # names a run that does not exist
    ghost = await store.accept_run("r-3", {"status": "queued"}, project_id="p2", dispatch=True)
    assert ghost.outcome == "created" and await store.project_writer("p2") == "r-3"
