"""Leases, fencing, the transactional outbox, checkpoints and operations against a real redis-server."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
import redis.asyncio as aioredis

from tier2.errors import StaleLease
from tier2.events import PhaseChanged
from tier2.middleware.checkpoint import restorable_state
from tier2.store.checkpoints import CheckpointStore
from tier2.store.keys import Keys
from tier2.store.leases import RECLAIMED, Lease, LeaseStore
from tier2.store.operations import OperationStore
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis


@pytest.fixture
async def store(redis_url: str):
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"t-{uuid.uuid4().hex[:8]}"))
    yield s
    await s.close()


async def lease_expired(store: RunStore, run_id: str, timeout_s: float = 10.0) -> None:
    """Wait until Redis expired the run's lease key (the holder stopped heartbeating): a condition, not a guess."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while await store.r.exists(store.keys.run_lease(run_id)):
        assert asyncio.get_running_loop().time() < deadline, "the lease never expired"
        await asyncio.sleep(0.01)


async def test_accept_commits_record_index_marker_and_dispatch_together(store: RunStore) -> None:
    got = await store.accept_run("r-1", {"status": "queued"}, project_id="p1", dispatch=True, tenant="a",
                                 idem_key="k", body_sha="x", response={"run_id": "r-1"},
                                 thread=("t-1", {"tenant": "a"}))
    assert got.outcome == "created"
    assert (await store.get_run("r-1"))["status"] == "queued"
    entries = await store.r.xrange(store.keys.dispatch())
    assert [f["run_id"] for _, f in entries] == ["r-1"]
    assert await store.project_writer("p1") == "r-1"
    assert await store.thread_runs("t-1") == ["r-1"]
    again = await store.accept_run("r-2", {}, project_id="p2", dispatch=True, tenant="a", idem_key="k",
                                   body_sha="y", response={"run_id": "r-2"})
    assert again.outcome == "replay" and again.idempotency["run_id"] == "r-1"
    assert await store.get_run("r-2") is None                      # nothing written on replay
    assert len(await store.r.xrange(store.keys.dispatch())) == 1   # and nothing dispatched twice
    busy = await store.accept_run("r-3", {}, project_id="p1", dispatch=True)
    assert busy.outcome == "busy" and busy.active_run == "r-1"
    await store.release_project("p1", "r-3")                       # not the holder: no effect
    assert await store.project_writer("p1") == "r-1"
    await store.release_project("p1", "r-1")
    assert await store.project_writer("p1") is None


async def test_leases_give_monotonic_tokens_and_expire(store: RunStore) -> None:
    leases = LeaseStore(store.r, store.keys)
    first = await leases.acquire("r-1", "w1", ttl_ms=150)
    assert isinstance(first, Lease) and first.token == 1
    held = await leases.acquire("r-1", "w2", ttl_ms=150)
    assert held == "held by w1|1"
    assert await leases.renew(first, 150)
    await lease_expired(store, "r-1")                              # w1 stopped heartbeating
    second = await leases.acquire("r-1", "w2", ttl_ms=5000)
    assert isinstance(second, Lease) and second.token == 2
    assert not await leases.renew(first, 150)                      # the old holder learns it lost the lease
    await leases.release(first)                                    # and cannot release the new one
    assert await leases.acquire("r-1", "w3", ttl_ms=100) == "held by w2|2"
    assert await leases.end_attempt(second, "finished")
    assert not await leases.end_attempt(first, "finished")         # a stale attempt cannot rewrite history
    attempts = await leases.attempts("r-1")
    assert [(a["attempt"], a["worker"], a.get("outcome")) for a in attempts] == [
        (1, "w1", "lease_lost"), (2, "w2", "finished")]               # the reclaimer closed the dead one's record
    assert attempts[0]["ended_at"] == attempts[1]["started_at"]
    assert attempts[0]["detail"] == RECLAIMED.format(token=2)
    assert attempts[1]["ended_at"] >= attempts[1]["started_at"]


async def test_every_write_of_a_stale_attempt_is_refused(store: RunStore) -> None:
    leases = LeaseStore(store.r, store.keys)
    await store.accept_run("r-1", {"status": "queued"}, project_id="p", dispatch=False)
    old = await leases.acquire("r-1", "w1", ttl_ms=50)
    await lease_expired(store, "r-1")
    new = await leases.acquire("r-1", "w2", ttl_ms=5000)
    assert isinstance(old, Lease) and isinstance(new, Lease)
    event = PhaseChanged(run_id="r-1", phase="implement")
    with pytest.raises(StaleLease):
        await store.append_event(event, old.fence)
    with pytest.raises(StaleLease):
        await store.update_run("r-1", old.fence, status="running")
    with pytest.raises(StaleLease):
        await CheckpointStore(store.r, store.keys, "r-1").save({"context": []}, {}, old.fence)
    ops = OperationStore(store.r, store.keys, "r-1")
    with pytest.raises(StaleLease):
        await ops.begin("Write:x:0", old.fence)
    with pytest.raises(StaleLease):
        await ops.commit("Write:x:0", {"text": "", "state": "success"}, old.fence)
    assert await store.read_events("r-1") == []                   # nothing of the stale attempt landed
    assert (await store.get_run("r-1"))["status"] == "queued"
    assert await store.append_event(event, new.fence) == 1        # the current attempt writes fine
    assert (await store.update_run("r-1", new.fence, status="running"))["status"] == "running"


def _msg(mid: str, blocks: list[dict]) -> dict:
    return {"id": mid, "name": "writer", "role": "assistant", "content": blocks, "metadata": {}}


