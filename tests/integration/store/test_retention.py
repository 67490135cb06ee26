"""Retention: an ended run's keys all get the bound in the finishing script, later writes keep it, and the sweep
bounds what ended without one (older runs, keys created after the end) and drops expired index entries."""

from __future__ import annotations

import uuid

import pytest
import redis.asyncio as aioredis

from tier2.events import PhaseChanged
from tier2.store.finish import RunEnd, finish_run
from tier2.store.keys import Keys
from tier2.store.leases import LeaseStore
from tier2.store.retention import RetentionSweep
from tier2.store.run_index import RunIndex
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis

DAY = 86400


@pytest.fixture
async def client(redis_url: str):
    c = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield c
    await c.aclose()


def _keys() -> Keys:
    return Keys(prefix=f"ret-{uuid.uuid4().hex[:8]}")


async def _ran(store: RunStore, run_id: str, tenant: str = "t1") -> None:
    """A run with keys of several families: record, index, events, an attempt, a cancel flag."""
    got = await store.accept_run(run_id, {"status": "queued", "tenant": tenant}, project_id=f"p-{run_id}",
                                 dispatch=False, tenant=tenant)
    assert got.outcome == "created"
    await store.update_run(run_id, status="running")
    await store.append_event(PhaseChanged(run_id=run_id, phase="implement"))
    lease = await LeaseStore(store.r, store.keys).acquire(run_id, "w1", 60_000, {})
    assert not isinstance(lease, str)


async def _ttls(store: RunStore, run_id: str) -> dict[str, int]:
    """TTL of each existing key of the run (-1: none) but the lease (its own, shorter life: kept)."""
    out = {}
    for key in store.keys.run_retained(run_id):
        if key == store.keys.run_lease(run_id):
            continue
        ttl = int(await store.r.ttl(key))
        if ttl != -2:
            out[key.rsplit(run_id + "}", 1)[-1] or "record"] = ttl
    return out


async def test_the_finish_bounds_every_key_of_the_run(client: aioredis.Redis) -> None:
    store = RunStore(client, _keys(), retention_s=DAY)
    await _ran(store, "r1")
    assert set((await _ttls(store, "r1")).values()) == {-1}    # running: nothing expires
    await store.r.hset(store.keys.run_snap_ops("r1"), "op", "s")
    await store.r.expire(store.keys.run_snap_ops("r1"), 10 * DAY)  # its own, longer life: cut to the retention
    await finish_run(store, "r1", RunEnd(status="failed", stop_reason="x"))
    ttls = await _ttls(store, "r1")
    assert {"record", ":events", ":attempts", ":fence"} <= set(ttls)
    assert all(DAY - 10 <= t <= DAY for t in ttls.values()), ttls
    await store.update_run("r1", usage={"model_calls": 1})     # a write after the end keeps the bound
    assert DAY - 10 <= int(await store.r.ttl(store.keys.run("r1"))) <= DAY
    assert 0 < int(await store.r.ttl(store.keys.run_lease("r1"))) <= 60  # the lease keeps its own, shorter life


async def test_without_retention_nothing_expires(client: aioredis.Redis) -> None:
    store = RunStore(client, _keys())
    await _ran(store, "r1")
    await finish_run(store, "r1", RunEnd(status="failed", stop_reason="x"))
    assert set((await _ttls(store, "r1")).values()) == {-1}


async def test_the_sweep_bounds_ended_runs_and_leaves_live_ones(client: aioredis.Redis) -> None:
    keys = _keys()
    before = RunStore(client, keys)                             # runs that ended before retention was set
    await _ran(before, "old")
    await finish_run(before, "old", RunEnd(status="delivered", stop_reason="ok"))
    await _ran(before, "live")
    bounded = RunStore(client, keys, retention_s=DAY)
    await _ran(bounded, "new")
    await finish_run(bounded, "new", RunEnd(status="failed", stop_reason="x"))
    await client.set(keys.run_cancel("new"), "1")               # a key written after the end
    await client.hset(keys.run_snap_ops("new"), "op", "s")      # and one with its own, longer life
    await client.expire(keys.run_snap_ops("new"), 10 * DAY)
    await client.expire(keys.run("new"), 500)                   # (its record's remaining time: 500 s)
    swept = await RetentionSweep(client, keys, DAY).run()
    assert swept.bounded == 2 and swept.pruned == 0
    assert all(DAY - 10 <= t <= DAY for t in (await _ttls(bounded, "old")).values())
    assert set((await _ttls(bounded, "live")).values()) == {-1}  # a live run is never bounded
    assert 490 <= int(await client.ttl(keys.run_cancel("new"))) <= 500  # expires with its run
    assert 490 <= int(await client.ttl(keys.run_snap_ops("new"))) <= 500
    again = await RetentionSweep(client, keys, DAY).run()
    assert again.bounded == 0                                   # idempotent


async def test_expired_runs_leave_the_indexes(client: aioredis.Redis) -> None:
    keys = _keys()
    store = RunStore(client, keys, retention_s=DAY)
    for rid in ("a", "b", "c"):
        await _ran(store, rid)
        await finish_run(store, rid, RunEnd(status="failed", stop_reason="x"))
    await client.delete(*keys.run_retained("b"))                # "b" expired
    page = await RunIndex(client, keys).page("t1")
    assert [r.run_id for r in page.runs] == ["c", "a"]
    assert await client.zscore(keys.tenant_runs("t1"), "b") is None  # the page dropped it from the tenant index
    swept = await RetentionSweep(client, keys, DAY).run()
    assert swept.pruned == 1 and await client.zscore(keys.runs_index(), "b") is None
    assert await client.zcard(keys.runs_index()) == 2
    assert (await RetentionSweep(client, keys, 0).run()).pruned == 0  # retention off: the sweep does nothing
