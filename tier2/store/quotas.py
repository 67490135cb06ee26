"""Per-tenant quotas in Redis: runs in flight, submission rate, upload bytes per day, disk bytes.

Counting is self-healing: a tenant's accepted runs are a SET of run ids, and every count first drops the ids
whose run record is terminal (or gone) — read by the client (`prune_ended`), since the records are in the runs'
slots, not the tenant's. Whatever path ends a run — delivery, cancel, failure, a worker giving
up, the orphan sweep — the next count sees it, so a missed decrement can never lock a tenant out. The admission
check runs inside `RunStore.accept_run`'s script (`ADMIT_LUA`), atomic with the acceptance itself.

Disk usage is measured, not counted up and down: a hash project id -> the bytes its directory measured
(`tier2.workspace.usage.tree_bytes`, re-measured after every snapshot and at the end of every run), so each new
measure replaces the old and no drift can build up. An import in progress holds a reservation (``<bytes>:<expires
ms>``) in the same hash, replaced by the measure when it is done; a reservation whose process died expires.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import redis.asyncio as aioredis

from tier2.events import TERMINAL_STATUSES
from tier2.store.connect import get_each
from tier2.store.keys import Keys
from tier2.store.records import stored_status
from tier2.store.replies import texts

__all__ = ["ADMIT_LUA", "RATE_WINDOW_MS", "Admission", "DiskGrant", "QuotaStore", "UploadCharge", "ended_runs",
           "prune_ended", "retry_after_s", "seconds_to_next_utc_day", "utc_day"]

#: The submission-rate window (a sliding log of acceptance times).
RATE_WINDOW_MS = 60_000

# tenant_admit(cfg, active_key, rate_key): nil when the run may be accepted, else {reason, detail}:
# {'queue_full', <runs in flight>} or {'rate_limited', <ms of the oldest submission in the window>}. The active
# set was pruned of ended runs just before (`prune_ended`: run records live in other slots than the tenant's).
# tenant_admitted(...) records the accepted run (call it in the same script, after the writes).
ADMIT_LUA = """
local function tenant_admit(cfg, active_key, rate_key)
  local active = redis.call('SCARD', active_key)
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


async def ended_runs(client: aioredis.Redis, keys: Keys, run_ids: Collection[str]) -> set[str]:
    """Of ``run_ids``, those whose record is terminal or gone (one GET each, pipelined: records live in many slots;
    an unreadable record counts as live — never drop on doubt)."""
    ids = sorted(run_ids)
    raws = await get_each(client, [keys.run(rid) for rid in ids])
    return {rid for rid, raw in zip(ids, raws, strict=True)
            if raw is None or stored_status(raw) in TERMINAL_STATUSES}


async def prune_ended(client: aioredis.Redis, keys: Keys, set_key: str) -> int:
    """Drop the ended runs (`ended_runs`) from a set of run ids; how many are left. Safe without a lock: an ended
    run never restarts, so what was seen ended stays ended; a run added meanwhile is simply not looked at."""
    members = texts(await client.smembers(set_key))
    ended = await ended_runs(client, keys, members)
    if ended:
        await client.srem(set_key, *ended)
    return len(members) - len(ended)


_CHARGE = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {1, used}
"""


# disk_used(key, now_ms, skip): the sum of the tenant's measures and live reservations (expired ones dropped),
# leaving out field ``skip``.
_DISK_LUA = """
local function disk_used(key, now_ms, skip)
  local used = 0
  local all = redis.call('HGETALL', key)
  for i = 1, #all, 2 do
    local field, value = all[i], all[i + 1]
    local bytes, expires = string.match(value, '^(%d+):(%d+)$')
    if bytes and tonumber(expires) < now_ms then
      redis.call('HDEL', key, field)
    elseif field ~= skip then
      used = used + (tonumber(bytes or value) or 0)
    end
  end
  return used
end
"""
# KEYS: disk hash. ARGV: field, bytes wanted, quota, now ms, reservation ttl ms -> {granted?, used, granted bytes}
_RESERVE_DISK = _DISK_LUA + """
local used = disk_used(KEYS[1], tonumber(ARGV[4]), ARGV[1])
local room = tonumber(ARGV[3]) - used
if room <= 0 then return {0, used, 0} end
local grant = math.min(tonumber(ARGV[2]), room)
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d:%d', grant, tonumber(ARGV[4]) + tonumber(ARGV[5])))
return {1, used, grant}
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
                           "now_ms": int(now * 1000), "window_ms": RATE_WINDOW_MS})


@dataclass(frozen=True)
class UploadCharge:
    """Outcome of charging upload bytes to a tenant's day: ``ok`` and the bytes counted today."""

    ok: bool
    used: int
    retry_after: int


@dataclass(frozen=True)
class DiskGrant:
    """Outcome of reserving disk for an import: ``ok``, the tenant's other usage, and the bytes it may unpack."""

    ok: bool
    used: int
    granted: int


class QuotaStore:
    """Counters that are not part of accepting a run: runs in flight (for reports) and upload bytes per day."""

    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.r, self.keys = client, keys
        self._charge = client.register_script(_CHARGE)
        self._reserve_disk = client.register_script(_RESERVE_DISK)
        self._disk_used = client.register_script(_DISK_LUA + "return disk_used(KEYS[1], tonumber(ARGV[1]), '')")

    async def active(self, tenant: str) -> int:
        """The tenant's runs accepted and not yet ended (pruning ended ones)."""
        return await prune_ended(self.r, self.keys, self.keys.tenant_active(tenant))

    async def running(self, tenant: str) -> int:
        """The tenant's runs handed to a worker and not yet ended (pruning ended ones)."""
        return await prune_ended(self.r, self.keys, self.keys.tenant_running(tenant))

    async def uploads_today(self, tenant: str, now: float | None = None) -> int:
        return int(await self.r.get(self.keys.tenant_uploads(tenant, utc_day(now or time.time()))) or 0)

    async def charge_upload(self, tenant: str, size: int, quota: int, now: float | None = None) -> UploadCharge:
        """Add ``size`` bytes to the tenant's UTC day unless that would pass ``quota`` (then nothing is added)."""
        now = now or time.time()
        ok, used = await self._charge(keys=[self.keys.tenant_uploads(tenant, utc_day(now))],
                                      args=[size, quota, 2 * 86_400])
        return UploadCharge(bool(ok), int(used), seconds_to_next_utc_day(now))

    async def disk_used(self, tenant: str) -> int:
        """The bytes of the tenant's projects as last measured, plus the imports unpacking now."""
        return int(await self._disk_used(keys=[self.keys.tenant_disk(tenant)], args=[int(time.time() * 1000)]))

    async def reserve_disk(self, tenant: str, project_id: str, want: int, quota: int,
                           ttl_s: float = 3600.0) -> DiskGrant:
        """Reserve up to ``want`` bytes for ``project_id`` (an import about to unpack) within ``quota``: the grant is
        what is left when less than ``want`` is; refused (nothing reserved) when nothing is left."""
        ok, used, granted = await self._reserve_disk(keys=[self.keys.tenant_disk(tenant)],
                                                     args=[project_id, want, quota, int(time.time() * 1000),
                                                           int(ttl_s * 1000)])
        return DiskGrant(bool(ok), int(used), int(granted))

    async def set_disk(self, tenant: str, project_id: str, size: int | None) -> None:
        """Record what ``project_id`` measured (replacing its reservation or older measure); None: it is gone."""
        key = self.keys.tenant_disk(tenant)
        if size is None:
            await self.r.hdel(key, project_id)
        else:
            await self.r.hset(key, project_id, str(int(size)))
