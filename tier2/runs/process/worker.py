"""Workers: take accepted runs from the dispatch stream and execute them under a fenced, heartbeated lease.

Flow per dispatch entry (consumer group `DISPATCH_GROUP` on `Keys.dispatch`):

1. Reclaim first: ``XAUTOCLAIM`` hands over entries idle longer than the lease TTL — their worker stopped
   heartbeating (a live holder re-claims its own entry on every heartbeat, which resets the idle time). Else
   take a new run, round-robin over tenants within their ``max_running`` (`tier2.store.dispatch`).
2. Acquire the run's lease: a new attempt with a fencing token larger than any before. While another attempt's
   lease lives, leave the entry alone.
3. Resume after the newest checkpoint (attempt > 1), run, heartbeat (renew the lease, watch the cancel flag).
   Losing the lease cancels the attempt; its late writes are refused by the fence anyway.
4. Acknowledge the entry only once the run is terminal. An attempt past ``max_attempts`` ends the run
   ``failed`` with a reason instead of running it again: no run stays "running" because its worker died.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import socket
import time
import uuid
from pathlib import Path
from typing import Any

from redis.exceptions import RedisError

from tier2.errors import StaleLease
from tier2.hostio import ProjectDir
from tier2.middleware.checkpoint import restorable_state
from tier2.runs.generate import Resume, RunRequest, execute_run
from tier2.runs.process.handover import sweep_run_containers
from tier2.runs.process.policy import RunPolicy, run_policy
from tier2.runs.process.runtime import Runtime
from tier2.runs.request import crash_reason
from tier2.settings.tenants import TenantLimits
from tier2.store.checkpoints import CheckpointStore, resume_stage
from tier2.store.dispatch import Dispatcher
from tier2.store.finish import RunEnd, finish_run
from tier2.store.leases import AttemptOutcome, Lease, LeaseStore
from tier2.store.lifecycle import is_terminal
from tier2.store.records import RunRecord
from tier2.store.retention import RetentionSweep
from tier2.store.snapshot_gc import SnapshotGC

__all__ = ["Worker", "ensure_group", "worker_name"]

log = logging.getLogger(__name__)


def worker_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


async def ensure_group(rt: Runtime) -> None:
    """The dispatch stream's consumer group (`Dispatcher.ensure_group`)."""
    await Dispatcher(rt.store.r, rt.store.keys, {}).ensure_group()


def _recorded_pack(options: dict[str, Any]) -> str | None:
    """The pack recorded with the run at submission (``options.pack``; None: a run accepted before packs were
    recorded, which uses its project's or the default)."""
    pack = options.get("pack")
    return pack if isinstance(pack, str) and pack else None


