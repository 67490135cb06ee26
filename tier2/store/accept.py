"""Accepting a run: ordered, idempotent steps, each one script on one slot (a Redis Cluster refuses a script over
two), so a crash between two steps and a retry — or the reconciler — converge on one run or none.

The keys of an acceptance live in five slots: the run's (record, `Keys.run_accept`), the project's (one-writer
marker), the tenant's (idempotency record, run index, admission sets), the thread's and the globals' / the
dispatcher's. The steps, in order:

1. **register** (global): the run id into `Keys.accepting` (what the reconciler walks);
2. **begin** (run): the record (``SET NX``) and the plan (what the later steps write) in `Keys.run_accept`;
3. **claim** (project): the one-writer marker, taken when free or when it names the run the caller saw ended
   (a compare-and-set: a marker that changed meanwhile is ``busy``);
4. **commit** (tenant) — *the commit point*: the idempotency record (a key used already → ``replay``), the
   admission (``queue_full`` / ``rate_limited``; the active set was pruned of ended runs just before), the
   tenant's run index; written together or not at all;
5. **mark** (run): ``committed`` in the plan — refused when the reconciler aborted the acceptance meanwhile
   (the caller then undoes its commit and answers 503: no 202 for a run that is gone);
6. then, rolled forward by whoever gets there (the caller, a retry, the reconciler), each idempotent: the thread
   (``SET NX`` + its run list once), the runs index, the dispatch entry (`ENQUEUE_LUA`: once per run), and the
   plan deleted and the run id out of `Keys.accepting` (with ``WAIT`` for the replicas, on one server or
   Sentinel: the replication offset is the primary's, so it covers every step).

Before the commit point a refusal undoes steps 3–1 (the marker only if it names this run); after it, nothing is
undone. `complete_accepts` (worker and service start, and after every run a worker ends) finds acceptances older
than a grace period that stopped half-way: committed (``committed`` or the tenant's commit found) → rolled
forward; not → aborted (in the run's slot, atomically with the check that it was not committed) and undone.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Literal

import redis.asyncio as aioredis

from tier2.store.dispatch import ENQUEUE_LUA
from tier2.store.keys import Keys
from tier2.store.quotas import ADMIT_LUA, Admission, ended_runs, prune_ended
from tier2.store.replies import opt_text, text

__all__ = ["ACCEPT_GRACE_S", "AcceptAborted", "AcceptOutcome", "AcceptPlan", "Accepted", "Acceptor"]

AcceptOutcome = Literal["created", "replay", "busy", "queue_full", "rate_limited", "not_replicated"]

#: how old an acceptance in progress must be before the reconciler completes or undoes it (a live acceptance
#: takes milliseconds; the resilient client rides out about 20 s of outage)
ACCEPT_GRACE_S = 120.0
#: how long an aborted acceptance's plan stays (a stalled caller must still find it aborted)
_ABORTED_TTL_S = 86_400

# KEYS: run, plan. ARGV: record JSON, plan JSON.
_BEGIN = """
local state = redis.call('HGET', KEYS[2], 'state')
if state then return state end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'done' end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'plan', ARGV[2], 'state', 'begun')
return 'begun'
"""
# KEYS: marker. ARGV: run id, the ended holder the caller saw ('' = none).
_CLAIM = """
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then return {'ok', ''} end
if not cur or cur == ARGV[2] then redis.call('SET', KEYS[1], ARGV[1]) return {'ok', ''} end
return {'busy', cur}
"""
# KEYS: idempotency record, tenant runs, active set, submissions (each present when its flag in ARGV[5] is 1).
# ARGV: run id, idempotency JSON, created_at, admission JSON ('' = none), flags 'idem runs quota' as 3 chars.
_COMMIT = ADMIT_LUA + """
local n, idem, runs, active, rate = 1, nil, nil, nil, nil
if string.sub(ARGV[5], 1, 1) == '1' then idem = KEYS[n]; n = n + 1 end
if string.sub(ARGV[5], 2, 2) == '1' then runs = KEYS[n]; n = n + 1 end
if string.sub(ARGV[5], 3, 3) == '1' then active = KEYS[n]; rate = KEYS[n + 1] end
if idem then
  local existing = redis.call('GET', idem)
  if existing then
    local ok, rec = pcall(cjson.decode, existing)
    if ok and type(rec) == 'table' and rec['run_id'] == ARGV[1] then return {'created', ''} end
    return {'replay', existing}
  end
