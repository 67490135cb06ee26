"""Run records and the per-run event log in Redis.

Each event gets a monotonic integer id per run: one Lua script increments the run's sequence, appends the
event to the run's stream under the id ``<seq>-0`` and publishes it, atomically — so readers resuming from
any id see no gap and no duplicate.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from tier2.errors import RedisUnavailable, StaleLease
from tier2.events import EVENT_ADAPTER, Tier2Event
from tier2.store.accept import ACCEPT_GRACE_S, AcceptAborted, Accepted, Acceptor, AcceptOutcome, AcceptPlan
from tier2.store.connect import connect
from tier2.store.keys import SCHEMA_VERSION, Keys
from tier2.store.lifecycle import TERMINAL, check_transition
from tier2.store.quotas import Admission
from tier2.store.records import (
    RUN_RECORD_VERSION,
    ProjectFields,
    ProjectRecord,
    RunRecord,
    ThreadFields,
    ThreadRecord,
    load_run_record,
)
from tier2.store.replies import opt_text, stream_entries, text, texts, xread_entries

__all__ = ["ID_PATTERN", "AcceptOutcome", "Accepted", "Durability", "Fence", "RunStore"]

#: the ids tier2 hands out (runs, threads, projects): letters, digits and ``_ . : -``, at most 64 characters;
#: anything else is never looked up (a tenant-scoped read of a malformed id is simply None)
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"
_ID = re.compile(ID_PATTERN)

# KEYS: run, cancel flag, then the event keys of `_APPEND`. ARGV: sha1 of the record read, the new record JSON,
# event JSON ('' = none), dedup token of the event. 'done' (or a retry of a done call), or 'changed'.
_CANCEL = """
if ARGV[3] ~= '' and redis.call('HGET', KEYS[7], ARGV[4]) then return 'done' end
local raw = redis.call('GET', KEYS[1])
if not raw or redis.sha1hex(raw) ~= ARGV[1] then return 'changed' end
redis.call('SET', KEYS[2], '1')
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
if ARGV[3] ~= '' then
  local seq = redis.call('INCR', KEYS[3])
  redis.call('HSET', KEYS[7], ARGV[4], seq)
  redis.call('XADD', KEYS[4], seq .. '-0', 'e', ARGV[3])
  redis.call('PUBLISH', KEYS[5], seq .. ' ' .. ARGV[3])
end
return 'done'
"""

_APPEND = """
if ARGV[2] ~= '' and redis.call('GET', KEYS[4]) ~= ARGV[2] then
  return redis.error_reply('STALE fencing token ' .. ARGV[2])
