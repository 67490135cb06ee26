"""Use cases that read (or flag) a tenant's runs: the list, details with attempts, threads, cancel, the delivery,
the trajectory, the event stream, a loaded project (the files of a run's project: `tier2.runs.run_files`).

Every function takes the caller's tenant and reads through the store's tenant-scoped calls
(`RunStore.get_run_for`, ``get_thread_for``, ``get_project_for``): another tenant's id is `NotFound`, exactly
like an unknown one. The results are the stored data; what a tenant may see of it is the service's views.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tier2.errors import Conflict, NotFound
from tier2.events import TERMINAL_STATUSES, CancelRequested, Tier2Event
from tier2.hostio import ProjectDir
from tier2.runs.process.runtime import Runtime
from tier2.store.leases import LeaseStore
from tier2.store.records import ProjectRecord, RunRecord, ThreadRecord
from tier2.store.run_index import Cursor, RunIndex, RunPage
from tier2.store.run_store import RunStore
from tier2.store.trajectory import CallRecord, TrajectoryStore

#: the largest ``delivery.json`` the API reads
MAX_DELIVERY_BYTES = 8_000_000

__all__ = ["RunDetails", "ThreadDetails", "TrajectoryPage", "cancel_run", "follow_events", "list_runs",
           "project_details", "project_dir", "require_run", "run_delivery", "run_details", "run_trajectory",
           "thread_details"]


@dataclass(frozen=True)
class RunDetails:
    record: RunRecord
    attempts: list[dict[str, Any]]
    #: when the run's keys expire (epoch seconds; `tier2.store.retention`), None while it runs or when kept
    expires_at: float | None = None


@dataclass(frozen=True)
class ThreadDetails:
    thread_id: str
    thread: ThreadRecord
    runs: list[RunRecord]


@dataclass(frozen=True)
class TrajectoryPage:
    run_id: str
    total: int
    offset: int
    limit: int
    summary: dict[str, Any]
    calls: list[CallRecord]
    #: the run's project directory (to mask it in what is shown)
    project_dir: str | None = None


async def require_run(store: RunStore, tenant: str, run_id: str) -> RunRecord:
    """The tenant's run, or `NotFound`."""
    record = await store.get_run_for(tenant, run_id)
    if record is None:
        raise NotFound("unknown run")
    return record


async def list_runs(rt: Runtime, tenant: str, *, after: Cursor | None = None, statuses: frozenset[str] | None = None,
                    text: str | None = None, limit: int = 50) -> RunPage:
    """A page of the tenant's runs, newest first, filtered by status (any of) and text (in the brief or the id);
    ``next`` says where the following page starts. Only this tenant's runs are ever read."""
    return await RunIndex(rt.store.r, rt.store.keys).page(tenant, after=after, statuses=statuses, text=text,
                                                          limit=limit)


async def run_details(rt: Runtime, tenant: str, run_id: str) -> RunDetails:
    record = await require_run(rt.store, tenant, run_id)
    ttl = int(await rt.store.r.ttl(rt.store.keys.run(run_id)))
    return RunDetails(record, await LeaseStore(rt.store.r, rt.store.keys).attempts(run_id),
                      time.time() + ttl if ttl > 0 else None)


async def thread_details(rt: Runtime, tenant: str, thread_id: str) -> ThreadDetails:
    """The thread and its runs, oldest first."""
    thread = await rt.store.get_thread_for(tenant, thread_id)
    if thread is None:
        raise NotFound("unknown thread")
    runs = [r for run_id in await rt.store.thread_runs(thread_id)
            if (r := await rt.store.get_run_for(tenant, run_id)) is not None]
    return ThreadDetails(thread_id, thread, runs)


