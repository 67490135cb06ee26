"""Side-effecting operations keyed by operation id: done once, looked up afterwards.

``begin`` counts an attempt starting the operation (``began``); ``commit`` records the result and counts a
completed execution (``applied``); both check the attempt's fence and count once per attempt, so a retried call
after a lost reply adds nothing. A resumed attempt that meets a committed operation gets the recorded result
instead of repeating the effect. ``applied`` is what chaos tests inspect: every operation id completes exactly
once; ``began`` > 1 shows an execution a crash interrupted before it completed (and that was then completed).
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tier2.errors import StaleLease
from tier2.store.keys import Keys
from tier2.store.replies import text_map
from tier2.store.run_store import Fence

__all__ = ["OperationResult", "OperationStore"]


class OperationResult(TypedDict):
    """What a committed operation answered: its text and final tool state (``success``, ``error``...)."""

    text: str
    state: str

_FENCED = """
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE fencing token ' .. ARGV[1])
end
"""
# KEYS: fence, began, by. ARGV: token, op id. Returns how many earlier attempts began the operation.
_BEGIN = _FENCED + """
if redis.call('HSETNX', KEYS[3], 'b|' .. ARGV[2] .. '|' .. ARGV[1], 1) == 1 then
  return redis.call('HINCRBY', KEYS[2], ARGV[2], 1) - 1
end
return tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '1') - 1
"""
# KEYS: fence, ops, applied, by. ARGV: token, op id, result JSON.
_COMMIT = _FENCED + """
if redis.call('HSETNX', KEYS[4], 'c|' .. ARGV[2] .. '|' .. ARGV[1], 1) == 1 then
  redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
end
return redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3])
"""


class OperationStore:
    def __init__(self, client: aioredis.Redis, keys: Keys, run_id: str) -> None:
        self.r, self.keys, self.run_id = client, keys, run_id
        self._begin = client.register_script(_BEGIN)
        self._commit = client.register_script(_COMMIT)

    async def check(self, fence: Fence | None) -> None:
        """`StaleLease` unless ``fence`` is still the run's current attempt (a frozen worker that wakes up after a
        takeover must not start a tool that writes the project: a build, a validation's reports)."""
        if fence is None:
            return
        current = await self.r.get(self.keys.run_fence(self.run_id))
        if current is not None and (current.decode() if isinstance(current, bytes) else str(current)) != str(
                fence.token):
            raise StaleLease(f"run {self.run_id}: tool refused, attempt {fence.token} is no longer current")

    async def lookup(self, op_id: str) -> OperationResult | None:
        raw = await self.r.hget(self.keys.run_ops(self.run_id), op_id)
        return json.loads(raw) if raw else None

    async def begin(self, op_id: str, fence: Fence | None) -> int:
        """Record that this attempt starts ``op_id``; returns how many earlier attempts began it."""
        k = self.keys
        return int(await self._fenced(self._begin, k.run_op_began(self.run_id), [op_id], fence,
                                      extra_keys=[k.run_op_by(self.run_id)]))

    async def commit(self, op_id: str, result: OperationResult, fence: Fence | None) -> None:
        k = self.keys
        await self._fenced(self._commit, k.run_ops(self.run_id), [op_id, json.dumps(result)], fence,
                           extra_keys=[k.run_op_applied(self.run_id), k.run_op_by(self.run_id)])

    async def applied(self) -> dict[str, int]:
        """Completed executions per operation id."""
        raw = text_map(await self.r.hgetall(self.keys.run_op_applied(self.run_id)))
        return {k: int(v) for k, v in raw.items()}

    async def began(self) -> dict[str, int]:
        """Attempts that started each operation (more than ``applied``: an execution a crash interrupted)."""
        raw = text_map(await self.r.hgetall(self.keys.run_op_began(self.run_id)))
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
