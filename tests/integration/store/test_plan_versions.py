"""Goal/plan versions stored append-only per project (`tier2.store.plans`) on the real Redis: the version rules, the
fence, retries, compaction and concurrent appends."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from tests.fixtures.plan_records import plan_record
from tier2.errors import BadInput, StaleLease
from tier2.store.keys import Keys
from tier2.store.leases import Lease, LeaseStore
from tier2.store.plans import PlanVersionRefused, PlanVersions
from tier2.store.run_store import Fence

pytestmark = pytest.mark.redis


@pytest.fixture
async def r(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    await client.aclose()


@pytest.fixture
def keys() -> Keys:
    return Keys(prefix=f"pv-{uuid.uuid4().hex[:8]}")


async def test_append_get_and_list(r: aioredis.Redis, keys: Keys) -> None:
    plans = PlanVersions(r, keys)
    assert await plans.get("game-1") is None and await plans.list("game-1") == []
    assert await plans.append("game-1", plan_record(1, 1, end=None), None) == 1
    assert await plans.append("game-1", plan_record(1, 2), None) == 2
    assert await plans.append("game-1", plan_record(2, 1, run_id="r-2", end="blocked"), None) == 3
    newest = await plans.get("game-1")
    assert newest is not None and (newest.goal_version, newest.plan_version, newest.run_id) == (2, 1, "r-2")
    assert newest.end is not None and newest.end.kind == "blocked" and newest.end.options
    assert newest.diff.invalidated["req.R3"] == "input spec:R3 changed"
    assert [c.was for c in newest.diff.requirements.changed] == ["customers wait 10 s"]
    first = await plans.get("game-1", 1)
    assert first is not None and first.plan_version == 2 and first.end is not None  # the goal's newest entry
    assert first.model_dump(mode="json", exclude_unset=True) == plan_record(1, 2)  # stored as written, every field kept
    assert await plans.get("game-1", 3) is None and await plans.get("game-2") is None
    listed = [s.model_dump() for s in await plans.list("game-1")]
    assert [(s["goal_version"], s["plan_version"], s["seq"], s["entries"]) for s in listed] == [(1, 2, 2, 2),
                                                                                              (2, 1, 3, 1)]
    assert listed[1] | {"at": 0} == {"goal_version": 2, "plan_version": 1, "seq": 3, "entries": 1, "author": "user",
                                     "text": "same game, snowy theme", "at": 0, "run_id": "r-2", "added": 1,
                                     "changed": 1, "removed": 1, "invalidated": 2, "reused": 2, "end": "blocked"}
    assert listed[0]["end"] == "delivered" and listed[0]["added"] == 3


async def test_extra_fields_of_the_plan_model_are_kept(r: aioredis.Redis, keys: Keys) -> None:
    plans = PlanVersions(r, keys)
    await plans.append("game-1", plan_record(1, 1, coverage={"R1": ["req.R1"]}), None)
    got = await plans.get("game-1")
    assert got is not None and got.model_dump()["coverage"] == {"R1": ["req.R1"]}


async def test_a_skipped_or_stale_version_is_refused(r: aioredis.Redis, keys: Keys) -> None:
    plans = PlanVersions(r, keys)
    with pytest.raises(PlanVersionRefused, match="first goal version is 1"):
        await plans.append("game-1", plan_record(2, 1), None)
    await plans.append("game-1", plan_record(1, 3), None)
    with pytest.raises(PlanVersionRefused, match="goal version 3 cannot follow goal version 1"):
        await plans.append("game-1", plan_record(3, 1), None)
    for older in (3, 2):  # the same goal version: only a newer plan version, never a rewrite
        with pytest.raises(PlanVersionRefused, match="not newer"):
            await plans.append("game-1", plan_record(1, older, at=1.0), None)
    await plans.append("game-1", plan_record(2, 1), None)
    with pytest.raises(PlanVersionRefused, match="goal version 1 cannot follow goal version 2"):
        await plans.append("game-1", plan_record(1, 9), None)
    assert await plans.entries("game-1") == 2
    with pytest.raises(BadInput, match="of project game-1, not game-2"):
        await plans.append("game-2", plan_record(1, 1), None)
    with pytest.raises(BadInput, match="goal.version"):
        await plans.append("game-1", {**plan_record(2, 2), "goal": {"text": "x", "author": "user", "version": 1}},
                           None)
    with pytest.raises(BadInput, match="author"):
        await plans.append("game-1", {**plan_record(2, 2), "goal": {"text": "x", "author": "bot", "version": 2}},
                           None)


async def test_a_retried_append_adds_nothing(r: aioredis.Redis, keys: Keys) -> None:
    plans = PlanVersions(r, keys)
    record = plan_record(1, 1)
    assert await plans.append("game-1", record, None) == 1
    assert await plans.append("game-1", record, None) == 1  # the same record again: the lost reply's retry
    assert await plans.entries("game-1") == 1


async def test_a_stale_fence_is_refused(r: aioredis.Redis, keys: Keys) -> None:
    plans, leases = PlanVersions(r, keys), LeaseStore(r, keys)
    old = await leases.acquire("r-1", "w1", ttl_ms=10_000)
    assert isinstance(old, Lease)
    assert await plans.append("game-1", plan_record(1, 1), old.fence) == 1
    await leases.release(old)
    new = await leases.acquire("r-1", "w2", ttl_ms=10_000)
    assert isinstance(new, Lease) and new.token == old.token + 1
    with pytest.raises(StaleLease):  # the superseded attempt's late plan never lands
        await plans.append("game-1", plan_record(1, 2, end="failed"), old.fence)
    assert await plans.entries("game-1") == 1
    assert await plans.append("game-1", plan_record(1, 2), new.fence) == 2
    with pytest.raises(BadInput, match="fence of run r-9"):
        await plans.append("game-1", plan_record(1, 3), Fence("r-9", new.token))


async def test_compaction_keeps_every_goal_versions_last_entry(r: aioredis.Redis, keys: Keys) -> None:
    plans = PlanVersions(r, keys, cap=5)
    for gv, pvs in ((1, range(1, 5)), (2, range(1, 4)), (3, range(1, 3))):
        for pv in pvs:
            await plans.append("game-1", plan_record(gv, pv), None)
    assert await plans.entries("game-1") == 5  # 9 appended, the oldest intermediate plans dropped first
    heads = [(s.goal_version, s.plan_version, s.entries) for s in await plans.list("game-1")]
    assert heads == [(1, 4, 1), (2, 3, 2), (3, 2, 2)]
    got = await plans.get("game-1", 1)
    assert got is not None and got.plan_version == 4
    for gv in range(4, 9):  # only last entries left: none is ever dropped, the cap bounds intermediate plans
        await plans.append("game-1", plan_record(gv, 1), None)
    assert [s.goal_version for s in await plans.list("game-1")] == list(range(1, 9))
    assert await plans.entries("game-1") == 8
    assert await plans.append("game-1", plan_record(8, 2), None) == 15  # seq counts appends, never reused


async def test_concurrent_appends_never_lose_or_reorder_an_entry(redis_url: str, keys: Keys) -> None:
    clients = [aioredis.Redis.from_url(redis_url, decode_responses=True) for _ in range(2)]
    stores = [PlanVersions(c, keys) for c in clients]
    accepted: list[tuple[int, int, int]] = []  # (seq, goal version, plan version)
    refused = 0
    next_pv = iter(range(1, 10_000))

    async def writer(store: PlanVersions, n: int) -> None:
        nonlocal refused
        for _ in range(n):
            pv = next(next_pv)
            latest = await store.get("game-1")
            gv = 1 if latest is None else latest.goal_version + (pv % 3 == 0)
            try:
                seq = await store.append("game-1", plan_record(gv, pv), None)
            except PlanVersionRefused:
                refused += 1
                continue
            accepted.append((seq, gv, pv))

    try:
        await asyncio.gather(writer(stores[0], 40), writer(stores[1], 40))
        stored = [(s.goal_version, s.plan_version) for s in await stores[0].list("game-1")]
        raw = await clients[0].lrange(keys.project_plans_index("game-1"), 0, -1)
        entries = [tuple(int(x) for x in h.split(" ", 3)[:3]) for h in raw]
        assert len(accepted) + refused == 80 and len(accepted) >= 40
        # every accepted entry is stored once, in the order the store gave out the seqs
        assert [(seq, gv, pv) for gv, pv, seq in entries] == sorted(accepted)
        assert [seq for _, _, seq in entries] == list(range(1, len(accepted) + 1))
        gvs = [gv for gv, _, _ in entries]
        assert gvs[0] == 1 and all(b - a in (0, 1) for a, b in zip(gvs, gvs[1:], strict=False))
        assert all(b[1] > a[1] for a, b in zip(entries, entries[1:], strict=False) if a[0] == b[0])
        assert stored[-1][0] == gvs[-1]
    finally:
        for c in clients:
            await c.aclose()
