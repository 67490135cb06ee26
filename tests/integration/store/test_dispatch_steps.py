"""The fair dispatch's steps (`Dispatcher.take`: drain, client reads, pick): a submission that arrives between the
drain and the pick is not lost — the pick drains it too, and the entry a worker gets is the started entry of the
run it was handed (found by a scale bench where a run stayed queued forever)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis.asyncio as aioredis

from tier2.store.dispatch import Dispatcher
from tier2.store.keys import DISPATCH_GROUP, Keys
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis


@pytest.fixture
async def store(redis_url: str):
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"ds-{uuid.uuid4().hex[:8]}"))
    await s.r.xgroup_create(s.keys.dispatch(), DISPATCH_GROUP, id="0", mkstream=True)
    yield s
    await s.close()


async def _accept(store: RunStore, run_id: str) -> None:
    got = await store.accept_run(run_id, {"status": "queued", "tenant": "a"}, project_id=f"p-{run_id}",
                                 dispatch=True, tenant="a")
    assert got.outcome == "created"


async def test_a_submission_between_drain_and_pick_is_taken_later_not_lost(store: RunStore) -> None:
    d = Dispatcher(store.r, store.keys, {"": 5})
    await _accept(store, "first")
    real_pick = d._pick
    arrived = False

    async def pick_after_a_submission(*args: Any, **kwargs: Any) -> Any:
        nonlocal arrived
        if not arrived:
            arrived = True
            await _accept(store, "second")                     # lands after the drain, before the pick
        return await real_pick(*args, **kwargs)
    d._pick = pick_after_a_submission  # type: ignore[method-assign]
    taken = await d.take("w1", block_ms=10)
    assert taken is not None and taken[1] == "first"
    entries = {eid: f for eid, f in await store.r.xrange(store.keys.dispatch())}
    assert entries[taken[0]] == {"run_id": "first", "tenant": "a", "picked": "1"}  # its own started entry
    second = await d.take("w2", block_ms=10)
    assert second is not None and second[1] == "second"
    assert entries.get(second[0], {"run_id": "second"})["run_id"] == "second"
    pending = {p["message_id"]: p["consumer"] for p in await store.r.xpending_range(
        store.keys.dispatch(), DISPATCH_GROUP, "-", "+", 10)}
    assert pending == {taken[0]: "w1", second[0]: "w2"}        # exactly the two started entries, one per worker
