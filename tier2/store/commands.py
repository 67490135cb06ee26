"""The writer's command sessions, durable across attempts (seed 000 §2.6): what a new attempt answers when the
model asks about a session an earlier attempt started.

Each session is one field of ``Keys.run_commands`` (session id -> JSON: ``command``, ``attempt``, ``state``
— ``running``, ``exited``, or ``stopped`` with its attempt by a worker shutting down —, ``started_at``,
``ended_at``, ``exit_code``), plus a field ``<session id>#shown``: how many characters of its log the model has
been shown so far (any attempt), so a later attempt continues the output where it stopped — no repeat, no gap.
The attempt that runs the command writes the record when the command starts and when it ends; a session still
``running`` in the record of an earlier attempt lost its executor with that attempt (the hand-over stopped it:
`tier2.runs.process.handover`). A record that cannot be read stays unknown — never guessed.
"""

from __future__ import annotations

import json
import time
from typing import Any

import redis.asyncio as aioredis

from tier2.store.keys import Keys

__all__ = ["CommandRecords"]


class CommandRecords:
    """`tier2.sandbox.commands.CommandJournal` of one run attempt."""

    def __init__(self, client: aioredis.Redis, keys: Keys, run_id: str, attempt: int) -> None:
        self.r, self.key, self.attempt = client, keys.run_commands(run_id), attempt

    async def started(self, sid: str, command: str) -> None:
        await self.r.hset(self.key, sid, json.dumps({"command": command[:2000], "attempt": self.attempt,
                                                     "state": "running", "started_at": time.time()}))

    async def ended(self, sid: str, exit_code: int | None, *, stopped: bool = False) -> None:
        """The command ended by itself (``exited``, its code) or was stopped with its attempt (``stopped``)."""
        raw = await self.r.hget(self.key, sid)
        record: dict[str, Any] = json.loads(raw) if raw else {"attempt": self.attempt}
        record.update(state="stopped" if stopped else "exited", exit_code=exit_code, ended_at=time.time())
        await self.r.hset(self.key, sid, json.dumps(record))

    async def shown(self, sid: str, chars: int) -> None:
        """The model has been shown the first ``chars`` characters of the session's log (its own field: never
        overwritten by the record's start/end writes)."""
        await self.r.hset(self.key, f"{sid}#shown", str(int(chars)))

    async def lookup(self, sid: str) -> dict[str, Any] | None:
        raw, shown = await self.r.hmget(self.key, [sid, f"{sid}#shown"])
        if not raw:
            return None
        record = json.loads(raw)
        if not isinstance(record, dict):
            return None
        if shown is not None and str(shown).isdigit():
            record["shown"] = int(shown)
        return record
