"""The one way a run ends: `finish_run`, a single fenced Lua script — all or nothing.

In one script on the run's slot it:

1. checks the attempt's fencing token when a fence is given (`StaleLease` otherwise: a worker that lost its lease
   writes nothing);
2. returns the first result again when this very call was already applied (a retry after a lost reply: the
   event's dedup token is known);
3. checks the record is the one this call read (optimistic: a concurrent ``update_run`` makes the caller re-read
   and try again) and that its status may move to the terminal one (`tier2.store.lifecycle`; an already terminal
   run makes the call a no-op);
4. writes the terminal record (status, stop reason, usage, timings, delivery summary, ``finished_at``), appends
   the ``run_finished`` event exactly like `RunStore.append_event` (next monotonic id ``<seq>-0``, dedup token,
   live publish);
5. then (the project's slot: a second, idempotent step) deletes the project's one-writer marker **only if it
   names this run**. A crash between the two leaves a marker naming an ended run, which the next acceptance on
   the project takes over (`tier2.store.accept`): nothing stays locked.

Every path that ends a run calls it: the run session (delivered / failed / stopped by cancel, breakers or
budget), the worker giving up after ``max_attempts`` or crashing outside the run loop, and the orphan sweep at
service start.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field
from redis.exceptions import ResponseError

from tier2.errors import StaleLease
from tier2.events import RunFinished
from tier2.store.lifecycle import RunStatus, TerminalStatus, allowed_from, check_transition, is_run_status, is_terminal
from tier2.store.records import DeliverySummary, RunRecord, load_run_record
from tier2.store.replies import opt_text
from tier2.store.run_store import Fence, RunStore

__all__ = ["FinishResult", "RunEnd", "finish_run"]

# KEYS: run, fence, event seq, events, live channel, event tokens, then every key of the run
#       (`Keys.run_retained`): all in the run's slot.
# ARGV: token ('' = unfenced), sha1 of the record read ('' = none), record JSON, event JSON, dedup token, run id,
#       allowed source statuses (' a b '), terminal status, retention in seconds ('0' = kept until deleted).
_FINISH = """
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return redis.error_reply('STALE fencing token ' .. ARGV[1])
end
local done = redis.call('HGET', KEYS[6], ARGV[5])
if done then return {'finished', tonumber(done), ARGV[8], 0} end
local raw = redis.call('GET', KEYS[1])
if not raw then return {'missing', 0, '', 0} end
if redis.sha1hex(raw) ~= ARGV[2] then return {'changed', 0, '', 0} end
local status = cjson.decode(raw)['status']
if type(status) ~= 'string' then status = 'queued' end
if not string.find(ARGV[7], ' ' .. status .. ' ', 1, true) then return {'refused', 0, status, 0} end
redis.call('SET', KEYS[1], ARGV[3])
local seq = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[6], ARGV[5], seq)
redis.call('XADD', KEYS[4], seq .. '-0', 'e', ARGV[4])
redis.call('PUBLISH', KEYS[5], seq .. ' ' .. ARGV[4])
local ttl = tonumber(ARGV[9])
if ttl > 0 then  -- at most the retention; a key with its own, shorter life (the lease) keeps it
  for i = 7, #KEYS do
    local t = redis.call('TTL', KEYS[i])
    if t == -1 or t > ttl then redis.call('EXPIRE', KEYS[i], ttl) end
  end
end
return {'finished', seq, ARGV[8], 0}
"""

_MAX_TRIES = 50


class RunEnd(BaseModel):
    """What the end of a run records: its terminal status and reason, plus what the caller knows at the end."""

    status: TerminalStatus
    stop_reason: str
    delivery_path: str | None = None
    usage: dict[str, Any] | None = None
    timings_ms: dict[str, int] | None = None
    delivery: DeliverySummary | None = None
    #: any other record fields to set in the same write (e.g. ``phase``)
    fields: dict[str, Any] = Field(default_factory=dict)

    def record_fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.fields, "status": self.status, "stop_reason": self.stop_reason}
        for name in ("delivery_path", "usage", "timings_ms", "delivery"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
        return out


@dataclass(frozen=True)
class FinishResult:
    """``finished``: this call ended the run (event id ``seq``); ``already_terminal``: it had ended (``status``
    is what it ended with) and nothing was written; ``missing``: no such run."""

    outcome: Literal["finished", "already_terminal", "missing"]
    status: RunStatus | Literal[""]  # "" when ``missing``
    seq: int | None = None
    released_project: bool = False
    #: the ``run_finished`` event this call appended (``finished`` only)
    event: RunFinished | None = None


async def finish_run(store: RunStore, run_id: str, end: RunEnd, fence: Fence | None = None) -> FinishResult:
    """End ``run_id`` atomically (see the module docstring). Raises `StaleLease` when ``fence`` is not current and
    `IllegalTransition` for a move the state machine forbids (a queued run cannot be delivered)."""
    script = store.r.register_script(_FINISH)
    k = store.keys
    token = uuid.uuid4().hex  # one per call: a retry of the same call (lost reply) is recognised, not re-applied
    allowed = " " + " ".join(sorted(allowed_from(end.status))) + " "
    for _ in range(_MAX_TRIES):
        raw = opt_text(await store.r.get(k.run(run_id)))
        if raw is None:
            return FinishResult("missing", "")
        current = load_run_record(raw)
        if is_terminal(current.status):
            return FinishResult("already_terminal", current.status)
        check_transition(current.status, end.status)  # e.g. a queued run is never "delivered"
        now = time.time()
        record = RunRecord.model_validate({**current.dump(), **end.record_fields(), "updated_at": now,
                                           "finished_at": now})
        event = RunFinished(run_id=run_id, status=end.status, stop_reason=end.stop_reason,
                            delivery_path=end.delivery_path)
        try:
            outcome, seq, status, _ = await script(
                keys=[k.run(run_id), k.run_fence(run_id), k.run_event_seq(run_id), k.run_events(run_id),
                      k.run_channel(run_id), k.run_event_tokens(run_id), *k.run_retained(run_id)],
                args=[str(fence.token) if fence is not None else "", hashlib.sha1(raw.encode()).hexdigest(),  # noqa: S324
                      json.dumps(record.dump()), event.model_dump_json(), token, run_id, allowed, end.status,
                      str(store.retention_s)])
        except ResponseError as exc:
            if "STALE" in str(exc):
                raise StaleLease(f"run {run_id}: attempt {fence.token if fence else '?'} is no longer current; "
                                 "not finishing it") from exc
            raise
        if outcome == "finished":
            released = bool(current.project_id) and await store.release_project(current.project_id or "", run_id)
            return FinishResult("finished", end.status, int(seq), released, event)
        if outcome == "missing":
            return FinishResult("missing", "")
        if outcome == "refused":
            stored = str(status)
            if not is_terminal(stored):
                check_transition(stored, end.status)
            if is_run_status(stored):  # always: an unknown status fails `check_transition`
                return FinishResult("already_terminal", stored)
        # "changed": the record moved between our read and the script (a concurrent update): read it again
    raise RuntimeError(f"run {run_id}: could not finish after {_MAX_TRIES} concurrent updates")
