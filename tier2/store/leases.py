"""Leases with heartbeats and monotonic fencing tokens: which attempt may run (and write) a run.

Acquiring increments the run's fence counter, so every attempt gets a larger token than any before it (the token
doubles as the attempt number). The lease itself is a key with a TTL that the holder renews; when the holder
dies the key expires and another worker may acquire a new attempt. Writes of an attempt (`RunStore` with a
`Fence`, checkpoints, operations) check atomically that the fence still holds their token, so a stale worker
that wakes up after losing its lease cannot write anything.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Literal

import redis.asyncio as aioredis

from tier2.store.keys import SCHEMA_VERSION, Keys
from tier2.store.run_store import Fence

__all__ = ["RECLAIMED", "AttemptOutcome", "Lease", "LeaseStore"]

#: how an attempt ended (stored on its attempt record with ``ended_at``): ``finished`` (the run reached a terminal
#: state on it), ``cancelled`` (it ended because the run's cancel was asked), ``lease_lost`` (its lease expired or was
#: taken: a worker killed, hung or cut off — recorded by the attempt that reclaimed the run when the dead one could
#: not say so itself), ``crashed`` (an error outside the run loop ended the run failed), ``interrupted`` (its worker
#: shut down; the run resumes elsewhere), ``superseded`` (a write found a newer attempt's fence)
AttemptOutcome = Literal["finished", "cancelled", "lease_lost", "crashed", "interrupted", "superseded"]

#: the detail a reclaiming attempt writes on the open record of an attempt that never closed it
RECLAIMED = "reclaimed by attempt {token}: its lease expired (the worker stopped heartbeating: killed, hung or cut off)"

# KEYS: lease, fence, attempts. ARGV: worker, ttl_ms, attempt JSON (token filled in here), reclaimed detail
# (``{token}`` filled in here). Every earlier attempt still open (no ``ended_at``: its worker died or lost the lease
# before it could close it) is closed ``lease_lost`` at the new attempt's start — no lease exists, so none is alive.
_ACQUIRE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, redis.call('GET', KEYS[1])} end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. token, 'PX', ARGV[2])
local attempt = cjson.decode(ARGV[3])
attempt['attempt'] = token
local open = redis.call('HGETALL', KEYS[3])
for i = 1, #open, 2 do
  local ok, old = pcall(cjson.decode, open[i + 1])
  if ok and type(old) == 'table' and old['ended_at'] == nil then
    old['outcome'] = 'lease_lost'
    old['ended_at'] = attempt['started_at']
    old['detail'] = string.gsub(ARGV[4], '{token}', tostring(token))
    redis.call('HSET', KEYS[3], open[i], cjson.encode(old))
  end
end
redis.call('HSET', KEYS[3], token, cjson.encode(attempt))
return {token, ''}
"""

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS: fence, attempts. ARGV: token, attempt JSON. Only the current attempt may close its own record.
_END_ATTEMPT = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
"""


@dataclass(frozen=True)
class Lease:
    run_id: str
    worker: str
    token: int

    @property
    def fence(self) -> Fence:
        return Fence(self.run_id, self.token)

    @property
    def holder(self) -> str:
        return f"{self.worker}|{self.token}"


class LeaseStore:
    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.r, self.keys = client, keys
        self._acquire = client.register_script(_ACQUIRE)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._end = client.register_script(_END_ATTEMPT)

    async def acquire(self, run_id: str, worker: str, ttl_ms: int,
                      info: dict[str, Any] | None = None) -> Lease | str:
        """A new attempt's lease (its token is larger than every earlier one), or ``"held by <worker>|<token>"``
        while another attempt's lease is alive."""
        k = self.keys
        attempt = {"schema_version": SCHEMA_VERSION, "worker": worker, "started_at": time.time(), **(info or {})}
        token, extra = await self._acquire(keys=[k.run_lease(run_id), k.run_fence(run_id), k.run_attempts(run_id)],
                                           args=[worker, ttl_ms, json.dumps(attempt), RECLAIMED])
        if int(token) == 0:
            return f"held by {extra}"
        return Lease(run_id, worker, int(token))

    async def renew(self, lease: Lease, ttl_ms: int) -> bool:
        return bool(await self._renew(keys=[self.keys.run_lease(lease.run_id)], args=[lease.holder, ttl_ms]))

    async def release(self, lease: Lease) -> None:
        await self._release(keys=[self.keys.run_lease(lease.run_id)], args=[lease.holder])

    async def end_attempt(self, lease: Lease, outcome: AttemptOutcome, detail: str = "") -> bool:
        k = self.keys
        raw = await self.r.hget(k.run_attempts(lease.run_id), str(lease.token))
        attempt = json.loads(raw) if raw else {"attempt": lease.token, "worker": lease.worker}
        attempt.update(outcome=outcome, detail=detail[:500], ended_at=time.time())
        return bool(await self._end(keys=[k.run_fence(lease.run_id), k.run_attempts(lease.run_id)],
                                    args=[lease.token, json.dumps(attempt)]))

    async def attempts(self, run_id: str) -> list[dict[str, Any]]:
        raw = await self.r.hgetall(self.keys.run_attempts(run_id))
        return sorted((json.loads(v) for v in raw.values()), key=lambda a: a["attempt"])