class Worker:
    """One consumer of the dispatch stream, running up to ``concurrency`` runs at a time."""

    def __init__(self, rt: Runtime, name: str | None = None, *, concurrency: int = 1, block_ms: int = 1000) -> None:
        self.rt, self.name, self.concurrency, self.block_ms = rt, name or worker_name(), concurrency, block_ms
        self.leases = LeaseStore(rt.store.r, rt.store.keys)
        self.dispatcher = Dispatcher(rt.store.r, rt.store.keys, rt.security.tenants.max_running_table())
        self.running: dict[str, asyncio.Task[None]] = {}
        self.finished = 0

    async def serve(self, stop: asyncio.Event) -> None:
        """Take runs until ``stop`` is set; then interrupt running attempts (their runs resume elsewhere)."""
        await self.dispatcher.ensure_group()
        await self._collect_snapshots()
        await self._bound_retention()
        await self._complete_accepts()
        await sweep_run_containers(self.rt)  # executors of attempts that died with an earlier worker
        log.info("worker %s consuming %s", self.name, self.rt.store.keys.dispatch())
        try:
            while not stop.is_set():
                if len(self.running) >= self.concurrency:
                    await asyncio.wait(list(self.running.values()), timeout=self.block_ms / 1000,
                                       return_when=asyncio.FIRST_COMPLETED)
                    continue
                try:
                    entry = await self._next()
                except (RedisError, OSError) as exc:  # Redis restarting: keep trying, lose nothing
                    log.warning("worker %s: redis unavailable (%s); retrying", self.name, exc)
                    await asyncio.sleep(0.5)
                    continue
                if entry is not None:
                    entry_id, run_id = entry
                    if run_id in self.running:
                        continue
                    task = asyncio.create_task(self._handle(entry_id, run_id))
                    self.running[run_id] = task
                    task.add_done_callback(functools.partial(self._forget, run_id))
        finally:
            tasks = list(self.running.values())
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _bound_retention(self) -> None:
        """The retention backstop at worker start (`tier2.store.retention`); a failure is logged (the next start
        retries; runs ending from now on get their bound as they end)."""
        store = self.rt.store
        try:
            swept = await RetentionSweep(store.r, store.keys, store.retention_s).run()
            if swept.bounded or swept.pruned:
                log.info("worker %s: retention bound %d ended run(s), dropped %d expired index entries", self.name,
                         swept.bounded, swept.pruned)
        except (RedisError, OSError) as exc:
            log.warning("worker %s: retention sweep failed (%s)", self.name, exc)

    async def _complete_accepts(self) -> None:
        """Acceptances a crash stopped half-way (`tier2.store.accept`): rolled forward or undone, at worker start
        and after every run this worker ends. A failure is logged: the next call retries."""
        try:
            done = await self.rt.store.complete_accepts()
            if done:
                log.info("worker %s: completed or undid %d interrupted acceptance(s): %s", self.name, len(done),
                         ", ".join(f"{rid} {how}" for rid, how in sorted(done.items())))
        except (RedisError, OSError) as exc:
            log.warning("worker %s: completing interrupted acceptances failed (%s)", self.name, exc)

    async def _collect_snapshots(self) -> None:
        """One snapshot GC pass over every tenant when the worker starts (runs that ended without a session to
        collect after them — given up, cancelled while queued — and snapshot keys from before tenants, which get
        the default TTL). A failure is logged: the passes after each run and the TTLs catch up."""
        try:
            await SnapshotGC(self.rt.store.r, self.rt.store.keys).collect_all(
                legacy_ttl_s=TenantLimits().snapshot_ttl_s)
        except (RedisError, OSError) as exc:
            log.warning("worker %s: snapshot GC pass failed (%s)", self.name, exc)

    async def _next(self) -> tuple[str, str] | None:
        ttl_ms = int(self.rt.policies.snapshot().durability.lease_ttl_s * 1000)
        reclaimed = await self.dispatcher.reclaim(self.name, ttl_ms, skip=self.running)
        if reclaimed is not None:
            return reclaimed
        return await self.dispatcher.take(self.name, self.block_ms)  # fair across tenants (store.dispatch)

    async def _ack(self, entry_id: str) -> None:
        await self.dispatcher.ack(entry_id)
        try:  # the stream keeps only what a worker may still need (store.dispatch, "Trimming")
            await self.dispatcher.trim()
        except (RedisError, OSError) as exc:
            log.warning("worker %s: dispatch stream trim failed (%s); the next run's end retries", self.name, exc)
        await self._complete_accepts()

    async def _handle(self, entry_id: str, run_id: str) -> None:
        store = self.rt.store
        record = await store.get_record(run_id)
        if record is None or is_terminal(record.status):
            await self._ack(entry_id)  # nothing (left) to do
            return
        taken = await run_policy(self.rt, run_id)  # a started run's own snapshot: its attempts, lease and TTL
        policy = taken.policy.durability
        ttl_ms = int(policy.lease_ttl_s * 1000)
        lease = await self.leases.acquire(run_id, self.name, ttl_ms, {"pid": os.getpid(),
                                                                      "host": socket.gethostname()})
        if isinstance(lease, str):
            return  # another attempt is alive; its worker acknowledges the entry when the run ends
        if lease.token > policy.max_attempts:
            reason = await self._give_up(lease, policy.max_attempts)
            await self._ack(entry_id)
            await self._close(lease, "finished", reason)
            return
        cancel = asyncio.Event()
        lost = asyncio.Event()
        attempt = asyncio.create_task(self._attempt(lease, record, cancel, taken))
        beat = asyncio.create_task(self._heartbeat(lease, entry_id, ttl_ms, policy.heartbeat_s, cancel, lost,
                                                   attempt))
        outcome: AttemptOutcome = "interrupted"
        try:
            await attempt
            outcome = "cancelled" if cancel.is_set() else "finished"
            await self._ack(entry_id)
            self.finished += 1
        except StaleLease as exc:
            outcome = "superseded"
            log.warning("worker %s: %s", self.name, exc)
        except asyncio.CancelledError:
            if not lost.is_set() and not attempt.done():
                attempt.cancel()
                await asyncio.gather(attempt, return_exceptions=True)
            if lost.is_set():
                outcome = "lease_lost"
            else:
                raise  # worker shutdown: the lease is released below, another worker resumes the run
        except Exception as exc:  # noqa: BLE001 - no silent failure: end the run visibly
            log.exception("worker %s: run %s crashed outside the run loop", self.name, run_id)
            outcome = "crashed"
            await self._fail(lease, crash_reason("worker_error", exc))
            await self._ack(entry_id)
        finally:
            beat.cancel()
            await asyncio.gather(beat, return_exceptions=True)
            await self._close(lease, outcome)

    async def _close(self, lease: Lease, outcome: AttemptOutcome, detail: str = "") -> None:
        """The attempt's record gets its outcome and ``ended_at``; its lease is released."""
        try:
            await self.leases.end_attempt(lease, outcome, detail)
            await self.leases.release(lease)
        except (RedisError, OSError) as exc:
            log.warning("worker %s: could not close attempt %s of %s: %s", self.name, lease.token, lease.run_id, exc)

    def _forget(self, run_id: str, _task: asyncio.Task[None]) -> None:
        self.running.pop(run_id, None)

    async def _attempt(self, lease: Lease, record: RunRecord, cancel: asyncio.Event,
                       policy: RunPolicy | None = None) -> None:
        store, run_id = self.rt.store, lease.run_id
        resume = await self._resume_point(run_id) if lease.token > 1 else None
        thread_id = record.thread_id
        initial = None
        if resume is None and record.continues_thread and thread_id:
            initial = await store.get_thread_state(thread_id)
        source = record.source_dir
        planned = Path(record.project_dir) if record.project_dir else None
        if source is None and planned is not None and ProjectDir(planned).is_file(".tier2/project.json"):
            source = str(planned)  # an earlier attempt created it: keep its files
        if await store.cancel_requested(run_id):
            cancel.set()
        req = RunRequest(brief=record.brief, model=record.model_route, run_id=run_id,
                         project_id=record.project_id, out_dir=planned, cancel=cancel,
                         existing_project=Path(source) if source else None, initial_state=initial,
                         fence=lease.fence, worker=self.name, resume=resume, options=dict(record.options),
                         pack=_recorded_pack(record.options),
                         pause_after=record.pause_after, policy=policy)
        outcome = await execute_run(self.rt, req)
        if outcome.agent_state and thread_id:
            await store.save_thread_state(thread_id, outcome.agent_state)

    async def _resume_point(self, run_id: str) -> Resume | None:
        latest = await CheckpointStore(self.rt.store.r, self.rt.store.keys, run_id).latest()
        if latest is None:
            return None
        number, state, meta = latest
        return Resume(checkpoint=number, state_json=restorable_state(state), round=int(meta.get("round", 0)),
                      stage=resume_stage(meta.get("stage")), usage=meta.get("usage") or {},
                      step=int(meta.get("step", 0)))

    async def _heartbeat(self, lease: Lease, entry_id: str, ttl_ms: int, every_s: float, cancel: asyncio.Event,
                         lost: asyncio.Event, attempt: asyncio.Task[None]) -> None:
        r, k = self.rt.store.r, self.rt.store.keys
        cancel_key = k.run_cancel(lease.run_id)
        last_beat = time.monotonic()
        while not attempt.done():
            await asyncio.sleep(min(every_s, 0.5))
            try:
                if not cancel.is_set() and await r.exists(cancel_key):
                    cancel.set()
                    attempt.cancel()  # reaches the in-flight model call; the run ends "stopped"
                if time.monotonic() - last_beat < every_s:
                    continue
                last_beat = time.monotonic()
                if not await self.leases.renew(lease, ttl_ms):
                    log.warning("worker %s lost its lease on %s (attempt %s)", self.name, lease.run_id, lease.token)
                    lost.set()
                    attempt.cancel()
                    return
                await self.dispatcher.keep(self.name, entry_id)
                await r.hset(k.workers(), self.name, json.dumps({"at": time.time(), "run": lease.run_id}))
            except (RedisError, OSError) as exc:
                log.warning("worker %s: heartbeat failed (%s); retrying", self.name, exc)

    async def _give_up(self, lease: Lease, max_attempts: int) -> str:
        reason = (f"gave up after {max_attempts} attempts: each worker running it died or lost its lease before the "
                  "run ended (see GET /v1/runs/{id} attempts)")
        await self._fail(lease, reason)
        return reason

    async def _fail(self, lease: Lease, reason: str) -> None:
        """End the run ``failed`` through the one fenced finish (status, event and project marker together)."""
        try:
            await finish_run(self.rt.store, lease.run_id, RunEnd(status="failed", stop_reason=reason), lease.fence)
        except StaleLease:
            pass
