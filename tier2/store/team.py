"""The design team's durable pieces: a leader's mailbox with no lost wake-up, and per-agent checkpoint keys.

**Mailbox.** AgentScope's team inbox drops a wake-up that arrives while the leader holds its session lock, so a
``TeamSay`` landing during the leader's final model call is never read (field guide §8, §11.7). Here the leader
never "finishes" by simply returning: it *closes* its mailbox with `TeamMailbox.close_if_drained`, one Redis
script that closes only when every message has been read and otherwise hands back the unread ones (the leader
then takes another turn). `TeamMailbox.post` is refused — visibly, never silently — once the box is closed.
Messages are kept in a list (durable, in order; a resumed attempt reads the same messages).

**Per-agent checkpoints.** `AgentKeys` puts an agent's checkpoint list and ``latest`` under its own namespace
(``run:<id>:checkpoints:<agent>``), sharing the run's content-addressed blocks and fencing token, so each
designer resumes from its own newest step and a finished designer is never run again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tier2.errors import StaleLease
from tier2.store.checkpoints import CheckpointStore
from tier2.store.keys import Keys
from tier2.store.run_store import Fence

__all__ = ["AgentKeys", "TeamMailbox", "agent_checkpoints"]


@dataclass(frozen=True)
class AgentKeys(Keys):
    """`Keys` whose checkpoint keys are namespaced by agent (blocks and fence stay the run's)."""

    agent: str = ""

    def run_checkpoints(self, run_id: str) -> str:
        return self.run_agent_checkpoints(run_id, self.agent)

    def run_latest(self, run_id: str) -> str:
        return self.run_agent_latest(run_id, self.agent)


def agent_checkpoints(client: aioredis.Redis, keys: Keys, run_id: str, agent: str) -> CheckpointStore:
    return CheckpointStore(client, AgentKeys(prefix=keys.prefix, agent=agent), run_id)


_FENCED = """
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE fencing token ' .. ARGV[1])
end
"""
# KEYS: fence, inbox, closed. ARGV: token, message JSON.
_POST = _FENCED + """
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
return redis.call('RPUSH', KEYS[2], ARGV[2])
"""
# KEYS: fence, inbox, closed. ARGV: token, cursor (messages already read).
_CLOSE = _FENCED + """
local n = redis.call('LLEN', KEYS[2])
if n > tonumber(ARGV[2]) then return redis.call('LRANGE', KEYS[2], tonumber(ARGV[2]), -1) end
redis.call('SET', KEYS[3], '1')
return {}
"""


class TeamMailbox:
    """The inbox of one team member (the leader) of one run."""

    def __init__(self, client: aioredis.Redis, keys: Keys, run_id: str, member: str = "leader",
                 fence: Fence | None = None) -> None:
        self.r, self.run_id, self.fence = client, run_id, fence
        self.k_inbox, self.k_closed = keys.run_team(run_id, member, "inbox"), keys.run_team(run_id, member, "closed")
        self.k_fence = keys.run_fence(run_id)
        self._post = client.register_script(_POST)
        self._close = client.register_script(_CLOSE)
        self.cursor = 0  # messages this reader has taken

    def _token(self) -> str:
        return str(self.fence.token) if self.fence is not None else ""

    async def _call(self, script: Any, *args: Any) -> Any:
        try:
            return await script(keys=[self.k_fence, self.k_inbox, self.k_closed], args=[self._token(), *args])
        except ResponseError as exc:
            if "STALE" in str(exc):
                raise StaleLease(f"run {self.run_id}: team message refused, attempt is no longer current") from exc
            raise

    async def post(self, sender: str, kind: str, body: Any) -> bool:
        """Queue a message; False when the mailbox is already closed (the sender is told, nothing is lost)."""
        n = await self._call(self._post, json.dumps({"from": sender, "kind": kind, "body": body}))
        return int(n) > 0

    async def take(self) -> list[dict[str, Any]]:
        """Every message not taken yet, in order."""
        raw = await self.r.lrange(self.k_inbox, self.cursor, -1)
        self.cursor += len(raw)
        return [json.loads(m) for m in raw]

    async def close_if_drained(self) -> list[dict[str, Any]]:
        """Close the mailbox if every message has been taken; else the unread ones (taken now, box still open)."""
        pending = await self._call(self._close, self.cursor)
        self.cursor += len(pending)
        return [json.loads(m) for m in pending]

    async def closed(self) -> bool:
        return bool(await self.r.exists(self.k_closed))

    async def all(self) -> list[dict[str, Any]]:
        return [json.loads(m) for m in await self.r.lrange(self.k_inbox, 0, -1)]
