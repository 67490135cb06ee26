"""The frozen v1 corpus (``tests/fixtures/persisted/v1/``, never edited) still loads with the current code, and a
load → store → load round trip is stable."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from agentscope.state import AgentState

from tier2.events import EVENT_ADAPTER
from tier2.middleware.checkpoint import restorable_state
from tier2.runs.loop.delivery import load_delivery
from tier2.runs.loop.usage import Usage
from tier2.store.checkpoints import CheckpointStore
from tier2.store.finish import RunEnd, finish_run
from tier2.store.keys import Keys
from tier2.store.leases import LeaseStore
from tier2.store.records import RUN_RECORD_VERSION, RunRecord, load_run_record
from tier2.store.run_store import RunStore

V1 = Path(__file__).resolve().parents[2] / "fixtures" / "persisted" / "v1"
RECORDS = sorted(V1.glob("run_record_*.json"))
DELIVERIES = sorted(V1.glob("delivery_*.json"))


def _load(name: str) -> Any:
    return json.loads((V1 / name).read_text())


def test_the_corpus_is_there() -> None:
    assert [p.name for p in RECORDS] == ["run_record_foreground.json", "run_record_queued.json",
                                         "run_record_worker.json"]
    assert len(DELIVERIES) == 2 and (V1 / "checkpoint_worker.json").exists() and (V1 / "README.md").exists()


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.stem)
def test_v1_run_records_load_and_round_trip(path: Path) -> None:
    raw = json.loads(path.read_text())
    record = load_run_record(path.read_text())
    assert isinstance(record, RunRecord) and record.schema_version == RUN_RECORD_VERSION
    assert record.run_id == raw["run_id"] and record.status == raw["status"] and record.brief == raw["brief"]
    stored = record.dump()
    assert stored == {**raw, "schema_version": RUN_RECORD_VERSION}   # same keys and values; only the version moved
    assert load_run_record(json.dumps(stored)) == record              # stable: load(store(load(v1))) == load(v1)
    assert load_run_record(json.dumps(stored)).dump() == stored
    unversioned = {k: v for k, v in raw.items() if k != "schema_version"}
    assert load_run_record(unversioned) == record                     # no schema_version = v1


def test_a_record_from_the_future_is_refused() -> None:
    with pytest.raises(ValueError, match="newer than this code"):
        load_run_record({"run_id": "r-x", "schema_version": RUN_RECORD_VERSION + 1})


@pytest.mark.parametrize("path", DELIVERIES, ids=lambda p: p.stem)
def test_v1_deliveries_load(path: Path) -> None:
    raw = json.loads(path.read_text())
    record = load_delivery(path)
    assert record == raw and record["status"] == "delivered" and record["verification"]["passed"]
    assert load_delivery(json.dumps(record)) == record


def test_v1_events_parse_and_serialize_identically() -> None:
    for raw in _load("events_worker.json"):
        event = EVENT_ADAPTER.validate_python(raw)
        assert json.loads(event.model_dump_json()) == raw


@pytest.fixture
async def store(redis_url: str):
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"c-{uuid.uuid4().hex[:8]}"))
    yield s
    await s.close()


@pytest.mark.redis
async def test_a_v1_checkpoint_restores_and_resumes(store: RunStore) -> None:
    fixture = _load("checkpoint_worker.json")
    run_id, k = "r-fixture0001", store.keys
    await store.r.hset(k.run_blocks(run_id), mapping={ref: json.dumps(b) for ref, b in fixture["blocks"].items()})
    for _ in range(fixture["count"] - 1):
        await store.r.rpush(k.run_checkpoints(run_id), "{}")
    await store.r.rpush(k.run_checkpoints(run_id), json.dumps(fixture["latest"]))
    await store.r.set(k.run_latest(run_id), json.dumps(fixture["latest"]))
    number, state, meta = await CheckpointStore(store.r, k, run_id).latest()  # type: ignore[misc]
    assert number == fixture["count"] and meta == fixture["latest"]["meta"]
    restored = AgentState.model_validate_json(restorable_state(state))      # what a resumed attempt loads
    assert len(restored.context) == len(fixture["latest"]["messages"])
    usage = Usage(**meta["usage"])                                          # what the worker's Resume carries
    assert usage.model_calls == meta["usage"]["model_calls"] and meta["stage"] in ("turn", "turn_done")
    again = CheckpointStore(store.r, k, run_id)                             # save what was restored, load it back
    await again.save(json.loads(restorable_state(state)), meta, None)
    _, state2, meta2 = await again.latest()  # type: ignore[misc]
    assert AgentState.model_validate_json(restorable_state(state2)) == restored and meta2 == meta


@pytest.mark.redis
async def test_v1_records_in_redis_are_served_migrated_and_finish_like_new_ones(store: RunStore) -> None:
    queued = _load("run_record_queued.json")
    await store.r.set(store.keys.run(queued["run_id"]), json.dumps(queued))
    await store.r.set(store.keys.project_active(queued["project_id"]), queued["run_id"])
    attempts = _load("attempts_worker.json")
    await store.r.hset(store.keys.run_attempts(queued["run_id"]), mapping={a: json.dumps(v) for a, v in
                                                                          attempts.items()})
    assert await store.get_run(queued["run_id"]) == {**queued, "schema_version": RUN_RECORD_VERSION}
    assert await LeaseStore(store.r, store.keys).attempts(queued["run_id"]) == list(attempts.values())
    updated = await store.update_run(queued["run_id"], status="running", phase="implement")
    assert set(updated) == set(queued) | {"updated_at"} and updated["status"] == "running"
    done = await finish_run(store, queued["run_id"], RunEnd(status="stopped", stop_reason="cancelled by request"))
    assert done.outcome == "finished" and await store.project_writer(queued["project_id"]) is None
    final = await store.get_record(queued["run_id"])
    assert final is not None and final.status == "stopped" and final.options == queued["options"]