async def cancel_run(rt: Runtime, tenant: str, run_id: str) -> RunRecord:
    """Record "cancel requested" (durable flag, record field, event: one transaction, `RunStore.request_cancel`):
    the worker holding the run stops it within its heartbeat, a queued run stops when a worker takes it. `Conflict`
    once the run has ended."""
    record = await require_run(rt.store, tenant, run_id)
    if record.status in TERMINAL_STATUSES:
        raise Conflict(f"run {run_id} already ended: {record.status}")
    before = await rt.store.request_cancel(run_id, CancelRequested(run_id=run_id, by=tenant))  # one transaction
    if before is None:
        raise NotFound("unknown run")
    if before.status in TERMINAL_STATUSES:
        raise Conflict(f"run {run_id} already ended: {before.status}")
    return before


def project_dir(record: RunRecord) -> Path:
    """The run's project directory; `Conflict` while the run has not created it."""
    if not record.project_dir:
        raise Conflict("the run has not created its project yet")
    return Path(record.project_dir)


async def run_delivery(rt: Runtime, tenant: str, run_id: str) -> tuple[RunRecord, dict[str, Any]]:
    """The run and its ``delivery.json`` as stored (local paths included); `Conflict` until the run has ended."""
    record = await require_run(rt.store, tenant, run_id)
    if record.status not in TERMINAL_STATUSES:
        raise Conflict(f"run {run_id} is {record.status}: no delivery yet")
    pdir = ProjectDir(project_dir(record))
    try:  # never through a link the run's sandbox planted: it could name another tenant's delivery (tier2.hostio)
        raw = await asyncio.to_thread(pdir.read_bytes, "delivery.json", max_bytes=MAX_DELIVERY_BYTES)
    except FileNotFoundError:
        raise Conflict(f"run {run_id} is {record.status}: no delivery yet") from None
    except OSError as exc:
        raise Conflict(f"run {run_id} has no readable delivery: {exc}") from None
    try:
        delivery = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        delivery = None
    if not isinstance(delivery, dict):
        raise Conflict(f"run {run_id} has no readable delivery")
    return record, delivery


async def run_trajectory(rt: Runtime, tenant: str, run_id: str, kind: Literal["model", "tool", "case"] | None,
                         offset: int, limit: int) -> TrajectoryPage:
    """One page of the run's calls (in first-start order, optionally only one kind) and the totals of all."""
    record = await require_run(rt.store, tenant, run_id)
    calls = await TrajectoryStore(rt.store.r, rt.store.keys).read(run_id)
    selected = [c for c in calls if kind is None or c.kind == kind]
    plan = getattr(record, "plan", None)
    metrics = plan.get("metrics") if isinstance(plan, dict) else None
    summary = {**TrajectoryStore.summarize(calls), **({"plan": metrics} if isinstance(metrics, dict) else {})}
    return TrajectoryPage(run_id, len(selected), offset, limit, summary, selected[offset:offset + limit],
                          record.project_dir)


async def follow_events(store: RunStore, run_id: str, after: int, disconnected: Callable[[], Awaitable[bool]],
                        block_ms: int = 1000) -> AsyncIterator[tuple[int, Tier2Event] | None]:
    """The run's events after id ``after`` as they come, until ``run_finished`` (or the run is terminal with
    nothing left, or ``disconnected()``); ``None`` after each idle wait of ``block_ms`` (for keep-alives).
    The caller checks the tenant first (`require_run`)."""
    pos = after
    while True:
        batch = await store.wait_events(run_id, after=pos, block_ms=block_ms, count=500)
        for seq, event in batch:
            pos = seq
            yield seq, event
            if event.type == "run_finished":
                return
        if not batch:
            record = await store.get_record(run_id)
            status = record.status if record is not None else None
            if status in TERMINAL_STATUSES and not await store.read_events(run_id, after=pos):
                return
            if await disconnected():
                return
            yield None


async def project_details(rt: Runtime, tenant: str, project_id: str) -> ProjectRecord:
    """The tenant's project record (with its server path: the service shows a view), or `NotFound`."""
    record = await rt.store.get_project_for(tenant, project_id)
    if record is None:
        raise NotFound("unknown project")
    return record
