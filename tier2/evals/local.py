"""The local backend: runs accepted by the submit use case (`tier2.runs.submit.submit_run`, the local tenant, an
idempotency key per step) and executed by in-process workers (`tier2.runs.process.worker.Worker`, like
``tier2 serve --workers``) on the same Redis as ``tier2 generate`` (``REDIS_URL``, else the embedded one under the
workspaces). The same gates, the same budget ledger, the same durability: a run interrupted with the eval is
reclaimed by the next eval's worker once its lease expires.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from tier2.errors import BadInput, Conflict
from tier2.evals.rows import RunFacts
from tier2.evals.runner import Rejected
from tier2.hostio import ProjectDir
from tier2.runs.process.runtime import Runtime, open_runtime
from tier2.runs.process.worker import Worker
from tier2.runs.queries import run_delivery
from tier2.runs.submit import RunSubmission, submit_run
from tier2.runs.tenancy import TenantLimitExceeded
from tier2.settings.loader import BudgetOverride, Settings
from tier2.settings.tenants import LOCAL_TENANT
from tier2.store.lifecycle import is_terminal

__all__ = ["LocalBackend", "local_backend"]

_POLL_S = 0.5
_MAX_SHOT_BYTES = 20_000_000


class LocalBackend:
    where = "local"

    def __init__(self, rt: Runtime, budget: BudgetOverride | None, pack: str | None = None) -> None:
        self.rt, self.budget, self.pack = rt, budget, pack  # pack: the suite's (None: the default)

    async def submit(self, text: str, model: str | None, key: str, thread_id: str | None) -> tuple[str, str]:
        sub = RunSubmission(tenant=LOCAL_TENANT, brief=text, model=model, thread_id=thread_id, budget=self.budget,
                            idempotency_key=key, pack=self.pack)
        while True:
            try:
                res = await submit_run(self.rt, sub)
                return res.run.run_id, res.run.thread_id
            except TenantLimitExceeded as exc:  # the tenant's queue or rate limit: wait as a client would
                await asyncio.sleep(min(float(exc.retry_after or 2), 30.0))
            except Conflict as exc:
                if "one writer per project" not in str(exc):
                    raise
                await asyncio.sleep(1.0)  # the thread's previous run still holds the project
            except BadInput as exc:  # the brief itself (too short, too long): refused at the door
                if not str(exc).startswith("brief "):
                    raise  # a route or a budget the eval was given: bad input of the eval (exit 2)
                raise Rejected(str(exc)) from exc

    async def wait(self, run_id: str) -> RunFacts:
        store = self.rt.store
        while True:
            record = await store.get_record(run_id)
            if record is not None and is_terminal(record.status):
                break
            await asyncio.sleep(_POLL_S)
        try:
            record, delivery = await run_delivery(self.rt, LOCAL_TENANT, run_id)
        except Conflict:
            delivery = {}
        events = await store.read_events(run_id, after=0, count=100_000)
        fixes = sum(1 for _, e in events
                    if e.type == "phase_changed" and e.phase == "implement" and e.detail.startswith("fix round"))
        return RunFacts(run_id=run_id, status=record.status, stop_reason=record.stop_reason, delivery=delivery,
                        fix_rounds=fixes, project_dir=record.project_dir,
                        delivery_path=str(Path(record.project_dir) / "delivery.json") if record.project_dir else None)

    async def screenshot(self, facts: RunFacts) -> bytes | None:
        shot, project = facts.delivery.get("screenshot"), facts.project_dir
        if not isinstance(shot, str) or not project:
            return None
        try:
            rel = Path(shot).resolve().relative_to(Path(project).resolve())
        except ValueError:
            return None  # not the project's own file: never read it
        try:
            return await asyncio.to_thread(ProjectDir(Path(project)).read_bytes, str(rel), max_bytes=_MAX_SHOT_BYTES)
        except OSError:
            return None


@contextlib.asynccontextmanager
async def local_backend(settings: Settings, redis_url: str, *, concurrency: int,
                        budget: BudgetOverride | None, pack: str | None = None) -> AsyncIterator[LocalBackend]:
    """A runtime on ``redis_url`` with one in-process worker running ``concurrency`` runs at a time."""
    async with open_runtime(settings, redis_url) as rt:
        stop = asyncio.Event()
        worker = Worker(rt, concurrency=max(1, concurrency))
        task = asyncio.create_task(worker.serve(stop))
        try:
            yield LocalBackend(rt, budget, pack)
        finally:
            stop.set()
            with contextlib.suppress(asyncio.CancelledError):
                await task
