"""The dispatch stream is trimmed by one rule: read by the group, acknowledged and of an ended run. A pending
entry (a started run a dead worker's successor must reclaim) and an unread one (a new submission) survive every
trim; a long history shrinks to what is still needed."""

from __future__ import annotations

import random
import uuid

import pytest
import redis.asyncio as aioredis

from tier2.store.dispatch import Dispatcher
from tier2.store.finish import RunEnd, finish_run
from tier2.store.keys import DISPATCH_GROUP, Keys
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis


@pytest.fixture
async def store(redis_url: str):
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"d-{uuid.uuid4().hex[:8]}"))
    await s.r.xgroup_create(s.keys.dispatch(), DISPATCH_GROUP, id="0", mkstream=True)
    yield s
    await s.close()


async def _accept(store: RunStore, run_id: str, tenant: str = "a") -> None:
    got = await store.accept_run(run_id, {"status": "queued", "tenant": tenant}, project_id=f"p-{run_id}",
                                 dispatch=True, tenant=tenant)
    assert got.outcome == "created"


async def _end(store: RunStore, run_id: str) -> None:
    await store.update_run(run_id, status="running")
    await finish_run(store, run_id, RunEnd(status="delivered", stop_reason="test"))


async def _ids(store: RunStore) -> dict[str, list[str]]:
    """run id -> its entries' kinds still in the stream (``inbox`` / ``started``)."""
    out: dict[str, list[str]] = {}
    for _eid, f in await store.r.xrange(store.keys.dispatch()):
        out.setdefault(f["run_id"], []).append("started" if f.get("picked") else "inbox")
    return out


async def _pending(store: RunStore) -> set[str]:
    return {p["message_id"] for p in await store.r.xpending_range(store.keys.dispatch(), DISPATCH_GROUP, "-", "+",
                                                                    1000)}


async def test_only_acknowledged_entries_of_ended_runs_go(store: RunStore) -> None:
    d = Dispatcher(store.r, store.keys, {"": 3})
    for rid in ("done", "running", "unacked", "queued"):
        await _accept(store, rid)
    done_entry, _ = await d.take("w1", block_ms=10)             # "done" started, then ended and acknowledged
    running_entry, _ = await d.take("w1", block_ms=10)          # "running" started, pending (a worker holds it)
    unacked_entry, _ = await d.take("w1", block_ms=10)          # ended, but its worker died before the ack
    await _end(store, "done")
    await d.ack(done_entry)
    await _end(store, "unacked")
    await _accept(store, "new")                                 # not read by the group yet
    assert await d.trim() == 3                                  # "done": both entries; "unacked": its inbox
    assert await _ids(store) == {"running": ["inbox", "started"], "unacked": ["started"], "queued": ["inbox"],
                                 "new": ["inbox"]}
    assert {running_entry, unacked_entry} <= await _pending(store)
    # what the trim kept still works: the dead worker's run is reclaimed, the waiting runs are started
    reclaimed = await d.reclaim("w2", min_idle_ms=0)
    assert reclaimed == (running_entry, "running")
    _next, claimed, *_ = await store.r.xautoclaim(store.keys.dispatch(), DISPATCH_GROUP, "w3", 0, "0-0", count=10)
    assert {eid for eid, _ in claimed} == {running_entry, unacked_entry}
    taken = {(await d.take("w2", block_ms=10))[1]}                # type: ignore[index]
    assert taken <= {"queued", "new"}


async def test_an_acknowledged_run_that_has_not_ended_keeps_its_entry(store: RunStore) -> None:
    """The inbox entry is acknowledged when drained into the tenant queue, long before its run ends."""
    d = Dispatcher(store.r, store.keys, {"": 1})
    await _accept(store, "first")
    await _accept(store, "waiting")
    first, _ = await d.take("w1", block_ms=10)                  # drains both; "waiting" waits (max_running 1)
    assert await d.trim() == 0
    await _end(store, "first")
    await d.ack(first)
    assert await d.trim() == 2
    assert await _ids(store) == {"waiting": ["inbox"]}
    assert (await d.take("w1", block_ms=10))[1] == "waiting"    # type: ignore[index]


async def test_a_long_history_shrinks_and_nothing_pending_is_ever_dropped(store: RunStore) -> None:
    rng = random.Random(7)
    d = Dispatcher(store.r, store.keys, {"": 3})
    held: dict[str, str] = {}                                   # run -> its pending started entry
    ended: set[str] = set()
    for i in range(120):
        await _accept(store, f"r{i}", tenant=f"t{i % 3}")
        if rng.random() < 0.7 and (taken := await d.take("w", block_ms=1)) is not None:
            held[taken[1]] = taken[0]
        if held and rng.random() < 0.6:
            rid = rng.choice(sorted(held))
            await _end(store, rid)
            await d.ack(held.pop(rid))
            ended.add(rid)
        if i % 10 == 0:
            await d.trim(scan=50)                               # bounded passes, as workers do them
            assert set(held.values()) <= await _pending(store)
    await d.trim()
    left = await _ids(store)
    assert not (set(left) & ended)                              # every ended run's entries are gone
    assert set(held) <= set(left) and set(held.values()) == await _pending(store)
    started = set(held) | ended
    for rid in (f"r{i}" for i in range(120)):
        if rid not in started:
            assert rid in left                                  # every waiting run is still in the stream


async def test_a_stream_no_worker_has_read_is_left_alone(store: RunStore) -> None:
    d = Dispatcher(store.r, store.keys, {"": 1})
    await _accept(store, "r1")
    await store.r.delete(store.keys.run("r1"))                  # even a run whose record is gone
    assert await d.trim() == 0 and await _ids(store) == {"r1": ["inbox"]}
