"""Goal and plan versions of a project, stored append-only (issue #24).

Every follow-up in a thread makes goal version n+1 with its plan diff; each plan revision of a goal version is one
more entry. Per project, two Redis lists in lockstep: `Keys.project_plans` (the records, JSON) and
`Keys.project_plans_index` (``<goal_version> <plan_version> <seq> <summary JSON>``, what the version rules, the
compaction and `PlanVersions.list` read). One Lua script appends to both, so no reader sees one without the other.

Rules of `PlanVersions.append`, checked atomically in the script:

- **fenced** like every run write (`RunStore.update_run`, ``append_event``): with a `Fence`, only while the run's
  fencing token is still that attempt's — a late result of a superseded attempt never lands (`StaleLease`);
- **no skipped goal version**: the first entry is goal version 1, every next one is the last goal version or the
  last + 1; within one goal version the ``plan_version`` grows strictly (an entry is never rewritten: a newer plan
  is a new entry) — anything else is `PlanVersionRefused`;
- **idempotent**: a retried append (the reply was lost, the client resent it) of the exact record that is already
  the last entry returns that entry's ``seq`` and adds nothing;
- **bounded**: past ``cap`` entries the oldest entry that is *not* its goal version's last is dropped, one per
  append — the newest plan of every goal version is kept forever (the cap bounds the intermediate plans).
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

import redis.asyncio as aioredis
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from redis.exceptions import RedisError, ResponseError

from tier2.errors import BadInput, Conflict, RedisUnavailable, StaleLease
from tier2.store.keys import Keys
from tier2.store.replies import opt_text, texts
from tier2.store.run_store import Fence

__all__ = ["DEFAULT_CAP", "GoalAuthor", "PlanEndKind", "PlanSummary", "PlanVersionRecord", "PlanVersionRefused",
           "PlanVersions", "summarize"]

#: entries kept per project before the intermediate plans of older goal versions are compacted
DEFAULT_CAP = 500

GoalAuthor = Literal["user", "leader", "person", "evidence"]
PlanEndKind = Literal["delivered", "blocked", "unverified", "failed", "stopped"]


class PlanVersionRefused(Conflict):
    """An append that would skip a goal version or rewrite/reorder a plan version."""


class _Open(BaseModel):
    """Stored shapes stay open: the plan model may add fields, they are kept as they are."""

    model_config = ConfigDict(extra="allow")


class GoalText(_Open):
    version: int = Field(ge=1, le=1_000_000)
    text: str
    author: GoalAuthor


class RequirementChange(_Open):
    id: str
    text: str = ""
    was: str | None = None  # a changed requirement: its previous text
    fields: list[str] = Field(default_factory=list)  # a changed requirement: which fields changed


class RequirementsDiff(_Open):
    added: list[RequirementChange] = Field(default_factory=list)
    changed: list[RequirementChange] = Field(default_factory=list)
    removed: list[RequirementChange] = Field(default_factory=list)


class PlanDiff(_Open):
    requirements: RequirementsDiff = Field(default_factory=RequirementsDiff)
    #: node id -> why it was invalidated
    invalidated: dict[str, str] = Field(default_factory=dict)
    #: verified nodes kept with no re-run
    reused: list[str] = Field(default_factory=list)


class PlanEnd(_Open):
    kind: PlanEndKind
    reason: str = ""
    options: list[str] = Field(default_factory=list)


class PlanVersionRecord(_Open):
    """One stored entry: a goal version's plan at one plan version."""

    goal_version: int = Field(ge=1, le=1_000_000)
    plan_version: int = Field(ge=0, le=10**12)
    run_id: str = Field(min_length=1)
    project_id: str = Field(min_length=1)
    at: float
    goal: GoalText
    goals: list[GoalText] = Field(default_factory=list)
    diff: PlanDiff = Field(default_factory=PlanDiff)
    plan: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)
    end: PlanEnd | None = None  # None while the version's run has not ended

    @field_validator("at")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("at must be a finite epoch time")
        return value

    @model_validator(mode="after")
    def _same_goal(self) -> PlanVersionRecord:
        if self.goal.version != self.goal_version:
            raise ValueError(f"goal.version {self.goal.version} is not goal_version {self.goal_version}")
        return self