async def test_checkpoints_append_only_new_blocks_and_restore_exactly(store: RunStore) -> None:
    ckpts = CheckpointStore(store.r, store.keys, "r-1")
    user = {"id": "u1", "name": "user", "role": "user", "content": "make a game", "metadata": {}}
    call = {"type": "tool_call", "id": "c1", "name": "Read", "input": "{}"}
    result = {"type": "tool_result", "id": "c1", "name": "Read", "output": "x" * 5000, "state": "success"}
    state1 = {"context": [user, _msg("a1", [call])], "reply_id": "a1", "cur_iter": 0, "middle_context": {}}
    state2 = {"context": [user, _msg("a1", [call, result])], "reply_id": "a1", "cur_iter": 1,
              "middle_context": {"budget": {"a1": 3}}}
    assert await ckpts.save(state1, {"round": 0, "stage": "turn"}, None) == 1
    written_first = ckpts.blocks_written
    assert await ckpts.save(state2, {"round": 0, "stage": "turn"}, None) == 2
    assert ckpts.blocks_written - written_first == 1               # only the new tool result block was stored
    raw = await store.r.lrange(store.keys.run_checkpoints("r-1"), 0, -1)
    assert all(len(entry) < 1500 for entry in raw)                 # checkpoints name blocks, never copy them
    fresh = CheckpointStore(store.r, store.keys, "r-1")            # a new attempt in another process
    number, restored, meta = await fresh.latest()
    assert number == 2 and restored == state2 and meta == {"round": 0, "stage": "turn"}


def test_restorable_state_drops_tool_calls_without_results() -> None:
    done = {"type": "tool_call", "id": "c1", "name": "Read", "input": "{}"}
    dangling = {"type": "tool_call", "id": "c2", "name": "Build", "input": "{}"}
    result = {"type": "tool_result", "id": "c1", "name": "Read", "output": "ok", "state": "success"}
    state = {"context": [_msg("a1", [done, result, dangling])], "cur_iter": 1}
    blocks = json.loads(restorable_state(state))["context"][0]["content"]
    assert [b["id"] for b in blocks] == ["c1", "c1"]


async def test_operations_are_looked_up_after_commit(store: RunStore) -> None:
    ops = OperationStore(store.r, store.keys, "r-1")
    assert await ops.lookup("Write:abc:0") is None
    assert await ops.begin("Write:abc:0", None) == 0
    await ops.commit("Write:abc:0", {"text": "wrote", "state": "success"}, None)
    await ops.commit("Write:abc:0", {"text": "again", "state": "success"}, None)  # first result wins
    assert await ops.lookup("Write:abc:0") == {"text": "wrote", "state": "success"}
    assert await ops.applied() == {"Write:abc:0": 1}


async def test_operation_counts_tell_an_interrupted_execution_from_a_repeated_one(store: RunStore) -> None:
    leases, ops = LeaseStore(store.r, store.keys), OperationStore(store.r, store.keys, "r-1")
    first = await leases.acquire("r-1", "w1", ttl_ms=50)
    assert await ops.begin("Write:a:0", first.fence) == 0
    assert await ops.begin("Write:a:0", first.fence) == 0          # a retried call (lost reply) counts once
    await lease_expired(store, "r-1")                               # w1 dies before the effect completes
    second = await leases.acquire("r-1", "w2", ttl_ms=5000)
    assert await ops.begin("Write:a:0", second.fence) == 1          # an earlier attempt began it
    await ops.commit("Write:a:0", {"text": "ok", "state": "success"}, second.fence)
    await ops.commit("Write:a:0", {"text": "ok", "state": "success"}, second.fence)  # retried: counts once
    assert await ops.began() == {"Write:a:0": 2} and await ops.applied() == {"Write:a:0": 1}
    await leases.release(second)
    third = await leases.acquire("r-1", "w3", ttl_ms=5000)          # a buggy attempt that repeats a done effect
    await ops.commit("Write:a:0", {"text": "again", "state": "success"}, third.fence)
    assert await ops.applied() == {"Write:a:0": 2}                  # shows up as a duplicate


async def test_a_superseded_attempt_may_start_no_tool_at_all(store: RunStore) -> None:
    """Re-runnable tools (Build, RunGame) write the project too: a frozen worker woken after a takeover starts
    none, while the current attempt's (and an unfenced run's) tools go ahead."""
    from types import SimpleNamespace

    from agentscope.message import TextBlock, ToolCallBlock, ToolResultState
    from agentscope.tool import ToolResponse

    from tier2.middleware.operations import OperationsMiddleware

    leases, ops = LeaseStore(store.r, store.keys), OperationStore(store.r, store.keys, "r-1")
    first = await leases.acquire("r-1", "w1", ttl_ms=50)
    ran: list[str] = []

    async def tool(**_: object):  # type: ignore[no-untyped-def]
        ran.append("Build")
        yield ToolResponse(content=[TextBlock(text="BUILD OK")], state=ToolResultState.SUCCESS, id="c1")

    async def call(fence: object) -> list[object]:
        layer = OperationsMiddleware(ops, fence, frozenset({"Write"}))  # type: ignore[arg-type]
        kwargs = {"tool_call": ToolCallBlock(id="c1", name="Build", input="{}")}
        return [c async for c in layer.on_acting(SimpleNamespace(), kwargs, tool)]

    assert len(await call(first.fence)) == 1 and ran == ["Build"]
    await lease_expired(store, "r-1")
    second = await leases.acquire("r-1", "w2", ttl_ms=5000)
    with pytest.raises(StaleLease, match="no longer current"):
        await call(first.fence)
    assert ran == ["Build"]                                          # the stale attempt's build never started
    await call(second.fence)
    await call(None)
    assert ran == ["Build", "Build", "Build"]
