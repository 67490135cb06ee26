"""Every store operation on a real Redis Cluster node that holds all 16384 slots (`RedisShards(primaries=1)`):
the server itself refuses a script whose keys — declared or built inside it — span two slots, a ``MULTI`` over
two slots and a multi-key command over two (``CROSSSLOT``, "Script attempted to access keys that do not hash to
the same slot"). A script without a shebang may touch undeclared keys of other slots of its node (Redis keeps
that for old scripts; a Cluster of several nodes fails it as soon as the key is elsewhere), so the client here
sends every script with ``#!lua`` first, which makes the server check those too. A run's whole life goes
through it: acceptance (idempotency key, thread, tenant limits), fair dispatch, lease, events, operations,
checkpoints, budget, team mailbox, plan versions, snapshots and their GC, cancel, the end of the run, retention,
the run index, the dispatch trim, interrupted acceptances."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from tests.fixtures.plan_records import plan_record
from tier2.events import CancelRequested, PhaseChanged
from tier2.store.budget import BudgetCaps, BudgetLedger
from tier2.store.checkpoints import CheckpointStore
from tier2.store.commands import CommandRecords
from tier2.store.dispatch import Dispatcher
from tier2.store.finish import RunEnd, finish_run
from tier2.store.keys import Keys
from tier2.store.layout import migrate_layout
from tier2.store.leases import LeaseStore
from tier2.store.operations import OperationStore
from tier2.store.plans import PlanVersions
from tier2.store.quotas import Admission, QuotaStore
from tier2.store.retention import RetentionSweep
from tier2.store.run_index import RunIndex
from tier2.store.run_store import Fence, RunStore
from tier2.store.snapshot_gc import SnapshotGC
from tier2.store.snapshots import SnapshotStore
from tier2.store.team import TeamMailbox, agent_checkpoints
from tier2.store.trajectory import ModelCallRecord, TrajectoryStore
from tier2.testing.redis_topology import RedisShards

pytestmark = [pytest.mark.redis, pytest.mark.slow]


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisShards]:
    with RedisShards(tmp_path_factory.mktemp("slots"), primaries=1) as c:
        yield c


class StrictScripts(aioredis.Redis):
    """A client whose scripts carry a shebang: the server checks the slot of every key they touch."""

    def register_script(self, script: str | bytes) -> Any:
        body = script.decode() if isinstance(script, bytes) else script
        return super().register_script("#!lua\n" + body)

    async def eval(self, script: str, numkeys: int, *keys_and_args: Any) -> Any:  # type: ignore[override]
        return await super().eval("#!lua\n" + script, numkeys, *keys_and_args)  # type: ignore[misc]


@pytest.fixture
async def store(node: RedisShards) -> AsyncIterator[RunStore]:
    s = RunStore(StrictScripts(port=node.ports[0], decode_responses=True), Keys(prefix="slots"), retention_s=3600)
    yield s
    await s.close()


async def test_the_node_refuses_a_cross_slot_script(store: RunStore) -> None:
    """The check is real: the same node refuses the old kind of script."""
    with pytest.raises(aioredis.ResponseError, match="CROSSSLOT|same slot"):
        await store.r.eval("redis.call('SET', KEYS[1], 1) redis.call('SET', KEYS[2], 1)", 2,
                           store.keys.run("a"), store.keys.run("b"))
    with pytest.raises(aioredis.ResponseError, match="same slot|non local"):
        await store.r.eval("redis.call('SET', ARGV[1], 1) redis.call('SET', ARGV[2], 1)", 0,
                           store.keys.run("a"), store.keys.run("b"))


async def test_a_runs_whole_life_touches_one_slot_per_script(store: RunStore) -> None:
    r, k = store.r, store.keys
    assert await migrate_layout(r, k, cluster=True) == 0
    d = Dispatcher(r, k, {"": 2})
    await d.ensure_group()
    cap = Admission("acme", max_queued=5, per_minute=50)
    got = await store.accept_run("r1", {"status": "queued", "tenant": "acme", "project_id": "p1"}, project_id="p1",
                                 dispatch=True, tenant="acme", idem_key="k1", thread=("t1", {"tenant": "acme"}),
                                 admission=cap)
    assert got.outcome == "created"
    again = await store.accept_run("r1b", {"status": "queued", "tenant": "acme"}, project_id="p2", dispatch=True,
                                   tenant="acme", idem_key="k1", admission=cap)
    assert again.outcome == "replay"
    busy = await store.accept_run("r2", {"status": "queued", "tenant": "acme"}, project_id="p1", dispatch=True,
                                  tenant="acme", admission=cap)
    assert busy.outcome == "busy"
    assert await QuotaStore(r, k).active("acme") == 1
    taken = await d.take("w1", block_ms=10)
    assert taken is not None and taken[1] == "r1"
    assert await QuotaStore(r, k).running("acme") == 1
    lease = await LeaseStore(r, k).acquire("r1", "w1", 60_000, {})
    assert not isinstance(lease, str)
    assert await LeaseStore(r, k).renew(lease, 60_000)
    fence = Fence("r1", lease.token)
    await store.update_run("r1", fence, status="running")
    await store.append_event(PhaseChanged(run_id="r1", phase="implement"), fence)
    ops = OperationStore(r, k, "r1")
    await ops.begin("op1", fence)
    await ops.commit("op1", {"ok": True}, fence)  # type: ignore[typeddict-item]
    await CheckpointStore(r, k, "r1").save({"context": []}, {}, fence)
    await agent_checkpoints(r, k, "r1", "designer").save({"context": []}, {}, fence)
    ledger = BudgetLedger(r, k, "r1", BudgetCaps(usd=1.0, tokens=1000))
    await ledger.reserve("c1", 0.01, 10)
    await ledger.reconcile("c1", 0.005, 5)
    box = TeamMailbox(r, k, "r1", fence=fence)
    assert await box.post("designer", "note", {"x": 1})
    assert await box.close_if_drained() != [] and await box.close_if_drained() == []
    plans = PlanVersions(r, k)
    await plans.append("p1", plan_record(1, 1, run_id="r1", project_id="p1", end=None), fence)
    assert await plans.get("p1") is not None
    snaps = SnapshotStore(r, k, "acme", run_id="r1")
    await snaps.put("s1", '[["a.txt", "d1"]]', {"d1": b"data"})
    await snaps.record_op("r1", "op1", "s1")
    for name, value in (("old1", "a"), ("old2", "b")):
        await r.set(k.legacy_snap_blob(name), value)
    assert await snaps.blobs(["d1", "old1", "old2"]) == {"d1": b"data", "old1": b"a", "old2": b"b"}  # pre-tenant
    await CommandRecords(r, k, "r1", lease.token).started("c1", "npm run build")
    await TrajectoryStore(r, k).record("r1", ModelCallRecord(call_id="m1", agent="writer", state="success",
                                                             started_at=1.0, duration_ms=5.0, model="m"))
    await store.request_cancel("r1", CancelRequested(run_id="r1"))
    end = await finish_run(store, "r1", RunEnd(status="stopped", stop_reason="cancelled"), fence)
    assert end.outcome == "finished" and end.released_project
    await LeaseStore(r, k).end_attempt(lease, "cancelled")
    await LeaseStore(r, k).release(lease)
    await d.ack(taken[0])
    assert await d.trim() >= 1
    await SnapshotGC(r, k).collect_all(legacy_ttl_s=60)
    await RetentionSweep(r, k, 3600).run()
    assert [rec.run_id for rec in (await RunIndex(r, k).page("acme")).runs] == ["r1"]
    assert await RunIndex(r, k).backfill() >= 0
    assert await QuotaStore(r, k).active("acme") == 0
    assert await store.complete_accepts(grace_s=0) == {}