class PlanSummary(BaseModel):
    """A goal version in a list: its newest entry's goal, run, diff counts and end."""

    model_config = ConfigDict(extra="forbid")

    goal_version: int
    plan_version: int
    seq: int
    #: entries stored for this goal version (plan revisions kept after compaction)
    entries: int = 1
    author: str
    text: str
    at: float
    run_id: str
    added: int = 0
    changed: int = 0
    removed: int = 0
    invalidated: int = 0
    reused: int = 0
    end: str | None = None


def summarize(record: PlanVersionRecord) -> dict[str, Any]:
    """What the index keeps of an entry (no seq, no entries count: the script and `list` fill those)."""
    req = record.diff.requirements
    return {"goal_version": record.goal_version, "plan_version": record.plan_version, "author": record.goal.author,
            "text": record.goal.text, "at": record.at, "run_id": record.run_id, "added": len(req.added),
            "changed": len(req.changed), "removed": len(req.removed), "invalidated": len(record.diff.invalidated),
            "reused": len(record.diff.reused), "end": record.end.kind if record.end is not None else None}


# KEYS: entries, index, seq counter, the project's plan fences (all the project's slot). ARGV: record JSON, fence
# token ('' = unfenced), goal version, plan version, summary JSON, cap, run id. The run's own fence (its slot) was
# checked just before; here a token older than one the run already appended with is refused, so a superseded
# attempt stalled between the two checks is refused once its successor appended.
_APPEND = """
if ARGV[2] ~= '' then
  local seen = redis.call('HGET', KEYS[4], ARGV[7])
  if seen and tonumber(seen) > tonumber(ARGV[2]) then return redis.error_reply('STALE fencing token ' .. ARGV[2]) end
  redis.call('HSET', KEYS[4], ARGV[7], ARGV[2])
end
local gv, pv, cap = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[6])
local last = redis.call('LINDEX', KEYS[2], -1)
if last then
  local lg, lp, ls = string.match(last, '^(%d+) (%d+) (%d+) ')
  lg, lp = tonumber(lg), tonumber(lp)
  if gv == lg and pv == lp and redis.call('LINDEX', KEYS[1], -1) == ARGV[1] then return tonumber(ls) end
  if gv ~= lg and gv ~= lg + 1 then
    return redis.error_reply('VERSION goal version ' .. ARGV[3] .. ' cannot follow goal version ' .. lg)
  end
  if gv == lg and pv <= lp then
    return redis.error_reply('VERSION plan version ' .. ARGV[4] .. ' of goal version ' .. ARGV[3]
      .. ' is not newer than the stored plan version ' .. lp)
  end
elseif gv ~= 1 then
  return redis.error_reply('VERSION the first goal version is 1, not ' .. ARGV[3])
end
local seq = redis.call('INCR', KEYS[3])
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], ARGV[3] .. ' ' .. ARGV[4] .. ' ' .. seq .. ' ' .. ARGV[5])
local n = redis.call('LLEN', KEYS[2])
while n > cap do
  local heads = redis.call('LRANGE', KEYS[2], 0, -1)
  local drop = nil
  for i = 1, #heads - 1 do
    if string.match(heads[i], '^(%d+) ') == string.match(heads[i + 1], '^(%d+) ') then drop = i - 1 break end
  end
  if not drop then break end
  for _, key in ipairs({KEYS[1], KEYS[2]}) do
    redis.call('LSET', key, drop, 'compacted')
    redis.call('LREM', key, 1, 'compacted')
  end
  n = n - 1
end
return seq
"""

# KEYS: entries, index. ARGV: goal version ('' = the newest entry). Returns the record JSON or nil.
_GET = """
if ARGV[1] == '' then return redis.call('LINDEX', KEYS[1], -1) end
local heads = redis.call('LRANGE', KEYS[2], 0, -1)
for i = #heads, 1, -1 do
  if string.match(heads[i], '^(%d+) ') == ARGV[1] then return redis.call('LINDEX', KEYS[1], i - 1) end
end
return false
"""


