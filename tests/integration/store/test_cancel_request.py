"""The cancel request is one script: the durable flag, the record's ``cancel_requested`` and the event are written
together, and only while the run has not ended (a run ending meanwhile makes the write read the record again)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis.asyncio as aioredis

from tier2.events import CancelRequested, PhaseChanged
from tier2.store import run_store as run_store_mod
from tier2.store.finish import RunEnd, finish_run
from tier2.store.keys import Keys
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis


@pytest.fixture
async def store(redis_url: str):
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"c-{uuid.uuid4().hex[:8]}"))
    yield s
    await s.close()


async def _running(store: RunStore, run_id: str = "r-1") -> None:
    got = await store.accept_run(run_id, {"status": "running", "project_id": "p1"}, project_id="p1", dispatch=False)
    assert got.outcome == "created"
    await store.append_event(PhaseChanged(run_id=run_id, phase="implement"))


async def _types(store: RunStore, run_id: str = "r-1") -> list[str]:
    return [e.type for _, e in await store.read_events(run_id)]


async def test_a_live_run_gets_flag_field_and_event_together(store: RunStore) -> None:
    await _running(store)
    before = await store.request_cancel("r-1", CancelRequested(run_id="r-1", by="t1"))
    assert before is not None and before.status == "running" and not before.cancel_requested
    assert await store.cancel_requested("r-1")
    record = await store.get_record("r-1")
    assert record is not None and record.cancel_requested and record.status == "running"
    assert await _types(store) == ["phase_changed", "cancel_requested"]


async def test_an_ended_run_and_an_unknown_run_get_nothing(store: RunStore) -> None:
    await _running(store)
    await finish_run(store, "r-1", RunEnd(status="failed", stop_reason="x"))
    before = await store.request_cancel("r-1", CancelRequested(run_id="r-1", by="t1"))
    assert before is not None and before.status == "failed"
    assert not await store.cancel_requested("r-1")
    assert await _types(store) == ["phase_changed", "run_finished"]
    assert await store.request_cancel("nope", CancelRequested(run_id="nope", by="t1")) is None
    assert not await store.cancel_requested("nope") and await store.read_events("nope") == []


async def test_a_run_ending_between_read_and_write_aborts_the_cancel(store: RunStore,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    await _running(store)
    real = run_store_mod.load_run_record
    calls = 0

    async def _finish() -> None:
        other = RunStore(aioredis.Redis(connection_pool=store.r.connection_pool), store.keys)
        await finish_run(other, "r-1", RunEnd(status="delivered", stop_reason="ok"))

    pending: list[Any] = []

    def racing(raw: Any) -> Any:  # the run ends right after the cancel read its record
        nonlocal calls
        calls += 1
        if calls == 1:
            pending.append(_finish())
        return real(raw)

    monkeypatch.setattr(run_store_mod, "load_run_record", racing)
    # run the competing finish before the script runs: await it from the script's call
    orig_cancel = store._cancel

    async def cancel_script(*args: Any, **kwargs: Any) -> Any:
        while pending:
            await pending.pop()
        return await orig_cancel(*args, **kwargs)

    monkeypatch.setattr(store, "_cancel", cancel_script)
    before = await store.request_cancel("r-1", CancelRequested(run_id="r-1", by="t1"))
    assert calls == 2                                      # read, aborted by the finish, read again
    assert before is not None and before.status == "delivered"
    assert not await store.cancel_requested("r-1")
    record = await store.get_record("r-1")
    assert record is not None and not record.cancel_requested
    assert await _types(store) == ["phase_changed", "run_finished"]