end
if runs and redis.call('ZSCORE', runs, ARGV[1]) then return {'created', ''} end
local quota = nil
if active then
  quota = cjson.decode(ARGV[4])
  if redis.call('SISMEMBER', active, ARGV[1]) == 1 then return {'created', ''} end
  local refused = tenant_admit(quota, active, rate)
  if refused then return refused end
end
if idem then redis.call('SET', idem, ARGV[2]) end
if runs then redis.call('ZADD', runs, ARGV[3], ARGV[1]) end
if quota then tenant_admitted(quota, active, rate, ARGV[1]) end
return {'created', ''}
"""
# KEYS: the same as _COMMIT. ARGV: run id, flags. Undoes a commit of this run (the acceptance was aborted).
_UNCOMMIT = """
local n = 1
if string.sub(ARGV[2], 1, 1) == '1' then
  local existing = redis.call('GET', KEYS[n])
  if existing then
    local ok, rec = pcall(cjson.decode, existing)
    if ok and type(rec) == 'table' and rec['run_id'] == ARGV[1] then redis.call('DEL', KEYS[n]) end
  end
  n = n + 1
end
if string.sub(ARGV[2], 2, 2) == '1' then redis.call('ZREM', KEYS[n], ARGV[1]); n = n + 1 end
if string.sub(ARGV[2], 3, 3) == '1' then
  redis.call('SREM', KEYS[n], ARGV[1])
  redis.call('ZREM', KEYS[n + 1], ARGV[1])
end
return 1
"""
# KEYS: plan. Returns 'committed', or 'aborted' when the reconciler aborted it first.
_MARK = """
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'aborted' then return 'aborted' end
redis.call('HSET', KEYS[1], 'state', 'committed')
return 'committed'
"""
# KEYS: run, plan. ARGV: ttl. Returns 'aborted' (the record is gone), or 'committed' (too late: roll forward).
_ABORT = """
local state = redis.call('HGET', KEYS[2], 'state')
if state == 'committed' then return 'committed' end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[2], 'state', 'aborted')
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 'aborted'
"""
# KEYS: thread, thread runs. ARGV: thread JSON, run id.
_THREAD = """
redis.call('SET', KEYS[1], ARGV[1], 'NX')
if not redis.call('LPOS', KEYS[2], ARGV[2]) then redis.call('RPUSH', KEYS[2], ARGV[2]) end
return 1
"""
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


@dataclass(frozen=True)
class Accepted:
    """Outcome of `RunStore.accept_run`: ``created``, ``replay`` (same Idempotency-Key), ``busy`` (project), or
    a tenant limit (`store.quotas`): ``queue_full`` (``detail``: runs in flight) or ``rate_limited``
    (``detail``: time in ms of the oldest submission in the window); ``not_replicated``: written on the primary,
    but fewer than `Durability.min_replicas` replicas acknowledged it in time (``detail``: how many did)."""

    outcome: AcceptOutcome
    idempotency: dict[str, Any] | None = None
    active_run: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class AcceptPlan:
    """What an acceptance writes after its record (stored with it: the reconciler rolls it forward)."""

    run_id: str
    project_id: str
    tenant: str | None
    created_at: float
    dispatch: bool
    idem_key: str | None = None
    idem_json: str = ""
    thread_id: str = ""
    thread_json: str = ""
    admission: str = ""  # the admission's script config JSON ('' = none)
    quota_tenant: str = ""  # the tenant the admission counts

    def dump(self) -> str:
        return json.dumps(self.__dict__)

    @classmethod
    def load(cls, raw: str) -> AcceptPlan:
        return cls(**json.loads(raw))

    def commit_keys(self, keys: Keys) -> tuple[list[str], str]:
        """The tenant step's keys and flags (``idem runs quota``)."""
        out, flags = [], ""
        if self.idem_key is not None:
            out.append(keys.idempotency(self.tenant or "", self.idem_key))
        flags += "1" if self.idem_key is not None else "0"
        if self.tenant:
            out.append(keys.tenant_runs(self.tenant))
        flags += "1" if self.tenant else "0"
        if self.admission:
            out += [keys.tenant_active(self.quota_tenant), keys.tenant_submissions(self.quota_tenant)]
        flags += "1" if self.admission else "0"
        return out, flags