class PlanVersions:
    """The goal/plan versions of projects; the client is injected (`RunStore.r`, `RunStore.keys`)."""

    def __init__(self, client: aioredis.Redis, keys: Keys | None = None, cap: int = DEFAULT_CAP) -> None:
        if cap < 2:
            raise ValueError("cap must be at least 2")
        self.r, self.keys, self.cap = client, keys or Keys(), cap
        self._append = client.register_script(_APPEND)
        self._get = client.register_script(_GET)

    async def append(self, project_id: str, record: PlanVersionRecord | dict[str, Any], fence: Fence | None) -> int:
        """Store one more entry; returns its ``seq`` (1, 2, ... per project, never reused). ``fence``: the run's
        attempt (`Lease.fence`); None only outside a run (tools, tests). Raises `StaleLease` (the attempt is
        superseded), `PlanVersionRefused` (a skipped goal version, a plan version not newer than the stored one),
        `BadInput` (the record does not validate, or names another project or run)."""
        try:
            rec = record if isinstance(record, PlanVersionRecord) else PlanVersionRecord.model_validate(record)
        except ValidationError as exc:
            raise BadInput(f"not a plan version record: {exc}") from exc
        if rec.project_id != project_id:
            raise BadInput(f"the record is of project {rec.project_id}, not {project_id}")
        if fence is not None and fence.run_id != rec.run_id:
            raise BadInput(f"the record is of run {rec.run_id}, the fence of run {fence.run_id}")
        k = self.keys
        try:
            if fence is not None and opt_text(await self.r.get(k.run_fence(rec.run_id))) != str(fence.token):
                raise StaleLease(f"run {rec.run_id}: attempt {fence.token} is no longer current")
            seq = await self._append(
                keys=[k.project_plans(project_id), k.project_plans_index(project_id), k.project_plans_seq(project_id),
                      k.project_plan_fences(project_id)],
                args=[rec.model_dump_json(exclude_unset=True), str(fence.token) if fence is not None else "",
                      rec.goal_version, rec.plan_version, json.dumps(summarize(rec), ensure_ascii=False), self.cap,
                      rec.run_id])
        except ResponseError as exc:
            if "STALE" in str(exc):
                raise StaleLease(f"run {rec.run_id}: attempt {fence.token if fence else '?'} is no longer "
                                 "current") from exc
            if "VERSION" in str(exc):
                raise PlanVersionRefused(f"project {project_id}: {str(exc).split('VERSION', 1)[1].strip()}") from exc
            raise RedisUnavailable(f"cannot append a plan version: {exc}") from exc
        except (RedisError, OSError) as exc:
            raise RedisUnavailable(f"cannot append a plan version: {exc}") from exc
        return int(seq)

    async def get(self, project_id: str, version: int | None = None) -> PlanVersionRecord | None:
        """The newest entry of goal version ``version`` (None: the newest entry of all), or None."""
        k = self.keys
        raw = opt_text(await self._get(keys=[k.project_plans(project_id), k.project_plans_index(project_id)],
                                       args=["" if version is None else str(int(version))]))
        return PlanVersionRecord.model_validate_json(raw) if raw else None

    async def list(self, project_id: str) -> list[PlanSummary]:
        """One summary per goal version (its newest entry), oldest goal version first."""
        out: dict[int, PlanSummary] = {}
        for head in texts(await self.r.lrange(self.keys.project_plans_index(project_id), 0, -1)):
            gv, pv, seq, summary = head.split(" ", 3)
            entries = out[int(gv)].entries + 1 if int(gv) in out else 1
            out[int(gv)] = PlanSummary.model_validate({**json.loads(summary), "goal_version": int(gv),
                                                       "plan_version": int(pv), "seq": int(seq),
                                                       "entries": entries})
        return [out[v] for v in sorted(out)]

    async def entries(self, project_id: str) -> int:
        """How many entries the project holds now (after compaction)."""
        return int(await self.r.llen(self.keys.project_plans(project_id)))
