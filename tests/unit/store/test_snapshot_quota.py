"""The snapshot store's bounds against a real redis-server and real files (issue #21, M7 + H2): every blob and
manifest has a TTL refreshed by the snapshots that reference it; a tenant's quota refuses a snapshot whole (nothing
stored) without touching another tenant; a file over the per-blob cap is never read nor stored; the GC removes what
no live snapshot references — also when a snapshot races it — and keeps the rest."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import redis.asyncio as aioredis

from tier2.errors import QuotaExceeded, RunLimitReached
from tier2.middleware.snapshots import QUOTA_KEY, SNAPSHOT_KEY, SnapshotMiddleware, restore_snapshot, take_snapshot
from tier2.store.keys import Keys
from tier2.store.snapshot_gc import SnapshotGC
from tier2.store.snapshots import SnapshotLimits, SnapshotStore

pytestmark = [pytest.mark.redis]
DAY_S = 86_400


@pytest.fixture
async def r(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def keys() -> Keys:
    return Keys(prefix=f"sq-{uuid.uuid4().hex[:8]}")


def _noise(n: int) -> bytes:
    """``n`` incompressible ASCII bytes (stored as exactly ``n`` bytes in Redis)."""
    return os.urandom(n // 2).hex().encode()


def _project(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


async def _run(r: aioredis.Redis, keys: Keys, run_id: str, status: str) -> None:
    await r.set(keys.run(run_id), json.dumps({"run_id": run_id, "status": status}))


async def _blob_keys(r: aioredis.Redis, keys: Keys, tenant: str) -> set[str]:
    return {k async for k in r.scan_iter(keys.snap_blob(tenant, "*"))}


async def test_blobs_and_manifests_expire_and_each_snapshot_refreshes_them(r, keys, tmp_path: Path) -> None:
    store = SnapshotStore(r, keys, "acme", SnapshotLimits(ttl_s=2 * DAY_S), run_id="r-ttl")
    root = _project(tmp_path / "p", {"a.js": b"a" * 100, "b.js": b"b" * 100})
    sid = await take_snapshot(store, root)
    blobs = await _blob_keys(r, keys, "acme")
    assert len(blobs) == 2
    for key in [*blobs, keys.snap_tree("acme", sid), keys.run_snapshots("r-ttl")]:
        assert 0 < await r.pttl(key) <= 2 * DAY_S * 1000, key  # nothing is stored forever
    for key in blobs:
        await r.pexpire(key, 5_000)  # almost gone...
    (root / "b.js").write_bytes(b"changed")
    await take_snapshot(store, root)  # ...a later snapshot still references a.js: its blob lives on
    a_key = keys.snap_blob("acme", hashlib.sha256(b"a" * 100).hexdigest())
    assert await r.pttl(a_key) > DAY_S * 1000


async def test_a_snapshot_over_the_tenant_quota_is_refused_whole_and_other_tenants_are_unaffected(
        r, keys, tmp_path: Path) -> None:
    small = SnapshotStore(r, keys, "small", SnapshotLimits(quota_bytes=50_000), run_id="r-small")
    await _run(r, keys, "r-small", "running")  # live: the GC may not free its snapshots
    first = _project(tmp_path / "one", {"a.bin": _noise(30_000)})
    await take_snapshot(small, first)
    used = await small.used()
    assert 30_000 < used < 50_000
    second = _project(tmp_path / "two", {"a.bin": (first / "a.bin").read_bytes(), "b.bin": _noise(30_000)})
    before = {k async for k in r.scan_iter(f"{keys.prefix}:snap:*")}
    with pytest.raises(QuotaExceeded) as refused:
        await take_snapshot(small, second)
    assert refused.value.quota == "snapshot_bytes" and refused.value.limit == 50_000
    assert refused.value.used == used and f"{used} of 50000" in str(refused.value)
    assert {k async for k in r.scan_iter(f"{keys.prefix}:snap:*")} == before  # no blob, no manifest
    assert await small.used() == used
    other = SnapshotStore(r, keys, "other", SnapshotLimits(quota_bytes=500_000), run_id="r-other")
    sid = await take_snapshot(other, second)  # the same files fit another tenant's own quota
    (second / "b.bin").write_bytes(b"lost")
    await restore_snapshot(other, second, sid)
    assert len((second / "b.bin").read_bytes()) == 30_000


async def test_a_100_mb_file_is_never_stored_as_a_blob(r, keys, tmp_path: Path) -> None:
    """H2: whatever made it (an Edit's replace_all, a command), a 100 MB file stops the run at its next step —
    the file is not read, nothing is stored, and the step's checkpoint keeps the last whole snapshot."""
    root = _project(tmp_path / "p", {"src/main.js": b"x" * 100_000})
    store = SnapshotStore(r, keys, "acme", SnapshotLimits(blob_bytes=20_000_000), run_id="r-h2")
    middleware = SnapshotMiddleware(store, root, "r-h2")
    agent = SimpleNamespace(state=SimpleNamespace(context=[], middle_context={}))
    from agentscope.message import TextBlock, ToolCallBlock
    from agentscope.tool import ToolResponse

    async def edit(grow: bool):
        if grow:  # what `Edit replace_all` did in the audit: 100 KB in, 100 MB out
            os.truncate(root / "src" / "main.js", 100 << 20)
        yield ToolResponse(content=[TextBlock(text="ok")], state="success", id="e1")

    call = ToolCallBlock(id="e1", name="Edit", input="{}")
    async for _ in middleware.on_acting(agent, {"tool_call": call}, lambda **_: edit(False)):
        pass
    whole = agent.state.middle_context[SNAPSHOT_KEY]
    stored = await store.used()
    async for _ in middleware.on_acting(agent, {"tool_call": call}, lambda **_: edit(True)):
        pass
    assert agent.state.middle_context[SNAPSHOT_KEY] == whole  # the checkpoint keeps naming the whole snapshot
    assert "snapshot_blob_bytes" in agent.state.middle_context[QUOTA_KEY]["detail"]
    assert await store.used() == stored
    assert [await r.strlen(k) for k in await _blob_keys(r, keys, "acme")] == [100_000]  # only the 100 KB one

    async def model(**_: object):
        yield "a model call"

    with pytest.raises(RunLimitReached) as stopped:  # the run stops before its next model call
        async for _ in middleware.on_reasoning(agent, {}, model):
            pass
    assert stopped.value.limit == "quota" and f"{100 << 20} bytes" in str(stopped.value)
    with pytest.raises(QuotaExceeded):  # and a baseline of the same files is refused too
        await take_snapshot(store, root)
    # the step's checkpoint carries the stop: an attempt resuming the run from it stops at once...
    resumed = SimpleNamespace(state=SimpleNamespace(context=[], middle_context=json.loads(json.dumps(
        agent.state.middle_context))))
    with pytest.raises(RunLimitReached):
        async for _ in SnapshotMiddleware(store, root, "r-h2").on_reasoning(resumed, {}, model):
            pass
    # ...while a follow-up run of the same thread (the same conversation state, another run) is not stopped by it
    assert [x async for x in SnapshotMiddleware(store, root, "r-next").on_reasoning(resumed, {}, model)] == [
        "a model call"]


async def test_the_gc_removes_what_no_live_snapshot_references_and_keeps_the_rest(r, keys, tmp_path: Path) -> None:
    shared, ended_only, live_only = b"shared" * 1000, b"ended" * 1000, b"live" * 1000
    ended = SnapshotStore(r, keys, "acme", run_id="r-ended")
    live = SnapshotStore(r, keys, "acme", run_id="r-live")
    await _run(r, keys, "r-ended", "running")
    await _run(r, keys, "r-live", "running")
    old = await take_snapshot(ended, _project(tmp_path / "e", {"s": shared, "e": ended_only}))
    kept = await take_snapshot(live, _project(tmp_path / "l", {"s": shared, "l": live_only}))
    await _run(r, keys, "r-ended", "delivered")  # the ended run can never resume: its snapshot is garbage
    gc = SnapshotGC(r, keys)
    done = await gc.collect("acme")
    assert (done.blobs, done.trees, done.ended_runs) == (1, 1, 1)
    assert await r.get(keys.snap_tree("acme", old)) is None
    restored = tmp_path / "restored"
    await restore_snapshot(live, restored, kept)  # every blob of the live snapshot is still there
    assert (restored / "s").read_bytes() == shared and (restored / "l").read_bytes() == live_only
    assert len(await _blob_keys(r, keys, "acme")) == 2
    sizes = await r.hgetall(keys.snap_sizes("acme"))
    assert done.used == await live.used() == sum(int(v) for v in sizes.values())
    await _run(r, keys, "r-live", "stopped")
    assert (await gc.collect("acme")).used == 0
    assert await _blob_keys(r, keys, "acme") == set()


async def test_a_snapshot_taken_while_the_gc_runs_keeps_its_blobs(r, keys, tmp_path: Path) -> None:
    """The race the stamps close: the GC has read the live manifests; a new snapshot then references a blob that
    only a dead snapshot had — the delete script sees the newer stamp and keeps it."""
    dead = SnapshotStore(r, keys, "acme", run_id="r-dead")
    await _run(r, keys, "r-dead", "failed")
    data = {"old.bin": _noise(5000)}
    await take_snapshot(dead, _project(tmp_path / "d", data))
    racer = SnapshotStore(r, keys, "acme", run_id="r-racer")
    await _run(r, keys, "r-racer", "running")
    taken: dict[str, str] = {}

    class Racing(SnapshotGC):
        async def _live_members(self, tenant: str, runs: list[str]) -> set[str]:
            live = await super()._live_members(tenant, runs)
            taken["sid"] = await take_snapshot(racer, _project(tmp_path / "r", data))  # after the reads
            return live

    await Racing(r, keys).collect("acme")
    out = tmp_path / "out"
    await restore_snapshot(racer, out, taken["sid"])
    assert (out / "old.bin").read_bytes() == data["old.bin"]


async def test_a_full_quota_is_freed_by_the_gc_before_a_snapshot_is_refused(r, keys, tmp_path: Path) -> None:
    limits = SnapshotLimits(quota_bytes=40_000)
    await _run(r, keys, "r-1", "running")
    await take_snapshot(SnapshotStore(r, keys, "acme", limits, run_id="r-1"), _project(tmp_path / "1", {
        "a": _noise(30_000)}))
    await _run(r, keys, "r-1", "delivered")
    await _run(r, keys, "r-2", "running")
    second = SnapshotStore(r, keys, "acme", limits, run_id="r-2")
    sid = await take_snapshot(second, _project(tmp_path / "2", {"b": _noise(30_000)}))
    assert await r.get(keys.snap_tree("acme", sid)) is not None
    assert 30_000 < await second.used() < 40_000  # only the live run's snapshot is counted now


async def test_snapshots_from_before_tenants_are_still_restored_and_get_a_ttl(r, keys, tmp_path: Path) -> None:
    from tier2.workspace.snapshots import scan

    root = _project(tmp_path / "p", {"a.txt": b"legacy bytes"})
    manifest, blobs = scan(root)
    for digest, data in blobs.items():  # the layout before this change: global keys, no TTL
        await r.set(keys.legacy_snap_blob(digest), data.decode("latin-1"))
    await r.set(keys.legacy_snap_tree(manifest.id), manifest.canonical())
    out = tmp_path / "out"
    await restore_snapshot(SnapshotStore(r, keys, "acme"), out, manifest.id)
    assert (out / "a.txt").read_bytes() == b"legacy bytes"
    await SnapshotGC(r, keys).collect_all(legacy_ttl_s=DAY_S)
    for digest in blobs:
        assert 0 < await r.ttl(keys.legacy_snap_blob(digest)) <= DAY_S
    assert 0 < await r.ttl(keys.legacy_snap_tree(manifest.id)) <= DAY_S
