"""Side-effecting operations keyed by operation id: done once, looked up afterwards.

``begin`` counts an execution (``applied``) and ``commit`` records the result; both check the attempt's fence.
A resumed attempt that meets an operation already committed gets the recorded result instead of repeating the
effect. ``applied`` is what chaos tests inspect: every operation id must have been executed exactly once.
"""

from __future__ import annotations

import json
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tier2.errors import StaleLease
from tier2.store.keys import Keys
from tier2.store.run_store import Fence

__all__ = ["OperationStore"]

_FENCED = """
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE fencing token ' .. ARGV[1])
end
"""
# KEYS: fence, applied, began. ARGV: token, op id. Counts one execution per attempt (a retried call after a lost
# reply counts nothing new); returns the number of executions before this attempt's.
_BEGIN = _FENCED + """
if redis.call('HSETNX', KEYS[3], ARGV[2] .. '|' .. ARGV[1], 1) == 1 then
  return redis.call('HINCRBY', KEYS[2], ARGV[2], 1) - 1
end
return tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '1') - 1
"""
# KEYS: fence, ops. ARGV: token, op id, result JSON.
_COMMIT = _FENCED + "return redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3])"


class OperationStore:
    def __init__(self, client: aioredis.Redis, keys: Keys, run_id: str) -> None:
        self.r, self.keys, self.run_id = client, keys, run_id
        self._begin = client.register_script(_BEGIN)
        self._commit = client.register_script(_COMMIT)

    async def lookup(self, op_id: str) -> dict[str, Any] | None:
        raw = await self.r.hget(self.keys.run_ops(self.run_id), op_id)
        return json.loads(raw) if raw else None

    async def begin(self, op_id: str, fence: Fence | None) -> int:
        """Count an execution of ``op_id``; returns how many began before (0 the first time)."""
        return int(await self._fenced(self._begin, self.keys.run_op_applied(self.run_id), [op_id], fence,
                                      extra_keys=[self.keys.run_op_began(self.run_id)]))

    async def commit(self, op_id: str, result: dict[str, Any], fence: Fence | None) -> None:
        await self._fenced(self._commit, self.keys.run_ops(self.run_id), [op_id, json.dumps(result)], fence)

    async def applied(self) -> dict[str, int]:
        raw = await self.r.hgetall(self.keys.run_op_applied(self.run_id))
        return {k: int(v) for k, v in raw.items()}

    async def _fenced(self, script: Any, key: str, args: list[str], fence: Fence | None = None,
                      extra_keys: list[str] | None = None) -> Any:
        try:
            return await script(keys=[self.keys.run_fence(self.run_id), key, *(extra_keys or [])],
                                args=[str(fence.token) if fence is not None else "", *args])
        except ResponseError as exc:
            if "STALE" in str(exc):
                raise StaleLease(f"run {self.run_id}: operation refused, attempt is no longer current") from exc
            raise
