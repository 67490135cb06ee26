"""A store written before the hash tags (old key names, written here directly as an old tier2 wrote them) is
readable after `migrate_layout`: the run, its events, the project marker, the tenant's listing and an inbox entry
a worker then takes. A second pass moves nothing; a key both layouts hold is merged, never lost."""

from __future__ import annotations

import json
import time
import uuid

import pytest
import redis.asyncio as aioredis

from tier2.events import PhaseChanged
from tier2.store.dispatch import Dispatcher
from tier2.store.keys import DISPATCH_GROUP, Keys
from tier2.store.layout import LAYOUT, migrate_layout
from tier2.store.run_index import RunIndex
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis


@pytest.fixture
async def store(redis_url: str):
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"m-{uuid.uuid4().hex[:8]}"))
    yield s
    await s.close()


async def _write_old_layout(r: aioredis.Redis, p: str, run_id: str) -> None:
    now = time.time()
    record = {"schema_version": 1, "run_id": run_id, "status": "queued", "tenant": "acme", "project_id": "proj1",
              "created_at": now, "brief": "a potion shop"}
    await r.set(f"{p}:run:{run_id}", json.dumps(record))
    for seq in (1, 2):
        event = PhaseChanged(run_id=run_id, phase="implement")
        await r.xadd(f"{p}:run:{run_id}:events", {"e": event.model_dump_json()}, id=f"{seq}-0")
    await r.set(f"{p}:run:{run_id}:event_seq", 2)
    await r.hset(f"{p}:run:{run_id}:ops:began", "op1", 1)
    await r.rpush(f"{p}:run:{run_id}:checkpoint:latest:designer", "x")
    await r.set(f"{p}:project:proj1:active", run_id)
    await r.zadd(f"{p}:runs", {run_id: now})
    await r.zadd(f"{p}:tenant:acme:runs", {run_id: now})
    await r.sadd(f"{p}:tenant:acme:active", run_id)
    await r.set(f"{p}:idem:acme:key-1", json.dumps({"run_id": run_id}))
    await r.set(f"{p}:snap:blob:legacydigest", b"old blob")  # a pre-tenant snapshot blob keeps its name
    await r.xgroup_create(f"{p}:dispatch", DISPATCH_GROUP, id="0", mkstream=True)
    await r.xadd(f"{p}:dispatch", {"run_id": run_id, "tenant": "acme"})


async def test_old_layout_data_is_readable_after_the_migration(store: RunStore) -> None:
    r, k, run_id = store.r, store.keys, "run-old-1"
    await _write_old_layout(r, k.prefix, run_id)
    moved = await migrate_layout(r, k)
    assert moved == 11
    record = await store.get_record(run_id)
    assert record is not None and record.status == "queued" and record.tenant == "acme"
    assert [seq for seq, _ in await store.read_events(run_id)] == [1, 2]
    assert await store.project_writer("proj1") == run_id
    assert json.loads(await r.get(k.idempotency("acme", "key-1")))["run_id"] == run_id
    assert await r.hget(k.run_op_began(run_id), "op1") == "1"
    assert await r.lrange(k.run_agent_latest(run_id, "designer"), 0, -1) == ["x"]
    assert await r.get(k.legacy_snap_blob("legacydigest")) == "old blob"
    page = await RunIndex(r, k).page("acme", limit=10)
    assert [rec.run_id for rec in page.runs] == [run_id]
    assert not [key async for key in r.scan_iter(match=f"{k.prefix}:run:{run_id}*")]
    taken = await Dispatcher(r, k, {"": 2}).take("w1", block_ms=10)  # the old inbox entry, now in the new stream
    assert taken is not None and taken[1] == run_id
    assert await r.get(k.layout()) == LAYOUT
    assert await migrate_layout(r, k) == 0                      # marked: the next start skips the scan


async def test_a_key_in_both_layouts_is_merged_and_a_rerun_is_idempotent(store: RunStore) -> None:
    r, k = store.r, store.keys
    await r.zadd(f"{k.prefix}:runs", {"old-run": 1.0})
    await r.zadd(k.runs_index(), {"new-run": 2.0})               # a new process listed a run meanwhile
    await r.set(f"{k.prefix}:run:old-run", json.dumps({"run_id": "old-run", "status": "queued"}))
    assert await migrate_layout(r, k) == 2
    assert await r.zrange(k.runs_index(), 0, -1) == ["old-run", "new-run"]
    assert await r.exists(f"{k.prefix}:runs") == 0
    await r.delete(k.layout())
    assert await migrate_layout(r, k) == 0                      # nothing of the old layout is left
    assert await r.get(k.layout()) == LAYOUT