class Acceptor:
    """The acceptance steps over one client (`RunStore.accept_run` drives them; `complete_accepts` finishes)."""

    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.r, self.keys = client, keys
        self._begin = client.register_script(_BEGIN)
        self._claim = client.register_script(_CLAIM)
        self._commit = client.register_script(_COMMIT)
        self._uncommit = client.register_script(_UNCOMMIT)
        self._mark = client.register_script(_MARK)
        self._abort = client.register_script(_ABORT)
        self._thread = client.register_script(_THREAD)
        self._enqueue = client.register_script(ENQUEUE_LUA)
        self._release = client.register_script(_RELEASE)

    async def accept(self, plan: AcceptPlan, record_json: str, admission: Admission | None,
                     min_replicas: int = 0, replica_timeout_ms: int = 1000) -> Accepted:
        k, rid = self.keys, plan.run_id
        if plan.idem_key is not None:  # the common replay answered before anything is written
            existing = opt_text(await self.r.get(k.idempotency(plan.tenant or "", plan.idem_key)))
            if existing is not None and json.loads(existing).get("run_id") != rid:
                return Accepted("replay", idempotency=json.loads(existing))
        holder = opt_text(await self.r.get(k.project_active(plan.project_id)))
        stale = ""
        if holder and holder != rid:
            if not await ended_runs(self.r, k, [holder]):
                return Accepted("busy", active_run=holder)
            stale = holder
        if admission is not None:
            await prune_ended(self.r, k, k.tenant_active(admission.tenant))
        await self.r.zadd(k.accepting(), {rid: time.time()})
        state = text(await self._begin(keys=[k.run(rid), k.run_accept(rid)], args=[record_json, plan.dump()]))
        if state == "done":  # a retried call of an acceptance that completed
            return await self._finish(plan, min_replicas, replica_timeout_ms)
        if state == "aborted":
            raise AcceptAborted(rid)
        if state == "begun":
            busy, owner = await self._claim(keys=[k.project_active(plan.project_id)], args=[rid, stale])
            if text(busy) == "busy":
                await self._undo(plan)
                return Accepted("busy", active_run=text(owner))
            ckeys, flags = plan.commit_keys(k)
            outcome, extra = "created", ""
            if ckeys:
                outcome, extra = await self._commit(keys=ckeys, args=[rid, plan.idem_json, plan.created_at,
                                                                      plan.admission, flags])
            if text(outcome) != "created":
                await self._undo(plan)
                return _refused(text(outcome), text(extra))
            if text(await self._mark(keys=[k.run_accept(rid)])) == "aborted":
                await self._uncommit_tenant(plan)
                await self._undo(plan)
                raise AcceptAborted(rid)
        return await self._finish(plan, min_replicas, replica_timeout_ms)

    async def _finish(self, plan: AcceptPlan, min_replicas: int = 0, replica_timeout_ms: int = 1000) -> Accepted:
        """Steps 6: every one idempotent (a retry or the reconciler may run them again)."""
        k, rid = self.keys, plan.run_id
        if plan.thread_id:
            await self._thread(keys=[k.thread(plan.thread_id), k.thread_runs(plan.thread_id)],
                               args=[plan.thread_json, rid])
        await self.r.zadd(k.runs_index(), {rid: plan.created_at})
        if plan.dispatch:
            await self._enqueue(keys=[k.dispatch_enqueued(), k.dispatch()], args=[rid, plan.tenant or ""])
        await self.r.delete(k.run_accept(rid))
        idem = json.loads(plan.idem_json) if plan.idem_json else None
        if min_replicas <= 0:
            await self.r.zrem(k.accepting(), rid)
            return Accepted("created", idempotency=idem)
        # WAIT counts its own connection's writes; the primary's replication offset covers every earlier step
        async with self.r.pipeline(transaction=False) as p:
            p.zrem(k.accepting(), rid)
            p.execute_command("WAIT", min_replicas, replica_timeout_ms)
            _removed, acked = await p.execute()
        if int(acked) < min_replicas:
            return Accepted("not_replicated", idempotency=idem, detail=str(acked))
        return Accepted("created", idempotency=idem)

    async def _undo(self, plan: AcceptPlan) -> None:
        """Undo steps 3–1 of an acceptance that did not commit (the marker only if it names this run)."""
        k, rid = self.keys, plan.run_id
        await self._release(keys=[k.project_active(plan.project_id)], args=[rid])
        if text(await self._abort(keys=[k.run(rid), k.run_accept(rid)], args=[_ABORTED_TTL_S])) == "committed":
            await self._finish(plan)  # committed after all (a concurrent reconciler): roll forward instead
            return
        await self.r.zrem(k.accepting(), rid)

    async def _uncommit_tenant(self, plan: AcceptPlan) -> None:
        ckeys, flags = plan.commit_keys(self.keys)
        if ckeys:
            await self._uncommit(keys=ckeys, args=[plan.run_id, flags])

    async def _committed_at_tenant(self, plan: AcceptPlan) -> bool:
        k, rid = self.keys, plan.run_id
        if plan.tenant and await self.r.zscore(k.tenant_runs(plan.tenant), rid) is not None:
            return True
        if plan.idem_key is not None:
            raw = opt_text(await self.r.get(k.idempotency(plan.tenant or "", plan.idem_key)))
            return raw is not None and json.loads(raw).get("run_id") == rid
        return False

    async def complete_accepts(self, grace_s: float = ACCEPT_GRACE_S) -> dict[str, str]:
        """Finish every acceptance older than ``grace_s`` that stopped half-way: run id -> ``completed`` (rolled
        forward) or ``undone``."""
        k = self.keys
        done: dict[str, str] = {}
        due: list[bytes | str] = await self.r.zrangebyscore(k.accepting(), "-inf", time.time() - grace_s)  # type: ignore[assignment]  # redis-py: ZRANGE reply union
        for raw_id in due:
            rid = text(raw_id)
            raw_plan = opt_text(await self.r.hget(k.run_accept(rid), "plan"))
            state = opt_text(await self.r.hget(k.run_accept(rid), "state"))
            if raw_plan is None:  # registered only, or completed but for the last step
                await self.r.zrem(k.accepting(), rid)
                done[rid] = "completed" if await self.r.exists(k.run(rid)) else "undone"
                continue
            plan = AcceptPlan.load(raw_plan)
            if state == "begun" and await self._committed_at_tenant(plan):
                state = text(await self._mark(keys=[k.run_accept(rid)]))
            if state == "committed":
                await self._finish(plan)
                done[rid] = "completed"
                continue
            await self._undo(plan)  # aborts in the run's slot unless it committed meanwhile
            if text(await self.r.hget(k.run_accept(rid), "state") or "") == "aborted":
                await self._uncommit_tenant(plan)  # a commit that raced the abort: its caller may be gone
                done[rid] = "undone"
            else:
                done[rid] = "completed"
        return done


class AcceptAborted(Exception):
    """The reconciler aborted this acceptance while it stalled (nothing of it is left): answer 503, let the
    client retry."""


def _refused(outcome: str, extra: str) -> Accepted:
    if outcome == "replay":
        return Accepted("replay", idempotency=json.loads(extra))
    if outcome == "queue_full":
        return Accepted("queue_full", detail=extra)
    return Accepted("rate_limited", detail=extra)
