"""The hard budget ledger of one run, in Redis, shared by every agent and every process working on the run.

Why Lua: a reservation must check ``spent + reserved + this <= cap`` and add ``this`` in one step, or two
parallel agents could both see room for one call and both spend it. Each script is atomic in Redis, so
concurrent reservations — from tasks, threads or processes — can never together pass the cap.

Accounting is keyed by call id (hash ``run_budget_calls``: ``r`` reserved, ``s`` spent, ``x`` released):

* a second ``reserve`` of a held or spent id adds nothing (a retried or resumed call is never counted twice);
* ``reconcile`` moves the id's reservation to spent at the reported usage, once (a duplicate is a no-op);
  a reconcile without a reservation is recorded too (a call only known after the fact);
* ``release`` frees the reservation of a call that failed before spending; the id may reserve again (retry).

Amounts are integers in nano-USD so Redis adds them exactly. The caps and the run's start time are written once
(the first touch wins), so every agent, and a resumed attempt of the run, works against the same limits and
the same wall-clock deadline. Any Redis failure raises `LedgerUnavailable`: the caller must refuse the call
(fail closed), never spend unaccounted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from tier2.store.keys import Keys

__all__ = ["NANO", "BudgetCaps", "BudgetLedger", "LedgerStatus", "LedgerUnavailable", "Reservation"]

#: nano-USD per USD: the ledger's integer unit
NANO = 1_000_000_000

# KEYS: budget hash, calls hash. ARGV[1..4]: cap nano-USD, cap tokens, deadline ms (-1 = none), start ms.
_PRELUDE = """
local B, C = KEYS[1], KEYS[2]
if redis.call('HSETNX', B, 'cap_nusd', ARGV[1]) == 1 then
  redis.call('HSET', B, 'cap_tokens', ARGV[2], 'deadline_ms', ARGV[3], 'started_ms', ARGV[4],
    'spent_nusd', 0, 'spent_tokens', 0, 'reserved_nusd', 0, 'reserved_tokens', 0, 'calls', 0, 'refused', 0,
    'overrun_nusd', 0, 'peak_nusd', 0)
end
local function num(f) return tonumber(redis.call('HGET', B, f)) or 0 end
local function mark_peak()  -- high-water mark of spent + reserved: an audit that the cap held at all times
  local level = num('spent_nusd') + num('reserved_nusd')
  if level > num('peak_nusd') then redis.call('HSET', B, 'peak_nusd', string.format('%d', level)) end
end
local function status(verdict)
  return {verdict, num('cap_nusd'), num('cap_tokens'), num('deadline_ms'), num('started_ms'), num('spent_nusd'),
          num('spent_tokens'), num('reserved_nusd'), num('reserved_tokens'), num('calls'), num('refused'),
          num('overrun_nusd'), num('peak_nusd')}
end
local function parse(entry)
  local kind, n, t = string.match(entry, '^(%a):(%-?%d+):(%-?%d+)$')
  return kind, tonumber(n), tonumber(t)
end
"""

# ARGV[5..8]: call id, nano-USD, tokens, now ms.
_RESERVE = _PRELUDE + """
local id, n, t, now = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local prior = redis.call('HGET', C, id)
if prior then
  local kind = parse(prior)
  if kind == 'r' then return status('held') end
  if kind == 's' then return status('spent') end
end
local function refuse(verdict)
  redis.call('HINCRBY', B, 'refused', 1)
  redis.call('HSET', B, 'last_refused', verdict .. ':' .. ARGV[6] .. ':' .. ARGV[7] .. ':' .. id)
  return status(verdict)
