"""Tenant quotas and fair dispatch against a real redis-server: counts atomic with acceptance, self-healing
whatever path ends a run, a sliding submission window, upload bytes per day, round-robin over tenants."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
import redis.asyncio as aioredis

from tier2.store.dispatch import Dispatcher
from tier2.store.finish import RunEnd, finish_run
from tier2.store.keys import DISPATCH_GROUP, Keys
from tier2.store.quotas import Admission, QuotaStore
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis


@pytest.fixture
async def store(redis_url: str):
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"t-{uuid.uuid4().hex[:8]}"))
    await s.r.xgroup_create(s.keys.dispatch(), DISPATCH_GROUP, id="0", mkstream=True)
    yield s
    await s.close()


async def _accept(store: RunStore, run_id: str, tenant: str, admission: Admission | None = None, **kw):
    return await store.accept_run(run_id, {"status": "queued", "tenant": tenant}, project_id=f"p-{run_id}",
                                  dispatch=True, tenant=tenant, admission=admission, **kw)


async def _end(store: RunStore, run_id: str, status: str) -> None:
    """End a run the one way runs end (`finish_run`), running first when the state machine needs it."""
    if status == "delivered":
        await store.update_run(run_id, status="running")
    await finish_run(store, run_id, RunEnd(status=status, stop_reason=f"test: {status}"))


@pytest.mark.parametrize("ending", ["delivered", "stopped", "failed", "record gone"])
async def test_queue_cap_is_atomic_and_heals_whichever_way_a_run_ends(store: RunStore, ending: str) -> None:
    cap = Admission("acme", max_queued=2, per_minute=100)
    assert (await _accept(store, "r-1", "acme", cap)).outcome == "created"
    assert (await _accept(store, "r-2", "acme", cap)).outcome == "created"
    full = await _accept(store, "r-3", "acme", cap)
    assert full.outcome == "queue_full" and full.detail == "2"
    assert await store.get_run("r-3") is None                              # nothing of a refused run is written
    assert [f["run_id"] for _, f in await store.r.xrange(store.keys.dispatch())] == ["r-1", "r-2"]
    assert (await _accept(store, "o-1", "other", Admission("other", 2, 100))).outcome == "created"  # per tenant
    # no decrement anywhere: the run's record turning terminal (or vanishing) is enough
    if ending == "record gone":
        await store.r.delete(store.keys.run("r-1"))
    else:
        await _end(store, "r-1", ending)
    assert (await _accept(store, "r-4", "acme", cap)).outcome == "created"
    assert await QuotaStore(store.r, store.keys).active("acme") == 2


async def test_idempotent_replay_is_not_refused_by_the_queue_cap(store: RunStore) -> None:
    cap = Admission("acme", max_queued=1, per_minute=100)
    first = await _accept(store, "r-1", "acme", cap, idem_key="k", body_sha="x", response={"run_id": "r-1"})
    again = await _accept(store, "r-2", "acme", cap, idem_key="k", body_sha="x", response={"run_id": "r-2"})
    assert first.outcome == "created" and again.outcome == "replay"


async def test_submission_rate_is_a_sliding_window(store: RunStore) -> None:
    rate = Admission("acme", max_queued=100, per_minute=3)
    before = int(time.time() * 1000)
    for i in range(3):
        assert (await _accept(store, f"r-{i}", "acme", rate)).outcome == "created"
    limited = await _accept(store, "r-x", "acme", rate)
    assert limited.outcome == "rate_limited" and before <= float(limited.detail) <= time.time() * 1000
    assert await store.get_run("r-x") is None
    # the window slides: once the oldest submission is over 60 s old, there is room for one more
    await store.r.zadd(store.keys.tenant_submissions("acme"), {"r-0": before - 61_000})
    assert (await _accept(store, "r-y", "acme", rate)).outcome == "created"


async def test_upload_bytes_per_day_are_charged_only_when_they_fit(store: RunStore) -> None:
    quotas = QuotaStore(store.r, store.keys)
    assert (await quotas.charge_upload("acme", 60, quota=100)).ok
    refused = await quotas.charge_upload("acme", 50, quota=100)
    assert not refused.ok and refused.used == 60 and 1 <= refused.retry_after <= 86_400
    assert await quotas.uploads_today("acme") == 60 and await quotas.uploads_today("other") == 0
    assert (await quotas.charge_upload("acme", 40, quota=100)).ok


async def _finish(store: RunStore, run_id: str) -> None:
    await _end(store, run_id, "delivered")


async def test_one_tenants_backlog_does_not_starve_another(store: RunStore) -> None:
    for i in range(10):
        await _accept(store, f"a-{i}", "a")
    await _accept(store, "b-0", "b")
    d = Dispatcher(store.r, store.keys, {"": 1})
    order = []
    for _ in range(11):
        taken = await d.take("w1", block_ms=10)
        assert taken is not None
        order.append(taken[1])
        await _finish(store, taken[1])
    assert order.index("b-0") < order.index("a-2"), order               # B is not behind all of A's backlog
    assert [r for r in order if r.startswith("a-")] == [f"a-{i}" for i in range(10)]  # each tenant stays FIFO
    assert await d.take("w1", block_ms=10) is None


async def test_max_running_holds_a_tenant_back_while_others_run(store: RunStore) -> None:
    for i in range(3):
        await _accept(store, f"a-{i}", "a")
    await _accept(store, "b-0", "b")
    d = Dispatcher(store.r, store.keys, {"": 1, "b": 2})
    first = await d.take("w1", block_ms=10)
    second = await d.take("w2", block_ms=10)
    assert (first[1], second[1]) == ("a-0", "b-0")
    assert await d.take("w3", block_ms=10) is None                     # a is at max_running = 1
    await store.request_cancel("a-1")                                  # a cancelled run may start: it ends at once
    assert (await d.take("w3", block_ms=10))[1] == "a-1"
    await _finish(store, "a-0")
    await _finish(store, "a-1")
    assert (await d.take("w3", block_ms=10))[1] == "a-2"


async def test_a_taken_run_stays_pending_for_its_worker_and_is_reclaimable(store: RunStore) -> None:
    await _accept(store, "a-0", "a")
    d = Dispatcher(store.r, store.keys, {"": 1})
    entry_id, run_id = await d.take("w1", block_ms=10)
    pending = await store.r.xpending_range(store.keys.dispatch(), DISPATCH_GROUP, "-", "+", 10)
    assert [(p["message_id"], p["consumer"]) for p in pending] == [(entry_id, "w1")]  # the inbox entry is acked
    _next, claimed, *_ = await store.r.xautoclaim(store.keys.dispatch(), DISPATCH_GROUP, "w2", min_idle_time=0,
                                                  start_id="0-0", count=10)
    assert [(eid, f["run_id"]) for eid, f in claimed] == [(entry_id, run_id)]   # a dead worker's run is reclaimed


async def test_take_waits_for_a_new_submission(store: RunStore) -> None:
    d = Dispatcher(store.r, store.keys, {"": 1})
    assert await d.take("w1", block_ms=200) is None  # nothing to start: None once its block is over
    waiting = asyncio.ensure_future(d.take("w1", block_ms=60_000))
    while not waiting.done() and not any(c.get("cmd") == "xread" for c in await store.r.client_list()):
        await asyncio.sleep(0.01)  # until the take is blocked in Redis (observable in CLIENT LIST)
    assert not waiting.done()
    await _accept(store, "a-0", "a")
    assert (await waiting)[1] == "a-0"  # the blocked take wakes up for the submission made while it waited
