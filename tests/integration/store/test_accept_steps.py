"""The acceptance's one-slot steps (`tier2.store.accept`) converge whatever step a crash interrupts: a process
that dies after any step leaves either one whole run (committed: the reconciler rolls it forward, a retry with the
same Idempotency-Key replays it, one dispatch entry) or nothing (the reconciler undoes it, a retry creates the
run) — counted, never two runs and never a 202'd run lost. A stalled acceptance the reconciler aborted answers
503 and leaves nothing behind."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
import redis.asyncio as aioredis

from tier2.errors import RedisUnavailable
from tier2.store.keys import DISPATCH_GROUP, Keys
from tier2.store.quotas import Admission
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis

# (step script, whether it was applied before the crash); the commit point is `_commit`
STEPS = ["_begin", "_claim", "_commit", "_mark", "_thread", "_enqueue"]
COMMITTED = {("_commit", True), ("_mark", False), ("_mark", True), ("_thread", False), ("_thread", True),
             ("_enqueue", False), ("_enqueue", True)}


class Crash(Exception):
    """The accepting process dies here (nothing after it runs)."""


@pytest.fixture
async def store(redis_url: str):
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"a-{uuid.uuid4().hex[:8]}"))
    await s.r.xgroup_create(s.keys.dispatch(), DISPATCH_GROUP, id="0", mkstream=True)
    yield s
    await s.close()


def _crash_at(store: RunStore, step: str, applied: bool) -> None:
    acceptor = store._acceptor
    real = getattr(acceptor, step)

    async def dying(*args: Any, **kwargs: Any) -> Any:
        if applied:
            await real(*args, **kwargs)
        raise Crash(step)
    setattr(acceptor, step, dying)


def _restore(store: RunStore, step: str, real: Any) -> None:
    setattr(store._acceptor, step, real)


async def _accept(store: RunStore, run_id: str) -> Any:
    return await store.accept_run(run_id, {"status": "queued", "tenant": "acme", "project_id": "proj"},
                                  project_id="proj", dispatch=True, tenant="acme", idem_key="key-1",
                                  thread=(f"th-{run_id}", {"tenant": "acme"}),
                                  admission=Admission("acme", max_queued=5, per_minute=100))


async def _state(store: RunStore) -> dict[str, Any]:
    """What a client and a worker can see: runs with a record, the tenant's listing, the dispatch entries."""
    r, k = store.r, store.keys
    entries = [f["run_id"] for _, f in await r.xrange(k.dispatch())]
    return {"records": sorted([rid for rid in ("r-1", "r-2") if await r.exists(k.run(rid))]),
            "listed": sorted(await r.zrange(k.tenant_runs("acme"), 0, -1)),
            "indexed": sorted(await r.zrange(k.runs_index(), 0, -1)),
            "entries": sorted(entries), "marker": await r.get(k.project_active("proj")),
            "accepting": await r.zrange(k.accepting(), 0, -1),
            "active": sorted(await r.smembers(k.tenant_active("acme")))}


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("applied", [False, True], ids=["before", "after"])
async def test_a_crash_at_any_step_then_the_reconciler_and_a_retry_give_one_run(store: RunStore, step: str,
                                                                                applied: bool) -> None:
    real = getattr(store._acceptor, step)
    _crash_at(store, step, applied)
    with pytest.raises(Crash):
        await _accept(store, "r-1")
    _restore(store, step, real)
    done = await store.complete_accepts(grace_s=0)
    committed = (step, applied) in COMMITTED
    assert done == {"r-1": "completed" if committed else "undone"}
    after = await _state(store)
    if committed:
        assert after == {"records": ["r-1"], "listed": ["r-1"], "indexed": ["r-1"], "entries": ["r-1"],
                         "marker": "r-1", "accepting": [], "active": ["r-1"]}
        assert await store.thread_runs("th-r-1") == ["r-1"]
    else:
        assert after == {"records": [], "listed": [], "indexed": [], "entries": [], "marker": None,
                         "accepting": [], "active": []}
    retry = await _accept(store, "r-2")                          # the client retries with its Idempotency-Key
    assert retry.outcome == ("replay" if committed else "created")
    assert retry.idempotency is not None and retry.idempotency["run_id"] == ("r-1" if committed else "r-2")
    final = await _state(store)
    assert len(final["records"]) == 1 and final["entries"] == final["records"] == final["listed"]
    assert final["accepting"] == [] and await store.complete_accepts(grace_s=0) == {}


async def test_a_retried_step_after_a_lost_reply_adds_nothing(store: RunStore) -> None:
    acceptor = store._acceptor
    for step in ("_thread", "_enqueue", "_commit", "_claim", "_begin"):
        real = getattr(acceptor, step)

        async def twice(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            await _real(*args, **kwargs)                          # applied, reply lost: the client retries it
            return await _real(*args, **kwargs)
        setattr(acceptor, step, twice)
    assert (await _accept(store, "r-1")).outcome == "created"
    state = await _state(store)
    assert state["entries"] == ["r-1"] and state["records"] == ["r-1"] and state["accepting"] == []
    assert await store.thread_runs("th-r-1") == ["r-1"]


async def test_an_acceptance_aborted_while_it_stalled_answers_503_and_leaves_nothing(store: RunStore) -> None:
    acceptor = store._acceptor
    real_claim, stalled, resume = acceptor._claim, asyncio.Event(), asyncio.Event()

    async def slow_claim(*args: Any, **kwargs: Any) -> Any:
        stalled.set()
        await resume.wait()
        return await real_claim(*args, **kwargs)
    acceptor._claim = slow_claim  # type: ignore[method-assign]
    task = asyncio.create_task(_accept(store, "r-1"))
    await stalled.wait()
    assert await store.complete_accepts(grace_s=0) == {"r-1": "undone"}   # the reconciler: not committed, undone
    resume.set()
    with pytest.raises(RedisUnavailable):                        # the stalled caller commits, then finds it aborted
        await task
    acceptor._claim = real_claim  # type: ignore[method-assign]
    assert await _state(store) == {"records": [], "listed": [], "indexed": [], "entries": [], "marker": None,
                                   "accepting": [], "active": []}
    assert await store.r.get(store.keys.idempotency("acme", "key-1")) is None
    assert (await _accept(store, "r-2")).outcome == "created"


async def test_a_committed_acceptance_the_reconciler_meets_is_rolled_forward_once(store: RunStore) -> None:
    acceptor = store._acceptor
    real_mark, stalled, resume = acceptor._mark, asyncio.Event(), asyncio.Event()

    async def slow_mark(*args: Any, **kwargs: Any) -> Any:
        stalled.set()
        await resume.wait()
        return await real_mark(*args, **kwargs)
    acceptor._mark = slow_mark  # type: ignore[method-assign]
    task = asyncio.create_task(_accept(store, "r-1"))
    await stalled.wait()                                         # committed at the tenant, not marked yet
    acceptor._mark = real_mark  # type: ignore[method-assign]
    assert await store.complete_accepts(grace_s=0) == {"r-1": "completed"}
    resume.set()
    assert (await task).outcome == "created"
    state = await _state(store)
    assert state["entries"] == ["r-1"] and state["records"] == ["r-1"] and state["accepting"] == []