end
local done = redis.call('HGET', KEYS[5], ARGV[3])
if done then return tonumber(done) end
local seq = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[5], ARGV[3], seq)
local id = seq .. '-0'
redis.call('XADD', KEYS[2], id, 'e', ARGV[1])
redis.call('PUBLISH', KEYS[3], seq .. ' ' .. ARGV[1])
return seq
"""


def resilient_client(url: str, outage_s: float = 20.0) -> aioredis.Redis:
    """A client that rides out a Redis restart or failover (`tier2.store.connect`, any ``REDIS_URL`` form):
    commands are retried on connection errors with backoff for about ``outage_s``. Retried writes must be
    idempotent — every script here is (event appends carry a dedup token)."""
    return connect(url, resilient=True, outage_s=outage_s)


@dataclass(frozen=True)
class Fence:
    """An attempt's right to write a run: its fencing token must still be the run's current one."""

    run_id: str
    token: int


@dataclass(frozen=True)
class Durability:
    """When an accepted run counts as durable: its write acknowledged by ``min_replicas`` replicas within
    ``replica_timeout_ms`` (``WAIT``; 0 = the primary's own fsync is enough). `[redis]` of the security config."""

    min_replicas: int = 0
    replica_timeout_ms: int = 1000


class RunStore:
    """Async access to run records and events; the client is injected (tests pass their own)."""

    def __init__(self, client: aioredis.Redis, keys: Keys | None = None,
                 durability: Durability | None = None, retention_s: int = 0) -> None:
        """``durability``: how many replicas an accept waits for (`Durability`); ``retention_s``: how long every
        key of a run lives after it ends (`tier2.store.retention`; 0: until deleted)."""
        self.r = client
        self.keys = keys or Keys()
        self.durability = durability or Durability()
        self.retention_s = retention_s
        self._append = client.register_script(_APPEND)
        self._cancel = client.register_script(_CANCEL)
        self._acceptor = Acceptor(client, self.keys)

    @classmethod
    def from_url(cls, url: str, keys: Keys | None = None, durability: Durability | None = None,
                 retention_s: int = 0) -> RunStore:
        return cls(resilient_client(url), keys, durability, retention_s)

    async def close(self) -> None:
        await self.r.aclose()

    async def accept_run(
        self, run_id: str, record: dict[str, Any], *, project_id: str, dispatch: bool,
        tenant: str | None = None, idem_key: str | None = None, body_sha: str = "",
        response: dict[str, Any] | None = None, thread: tuple[str, ThreadFields] | None = None,
        admission: Admission | None = None,
    ) -> Accepted:
        """Commit a new run: record, index, one-writer marker of its project, optional idempotency record and
        (``dispatch``) the outbox entry a worker will take, in the one-slot steps of `tier2.store.accept` (a crash
        between two is completed or undone by `complete_accepts`). Nothing is left when the key was used already
        (``replay``, with the stored record), another live run is writing the project (``busy``) or the tenant is
        at a limit of ``admission`` (``queue_full``, ``rate_limited``); a marker naming a terminal or unknown run
        is taken over."""
        now = time.time()
        payload = RunRecord.model_validate({"run_id": run_id, "created_at": now, **record,
                                            "schema_version": RUN_RECORD_VERSION}).dump()
        idem = {"schema_version": SCHEMA_VERSION, "body_sha": body_sha, "run_id": run_id, "response": response}
        thread_id, thread_record = thread or ("", None)
        thread_payload = {"schema_version": SCHEMA_VERSION, "thread_id": thread_id, "created_at": now,
                          **(thread_record or {})}
        plan = AcceptPlan(run_id=run_id, project_id=project_id, tenant=tenant, created_at=now, dispatch=dispatch,
                          idem_key=idem_key, idem_json=json.dumps(idem), thread_id=thread_id,
                          thread_json=json.dumps(thread_payload) if thread_id else "",
                          admission=admission.script_config(self.keys, now) if admission is not None else "",
                          quota_tenant=admission.tenant if admission is not None else "")
        try:
            return await self._acceptor.accept(plan, json.dumps(payload), admission, self.durability.min_replicas,
                                               self.durability.replica_timeout_ms)
        except (RedisError, OSError, AcceptAborted) as exc:
            raise RedisUnavailable(f"cannot write run record: {exc}") from exc

    async def complete_accepts(self, grace_s: float = ACCEPT_GRACE_S) -> dict[str, str]:
        """Complete or undo the acceptances a crash stopped half-way (`tier2.store.accept`)."""
        return await self._acceptor.complete_accepts(grace_s)

    async def release_project(self, project_id: str, run_id: str) -> bool:
        """Drop the project's one-writer marker if this run still holds it (`tier2.store.finish.finish_run` does
        it right after the terminal write); whether it did."""
        script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
        return bool(await self.r.eval(script, 1, self.keys.project_active(project_id), run_id))

    async def request_cancel(self, run_id: str, event: Tier2Event | None = None) -> RunRecord | None:
        """Ask the run to stop, in one script on the run's slot (`_CANCEL`): the durable cancel flag (the worker
        running, or next taking, the run reacts to it), the record's ``cancel_requested`` and ``event`` (if given)
        are written together or not at all, and only while the run has not ended — the script writes only over the
        record this call read (its sha1), so a run ending meanwhile makes the call read it again and see it ended.
        Returns the record as it was before (None when the run is unknown: nothing written); a terminal record is
        returned with nothing written."""
        k = self.keys
        key = k.run(run_id)
        token = uuid.uuid4().hex  # a retry of this call (lost reply) is recognised by the event's dedup token
        try:
            for _ in range(50):
                raw = opt_text(await self.r.get(key))
                if not raw:
                    return None
                current = load_run_record(raw)
                if current.status in TERMINAL:
                    return current
                merged = {**current.dump(), "cancel_requested": True, "updated_at": time.time()}
                outcome = text(await self._cancel(
                    keys=[key, k.run_cancel(run_id), *self._append_keys(run_id)],
                    args=[hashlib.sha1(raw.encode()).hexdigest(), json.dumps(RunRecord.model_validate(merged).dump()),  # noqa: S324
                          event.model_dump_json() if event is not None else "", token]))
                if outcome == "done":
                    return current
                # "changed": the record moved between the read and the script: read it again
            raise RedisUnavailable(f"cannot cancel run {run_id}: the record kept changing")
        except (RedisError, OSError) as exc:
            raise RedisUnavailable(f"cannot cancel run {run_id}: {exc}") from exc

    async def cancel_requested(self, run_id: str) -> bool:
        return bool(await self.r.exists(self.keys.run_cancel(run_id)))

    async def project_writer(self, project_id: str) -> str | None:
        return opt_text(await self.r.get(self.keys.project_active(project_id)))

    async def update_run(self, run_id: str, fence: Fence | None = None, **fields: Any) -> dict[str, Any]:
        """Merge ``fields`` into the run record (validated as a `RunRecord`; a ``status`` change must be allowed
        by `tier2.store.lifecycle`, and terminal statuses are written only by `finish_run`). With ``fence``, only
        while that attempt is current (`StaleLease` otherwise): the fence key is watched with the record, so a
        takeover aborts the write."""
        if fields.get("status") in TERMINAL:
            raise ValueError(f"run {run_id}: a terminal status is written only by tier2.store.finish.finish_run")
        key = self.keys.run(run_id)
        watched = [key] if fence is None else [key, self.keys.run_fence(run_id)]
        try:
            async with self.r.pipeline(transaction=True) as p:
                while True:
                    try:
                        await p.watch(*watched)
                        if fence is not None and await p.get(watched[1]) != str(fence.token):
                            raise StaleLease(f"run {run_id}: attempt {fence.token} is no longer current")
                        raw = await p.get(key)
                        current = load_run_record(raw) if raw else RunRecord(run_id=run_id)
                        if "status" in fields and fields["status"] != current.status:
                            check_transition(current.status, fields["status"])
                        merged = {**current.dump(), **fields, "updated_at": time.time()}
                        record = RunRecord.model_validate(merged).dump()
                        p.multi()  # type: ignore[no-untyped-call]  # redis-py: Pipeline.multi is unannotated
                        p.set(key, json.dumps(record), keepttl=True)  # an ended run's retention bound stays
                        await p.execute()
                        return record
                    except aioredis.WatchError:
                        continue
        except (RedisError, OSError) as exc:
            raise RedisUnavailable(f"cannot update run {run_id}: {exc}") from exc

    async def get_run(self, run_id: str) -> dict[str, Any] | None:
        """The run record as a dict (`RunRecord.dump`: the stored keys, migrated to the current version)."""
        record = await self.get_record(run_id)
        return record.dump() if record is not None else None

    async def get_record(self, run_id: str) -> RunRecord | None:
        raw = await self.r.get(self.keys.run(run_id))
        return load_run_record(raw) if raw else None

    # -- tenant-scoped reads: what every API route uses; another tenant's record does not exist for the caller --

    async def get_run_for(self, tenant: str, run_id: str) -> RunRecord | None:
        """The run record if ``run_id`` is a well-formed id of a run owned by ``tenant``, else None."""
        record = await self.get_record(run_id) if _ID.match(run_id) else None
        return record if record is not None and record.tenant == tenant else None

    async def get_thread_for(self, tenant: str, thread_id: str) -> ThreadRecord | None:
        """The thread record if ``thread_id`` is a well-formed id of a thread owned by ``tenant``, else None."""
        record = await self.get_thread(thread_id) if _ID.match(thread_id) else None
        return record if record is not None and record.get("tenant") == tenant else None

    async def get_project_for(self, tenant: str, project_id: str) -> ProjectRecord | None:
        """The project record if ``project_id`` is a well-formed id of a project owned by ``tenant``, else None."""
        record = await self.get_project(project_id) if _ID.match(project_id) else None
        return record if record is not None and record.get("tenant") == tenant else None

    async def put_project(self, project_id: str, record: ProjectFields) -> bool:
        """Register a project (owner tenant, path); False when the id is taken."""
        payload = {"schema_version": SCHEMA_VERSION, "project_id": project_id, "created_at": time.time(), **record}
        return bool(await self.r.set(self.keys.project(project_id), json.dumps(payload), nx=True))

    async def get_project(self, project_id: str) -> ProjectRecord | None:
        raw = await self.r.get(self.keys.project(project_id))
        record: ProjectRecord | None = json.loads(raw) if raw else None
        return record

    async def get_thread(self, thread_id: str) -> ThreadRecord | None:
        raw = await self.r.get(self.keys.thread(thread_id))
        record: ThreadRecord | None = json.loads(raw) if raw else None
        return record

    async def thread_runs(self, thread_id: str) -> list[str]:
        return texts(await self.r.lrange(self.keys.thread_runs(thread_id), 0, -1))

    async def save_thread_state(self, thread_id: str, state_json: str) -> None:
        """The writer's AgentState at the end of the thread's latest run (the next run continues from it)."""
        await self.r.set(self.keys.thread_state(thread_id), state_json)

    async def get_thread_state(self, thread_id: str) -> str | None:
        return opt_text(await self.r.get(self.keys.thread_state(thread_id)))

    def _append_keys(self, run_id: str) -> list[str]:
        k = self.keys
        return [k.run_event_seq(run_id), k.run_events(run_id), k.run_channel(run_id), k.run_fence(run_id),
                k.run_event_tokens(run_id)]

    async def append_event(self, event: Tier2Event, fence: Fence | None = None) -> int:
        """Append with the next id of the run; with ``fence``, refused (`StaleLease`) unless still current."""
        rid = event.run_id
        try:
            seq = await self._append(
                keys=self._append_keys(rid),
                args=[event.model_dump_json(), str(fence.token) if fence is not None else "", uuid.uuid4().hex],
            )
        except ResponseError as exc:
            if "STALE" in str(exc):
                raise StaleLease(f"run {rid}: attempt {fence.token if fence else '?'} is no longer current") from exc
            raise
        return int(seq)

    async def wait_events(self, run_id: str, after: int, block_ms: int, count: int = 500,
                          ) -> list[tuple[int, Tier2Event]]:
        """Like `read_events`, but blocks up to ``block_ms`` for the next event (no polling)."""
        got = await self.r.xread({self.keys.run_events(run_id): f"{after}-0"}, count=count, block=block_ms)
        entries = xread_entries(got)
        return [(int(eid.split("-")[0]), EVENT_ADAPTER.validate_json(fields["e"])) for eid, fields in entries]

    async def read_events(self, run_id: str, after: int = 0, count: int = 1000) -> list[tuple[int, Tier2Event]]:
        """Events with id > ``after``, oldest first."""
        entries = stream_entries(await self.r.xrange(self.keys.run_events(run_id), min=f"({after}-0", max="+",
                                                     count=count))
        return [(int(eid.split("-")[0]), EVENT_ADAPTER.validate_json(fields["e"])) for eid, fields in entries]
