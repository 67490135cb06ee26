"""The per-tenant run index against a real redis-server: written atomically with the acceptance, read newest first
a page at a time (keyset cursor: runs accepted while paging shift nothing), filtered by status and text, bounded
work per page, and backfilled once for runs accepted before it existed."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from tier2.store.finish import RunEnd, finish_run
from tier2.store.keys import Keys
from tier2.store.run_index import Cursor, RunIndex
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[RunStore]:
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"ri-{uuid.uuid4().hex[:8]}"))
    yield s
    await s.close()


async def _accept(store: RunStore, run_id: str, tenant: str | None, brief: str = "a potion shop") -> None:
    outcome = await store.accept_run(run_id, {"status": "queued", "tenant": tenant, "brief": brief},
                                     project_id=f"p-{run_id}", dispatch=False, tenant=tenant)
    assert outcome.outcome == "created"


async def _all(index: RunIndex, tenant: str, limit: int, **filters: object) -> list[str]:
    seen: list[str] = []
    cursor: Cursor | None = None
    for _ in range(100):
        page = await index.page(tenant, after=cursor, limit=limit, **filters)  # type: ignore[arg-type]
        seen += [r.run_id for r in page.runs]
        if page.next is None:
            return seen
        cursor = page.next
    raise AssertionError("paging never ended")


async def test_a_tenant_lists_only_its_runs_newest_first(store: RunStore) -> None:
    for i in range(5):
        await _accept(store, f"r-a{i}", "tenant-a", brief=f"brief number {i}")
    await _accept(store, "r-b0", "tenant-b")
    await _accept(store, "r-none", None)  # a foreground run (no tenant) is in no tenant's list
    index = RunIndex(store.r, store.keys)
    page = await index.page("tenant-a")
    assert [r.run_id for r in page.runs] == ["r-a4", "r-a3", "r-a2", "r-a1", "r-a0"] and page.next is None
    assert [r.run_id for r in (await index.page("tenant-b")).runs] == ["r-b0"]
    assert (await index.page("tenant-c")).runs == []
    assert (await index.page("")).runs == []


async def test_pages_cover_every_run_once_while_new_runs_arrive(store: RunStore) -> None:
    for i in range(7):
        await _accept(store, f"r-{i}", "tenant-a")
    index = RunIndex(store.r, store.keys)
    first = await index.page("tenant-a", limit=3)
    assert [r.run_id for r in first.runs] == ["r-6", "r-5", "r-4"] and first.next is not None
    await _accept(store, "r-new", "tenant-a")  # accepted between two pages: on top, shifts nothing
    rest = await _all_from(index, first.next)
    assert rest == ["r-3", "r-2", "r-1", "r-0"]


async def _all_from(index: RunIndex, cursor: Cursor) -> list[str]:
    out: list[str] = []
    current: Cursor | None = cursor
    while current is not None:
        page = await index.page("tenant-a", after=current, limit=3)
        out += [r.run_id for r in page.runs]
        current = page.next
    return out


async def test_runs_accepted_at_the_same_instant_are_paged_by_id(store: RunStore) -> None:
    for i in range(5):
        await _accept(store, f"r-t{i}", "tenant-a")
    await store.r.zadd(store.keys.tenant_runs("tenant-a"), {f"r-t{i}": 1000.0 for i in range(5)})
    index = RunIndex(store.r, store.keys)
    assert await _all(index, "tenant-a", limit=1) == ["r-t4", "r-t3", "r-t2", "r-t1", "r-t0"]
    assert await _all(index, "tenant-a", limit=2) == ["r-t4", "r-t3", "r-t2", "r-t1", "r-t0"]


async def test_filters_by_status_and_text(store: RunStore) -> None:
    await _accept(store, "r-1", "tenant-a", brief="A Potion Shop tycoon")
    await _accept(store, "r-2", "tenant-a", brief="a space shooter")
    await _accept(store, "r-3", "tenant-a", brief="a bakery")
    await store.update_run("r-2", status="running")
    await finish_run(store, "r-3", RunEnd(status="failed", stop_reason="test"))
    index = RunIndex(store.r, store.keys)
    assert [r.run_id for r in (await index.page("tenant-a", statuses={"running"})).runs] == ["r-2"]
    assert [r.run_id for r in (await index.page("tenant-a", statuses={"queued", "failed"})).runs] == ["r-3", "r-1"]
    assert [r.run_id for r in (await index.page("tenant-a", text="potion shop")).runs] == ["r-1"]  # any case
    assert [r.run_id for r in (await index.page("tenant-a", text="R-3")).runs] == ["r-3"]  # the id too
    assert (await index.page("tenant-a", text="shooter", statuses={"failed"})).runs == []
    assert await _all(index, "tenant-a", limit=1, text="a") == ["r-3", "r-2", "r-1"]


async def test_a_page_reads_a_bounded_number_of_runs_and_says_where_to_go_on(store: RunStore) -> None:
    await _accept(store, "r-match", "tenant-a", brief="the one rare brief")
    for i in range(30):
        await _accept(store, f"r-{i:02d}", "tenant-a", brief="common")
    index = RunIndex(store.r, store.keys)
    page = await index.page("tenant-a", text="rare", scan=10)
    assert page.runs == [] and page.scanned == 10 and page.next is not None
    found: list[str] = []
    cursor: Cursor | None = page.next
    while cursor is not None:
        page = await index.page("tenant-a", after=cursor, text="rare", scan=10)
        found += [r.run_id for r in page.runs]
        cursor = page.next
    assert found == ["r-match"]


async def test_an_unreadable_or_foreign_record_is_skipped(store: RunStore) -> None:
    await _accept(store, "r-ok", "tenant-a")
    await _accept(store, "r-bad", "tenant-a")
    await _accept(store, "r-b", "tenant-b")
    await store.r.set(store.keys.run("r-bad"), "{not json")
    await store.r.zadd(store.keys.tenant_runs("tenant-a"), {"r-b": 9e9, "r-gone": 9e9})  # planted entries
    page = await RunIndex(store.r, store.keys).page("tenant-a")
    assert [r.run_id for r in page.runs] == ["r-ok"]


async def test_backfill_lists_runs_accepted_before_the_index_once(store: RunStore) -> None:
    for run_id, tenant in (("r-1", "tenant-a"), ("r-2", "tenant-b"), ("r-3", "tenant-a"), ("r-4", None)):
        await _accept(store, run_id, tenant)
    for tenant in ("tenant-a", "tenant-b"):  # as a store written by the previous version
        await store.r.delete(store.keys.tenant_runs(tenant))
    index = RunIndex(store.r, store.keys)
    assert (await index.page("tenant-a")).runs == []
    assert await index.backfill() == 3
    assert [r.run_id for r in (await index.page("tenant-a")).runs] == ["r-3", "r-1"]
    assert [r.run_id for r in (await index.page("tenant-b")).runs] == ["r-2"]
    scores = dict(await store.r.zrange(store.keys.tenant_runs("tenant-a"), 0, -1, withscores=True))
    record = json.loads(await store.r.get(store.keys.run("r-1")))
    assert scores["r-1"] == pytest.approx(record["created_at"])  # listed at its acceptance time
    await store.r.delete(store.keys.tenant_runs("tenant-a"))
    assert await index.backfill() == 0  # once: the marker says it is done