end
local deadline = num('deadline_ms')
if deadline >= 0 and now - num('started_ms') > deadline then return refuse('deadline') end
local cap = num('cap_nusd')
if cap >= 0 and num('spent_nusd') + num('reserved_nusd') + n > cap then return refuse('usd') end
local cap_t = num('cap_tokens')
if cap_t >= 0 and num('spent_tokens') + num('reserved_tokens') + t > cap_t then return refuse('tokens') end
redis.call('HINCRBY', B, 'reserved_nusd', ARGV[6])
redis.call('HINCRBY', B, 'reserved_tokens', ARGV[7])
redis.call('HSET', C, id, 'r:' .. ARGV[6] .. ':' .. ARGV[7])
mark_peak()
return status('ok')
"""

# ARGV[5..7]: call id, actual nano-USD, actual tokens.
_RECONCILE = _PRELUDE + """
local id, n = ARGV[5], tonumber(ARGV[6])
local prior = redis.call('HGET', C, id)
local verdict = 'unreserved'
if prior then
  local kind, rn, rt = parse(prior)
  if kind == 's' then return status('duplicate') end
  if kind == 'r' then
    redis.call('HINCRBY', B, 'reserved_nusd', 0 - rn)
    redis.call('HINCRBY', B, 'reserved_tokens', 0 - rt)
    if n > rn then redis.call('HINCRBY', B, 'overrun_nusd', n - rn) end
    verdict = 'ok'
  end
end
redis.call('HINCRBY', B, 'spent_nusd', ARGV[6])
redis.call('HINCRBY', B, 'spent_tokens', ARGV[7])
redis.call('HINCRBY', B, 'calls', 1)
redis.call('HSET', C, id, 's:' .. ARGV[6] .. ':' .. ARGV[7])
mark_peak()
return status(verdict)
"""

# ARGV[5]: call id.
_RELEASE = _PRELUDE + """
local prior = redis.call('HGET', C, ARGV[5])
if not prior then return status('unknown') end
local kind, rn, rt = parse(prior)
if kind ~= 'r' then return status('noop') end
redis.call('HINCRBY', B, 'reserved_nusd', 0 - rn)
redis.call('HINCRBY', B, 'reserved_tokens', 0 - rt)
redis.call('HSET', C, ARGV[5], 'x:' .. rn .. ':' .. rt)
return status('released')
"""

_STATUS = _PRELUDE + "return status('status')\n"

Verdict = Literal["ok", "held", "spent", "usd", "tokens", "deadline"]
_VERDICTS: dict[str, Verdict] = {v: v for v in get_args(Verdict)}


class LedgerUnavailable(Exception):
    """Redis could not be reached or refused the script: the caller must not spend (fail closed)."""


def to_nano(usd: float) -> int:
    """USD to integer nano-USD, rounded up (a reservation never under-covers); float noise trimmed first."""
    return max(0, math.ceil(round(usd * NANO, 3)))


@dataclass(frozen=True)
class BudgetCaps:
    """A run's limits; ``None`` = no such limit."""

    usd: float | None = None
    tokens: int | None = None
    deadline_s: float | None = None


@dataclass(frozen=True)
class LedgerStatus:
    cap_usd: float | None
    cap_tokens: int | None
    deadline_s: float | None
    spent_usd: float
    spent_tokens: int
    reserved_usd: float
    reserved_tokens: int
    calls: int
    refused: int
    overrun_usd: float
    elapsed_s: float
    peak_usd: float = 0.0  # highest spent + reserved ever recorded
    started_at: float = 0.0  # the run's start (UNIX time) as first recorded: the deadline counts from it

    @classmethod
    def from_reply(cls, raw: list[Any], now_ms: int) -> LedgerStatus:
        v = [int(x) for x in raw[1:]]
        cap_n, cap_t, deadline_ms, started_ms = v[0], v[1], v[2], v[3]
        return cls(cap_usd=cap_n / NANO if cap_n >= 0 else None, cap_tokens=cap_t if cap_t >= 0 else None,
                   deadline_s=deadline_ms / 1000 if deadline_ms >= 0 else None, spent_usd=v[4] / NANO,
                   spent_tokens=v[5], reserved_usd=v[6] / NANO, reserved_tokens=v[7], calls=v[8], refused=v[9],
                   overrun_usd=v[10] / NANO, elapsed_s=max(0.0, (now_ms - started_ms) / 1000),
                   peak_usd=v[11] / NANO, started_at=started_ms / 1000)

    def report(self) -> dict[str, Any]:
        """For the run record and the delivery (``usage.budget``)."""
        return {"cap_usd": self.cap_usd, "cap_tokens": self.cap_tokens, "deadline_s": self.deadline_s,
                "spent_usd": round(self.spent_usd, 9), "spent_tokens": self.spent_tokens,
                "reserved_usd": round(self.reserved_usd, 9), "reserved_tokens": self.reserved_tokens,
                "calls": self.calls, "refused": self.refused, "overrun_usd": round(self.overrun_usd, 9),
                "peak_usd": round(self.peak_usd, 9),
                "elapsed_s": round(self.elapsed_s, 1)}


