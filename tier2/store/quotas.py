"""Per-tenant quotas in Redis: runs in flight, submission rate, upload bytes per day.

Counting is self-healing: a tenant's accepted runs are a SET of run ids, and every count first drops the ids
whose run record is terminal (or gone). Whatever path ends a run — delivery, cancel, failure, a worker giving
up, the orphan sweep — the next count sees it, so a missed decrement can never lock a tenant out. The admission
check runs inside `RunStore.accept_run`'s script (`ADMIT_LUA`), atomic with the acceptance itself.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import redis.asyncio as aioredis

from tier2.events import TERMINAL_STATUSES
from tier2.store.keys import Keys

__all__ = ["ADMIT_LUA", "LIVE_COUNT_LUA", "RATE_WINDOW_MS", "Admission", "UploadCharge", "QuotaStore",
           "retry_after_s", "utc_day", "seconds_to_next_utc_day"]

#: The submission-rate window (a sliding log of acceptance times).
RATE_WINDOW_MS = 60_000

# Lua helpers shared by the admission and dispatch scripts. ``cfg`` is a decoded JSON table holding ``run``
# (the run key as {prefix, suffix}) and ``terminal`` (a list of terminal statuses).
LIVE_COUNT_LUA = """
local function run_ended(cfg, run_id)
  local raw = redis.call('GET', cfg.run[1] .. run_id .. cfg.run[2])
  if not raw then return true end
  local ok, rec = pcall(cjson.decode, raw)
  local status = nil
  if ok and type(rec) == 'table' then status = rec['status'] else status = string.match(raw, '"status": "(%a+)"') end
  for _, t in ipairs(cfg.terminal) do if status == t then return true end end
  return false
end
local function live_count(cfg, set_key)
  local n = 0
  for _, id in ipairs(redis.call('SMEMBERS', set_key)) do
    if run_ended(cfg, id) then redis.call('SREM', set_key, id) else n = n + 1 end
  end
  return n
end
"""

# tenant_admit(cfg, active_key, rate_key): nil when the run may be accepted, else {reason, detail}:
# {'queue_full', <runs in flight>} or {'rate_limited', <ms of the oldest submission in the window>}.
# tenant_admitted(...) records the accepted run (call it in the same script, after the writes).
ADMIT_LUA = LIVE_COUNT_LUA + """
local function tenant_admit(cfg, active_key, rate_key)
  local active = live_count(cfg, active_key)
  if active >= cfg.max_queued then return {'queue_full', tostring(active)} end
  redis.call('ZREMRANGEBYSCORE', rate_key, '-inf', cfg.now_ms - cfg.window_ms)
  if redis.call('ZCARD', rate_key) >= cfg.per_minute then
    return {'rate_limited', redis.call('ZRANGE', rate_key, 0, 0, 'WITHSCORES')[2]}
  end
  return nil
end
local function tenant_admitted(cfg, active_key, rate_key, run_id)
  redis.call('SADD', active_key, run_id)
  redis.call('ZADD', rate_key, cfg.now_ms, run_id)
  redis.call('PEXPIRE', rate_key, cfg.window_ms)
end
"""

_CHARGE = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {1, used}
"""


def retry_after_s(oldest_ms: float, now_ms: float, window_ms: int = RATE_WINDOW_MS) -> int:
    """Whole seconds until the oldest submission leaves the sliding window (at least 1)."""
    return max(1, math.ceil((oldest_ms + window_ms - now_ms) / 1000))


def utc_day(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y%m%d")


def seconds_to_next_utc_day(now: float) -> int:
    """Whole seconds until the next UTC midnight, when the daily upload window resets (at least 1)."""
    today = datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, math.ceil((today + timedelta(days=1)).timestamp() - now))


@dataclass(frozen=True)
class Admission:
    """What `RunStore.accept_run` checks for a tenant, atomically with accepting the run."""

    tenant: str
    max_queued: int
    per_minute: int

    def script_keys(self, keys: Keys) -> list[str]:
        return [keys.tenant_active(self.tenant), keys.tenant_submissions(self.tenant)]

    def script_config(self, keys: Keys, now: float) -> str:
        return json.dumps({"max_queued": self.max_queued, "per_minute": self.per_minute,
                           "now_ms": int(now * 1000), "window_ms": RATE_WINDOW_MS,
                           "run": keys.template("run"), "terminal": sorted(TERMINAL_STATUSES)})


@dataclass(frozen=True)
class UploadCharge:
    """Outcome of charging upload bytes to a tenant's day: ``ok`` and the bytes counted today."""

    ok: bool
    used: int
    retry_after: int


class QuotaStore:
    """Counters that are not part of accepting a run: runs in flight (for reports) and upload bytes per day."""

    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.r, self.keys = client, keys
        self._charge = client.register_script(_CHARGE)
        self._count = client.register_script(LIVE_COUNT_LUA + "return live_count(cjson.decode(ARGV[1]), KEYS[1])")

    def _cfg(self) -> str:
        return json.dumps({"run": self.keys.template("run"), "terminal": sorted(TERMINAL_STATUSES)})

    async def active(self, tenant: str) -> int:
        """The tenant's runs accepted and not yet ended (pruning ended ones)."""
        return int(await self._count(keys=[self.keys.tenant_active(tenant)], args=[self._cfg()]))

    async def running(self, tenant: str) -> int:
        """The tenant's runs handed to a worker and not yet ended (pruning ended ones)."""
        return int(await self._count(keys=[self.keys.tenant_running(tenant)], args=[self._cfg()]))

    async def uploads_today(self, tenant: str, now: float | None = None) -> int:
        return int(await self.r.get(self.keys.tenant_uploads(tenant, utc_day(now or time.time()))) or 0)

    async def charge_upload(self, tenant: str, size: int, quota: int, now: float | None = None) -> UploadCharge:
        """Add ``size`` bytes to the tenant's UTC day unless that would pass ``quota`` (then nothing is added)."""
        now = now or time.time()
        ok, used = await self._charge(keys=[self.keys.tenant_uploads(tenant, utc_day(now))],
                                      args=[size, quota, 2 * 86_400])
        return UploadCharge(bool(ok), int(used), seconds_to_next_utc_day(now))