@dataclass(frozen=True)
class Reservation:
    verdict: Verdict
    status: LedgerStatus

    @property
    def ok(self) -> bool:
        """``held``/``spent``: this call id is already accounted for (a retry or a resumed attempt)."""
        return self.verdict in ("ok", "held", "spent")


class BudgetLedger:
    """One run's ledger. Cheap to construct (one per agent of the run); all state lives in Redis."""

    def __init__(self, client: aioredis.Redis, keys: Keys, run_id: str, caps: BudgetCaps,
                 started_at: float | None = None, clock: Callable[[], float] = time.time) -> None:
        self.r, self.keys, self.run_id, self.caps, self.clock = client, keys, run_id, caps, clock
        self.started_at = clock() if started_at is None else started_at
        self._keys = [keys.run_budget(run_id), keys.run_budget_calls(run_id)]
        self._scripts: dict[str, Any] = {}  # script text -> redis Script (EVALSHA, loaded on first use)
        self._recorded: LedgerStatus | None = None

    def _now_ms(self) -> int:
        return int(self.clock() * 1000)

    def _head(self) -> list[str]:
        c = self.caps
        return [str(to_nano(c.usd)) if c.usd is not None else "-1", str(c.tokens) if c.tokens is not None else "-1",
                str(max(1, math.ceil(c.deadline_s * 1000))) if c.deadline_s is not None else "-1",
                str(int(self.started_at * 1000))]

    async def _run(self, script: str, *args: str) -> tuple[str, LedgerStatus]:
        try:
            runner = self._scripts.get(script)
            if runner is None:
                runner = self._scripts[script] = self.r.register_script(script)
            raw = await runner(keys=self._keys, args=[*self._head(), *args])
        except (TimeoutError, RedisError, OSError) as exc:
            raise LedgerUnavailable(f"{type(exc).__name__}: {exc}") from exc
        verdict = raw[0].decode() if isinstance(raw[0], bytes) else str(raw[0])
        status = LedgerStatus.from_reply(raw, self._now_ms())
        self._recorded = status  # what Redis holds (first touch wins): the deadline of a resumed attempt
        return verdict, status

    def deadline_at(self) -> float | None:
        """The run's wall-clock deadline (UNIX time) as the ledger recorded it — a resumed attempt keeps the first
        attempt's start — or, before the first ledger round trip, this process's estimate. None = no deadline."""
        st = self._recorded
        if st is not None:
            return st.started_at + st.deadline_s if st.deadline_s is not None else None
        return self.started_at + self.caps.deadline_s if self.caps.deadline_s is not None else None

    async def reserve(self, call_id: str, usd: float, tokens: int) -> Reservation:
        """Hold ``usd``/``tokens`` for this call, or refuse (``usd``/``tokens``/``deadline`` verdict)."""
        verdict, status = await self._run(_RESERVE, call_id, str(to_nano(usd)), str(max(0, int(tokens))),
                                          str(self._now_ms()))
        if verdict not in _VERDICTS:  # fail closed: a reply the script never gives is no permission to spend
            raise LedgerUnavailable(f"ledger script answered {verdict!r} to a reservation")
        return Reservation(verdict=_VERDICTS[verdict], status=status)

    async def reconcile(self, call_id: str, usd: float, tokens: int) -> tuple[str, LedgerStatus]:
        """Record what the call really cost: ``ok``, ``unreserved`` (recorded without a reservation) or
        ``duplicate`` (already recorded: nothing added)."""
        return await self._run(_RECONCILE, call_id, str(to_nano(usd)), str(max(0, int(tokens))))

    async def release(self, call_id: str) -> LedgerStatus:
        """Free the reservation of a call that failed before spending."""
        return (await self._run(_RELEASE, call_id))[1]

    async def status(self) -> LedgerStatus:
        return (await self._run(_STATUS))[1]
