"""Run records and the per-run event log in Redis.

Each event gets a monotonic integer id per run: one Lua script increments the run's sequence, appends the
event to the run's stream under the id ``<seq>-0`` and publishes it, atomically — so readers resuming from
any id see no gap and no duplicate.
"""

from __future__ import annotations

import json
import time
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from tier2.errors import RedisUnavailable
from tier2.events import EVENT_ADAPTER, Tier2Event
from tier2.store.keys import SCHEMA_VERSION, Keys

__all__ = ["RunStore"]

_APPEND = """
local seq = redis.call('INCR', KEYS[1])
local id = seq .. '-0'
redis.call('XADD', KEYS[2], id, 'e', ARGV[1])
redis.call('PUBLISH', KEYS[3], seq .. ' ' .. ARGV[1])
return seq
"""


# Accept = durable: the idempotency record, the run record and the index entry are written in one script.
_CREATE_IDEMPOTENT = """
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
return false
"""


class RunStore:
    """Async access to run records and events; the client is injected (tests pass their own)."""

    def __init__(self, client: aioredis.Redis, keys: Keys | None = None) -> None:
        self.r = client
        self.keys = keys or Keys()
        self._append = client.register_script(_APPEND)
        self._create_idempotent = client.register_script(_CREATE_IDEMPOTENT)

    @classmethod
    def from_url(cls, url: str, keys: Keys | None = None) -> RunStore:
        return cls(aioredis.Redis.from_url(url, decode_responses=True), keys)

    async def close(self) -> None:
        await self.r.aclose()

    async def create_run(self, run_id: str, record: dict[str, Any]) -> None:
        payload = {"schema_version": SCHEMA_VERSION, "run_id": run_id, "created_at": time.time(), **record}
        try:
            async with self.r.pipeline(transaction=True) as p:
                p.set(self.keys.run(run_id), json.dumps(payload))
                p.zadd(self.keys.runs_index(), {run_id: payload["created_at"]})
                await p.execute()
        except (RedisError, OSError) as exc:
            raise RedisUnavailable(f"cannot write run record: {exc}") from exc

    async def create_run_idempotent(
        self, tenant: str, idem_key: str, body_sha: str, run_id: str, record: dict[str, Any],
        response: dict[str, Any],
    ) -> tuple[bool, dict[str, Any]]:
        """Create the run unless this tenant already used ``idem_key``: returns (created, stored idempotency
        record ``{body_sha, run_id, response}``). The caller compares ``body_sha`` to detect a different body."""
        now = time.time()
        payload = {"schema_version": SCHEMA_VERSION, "run_id": run_id, "created_at": now, **record}
        idem = {"schema_version": SCHEMA_VERSION, "body_sha": body_sha, "run_id": run_id, "response": response}
        try:
            found = await self._create_idempotent(
                keys=[self.keys.idempotency(tenant, idem_key), self.keys.run(run_id), self.keys.runs_index()],
                args=[json.dumps(idem), json.dumps(payload), now, run_id],
            )
        except (RedisError, OSError) as exc:
            raise RedisUnavailable(f"cannot write run record: {exc}") from exc
        return (found is None), (json.loads(found) if found else idem)

    async def update_run(self, run_id: str, **fields: Any) -> dict[str, Any]:
        key = self.keys.run(run_id)
        async with self.r.pipeline(transaction=True) as p:
            while True:
                try:
                    await p.watch(key)
                    raw = await p.get(key)
                    record = json.loads(raw) if raw else {"schema_version": SCHEMA_VERSION, "run_id": run_id}
                    record.update(fields, updated_at=time.time())
                    p.multi()
                    p.set(key, json.dumps(record))
                    await p.execute()
                    return record
                except aioredis.WatchError:
                    continue

    async def get_run(self, run_id: str) -> dict[str, Any] | None:
        raw = await self.r.get(self.keys.run(run_id))
        return json.loads(raw) if raw else None

    async def put_project(self, project_id: str, record: dict[str, Any]) -> bool:
        """Register a project (owner tenant, path); False when the id is taken."""
        payload = {"schema_version": SCHEMA_VERSION, "project_id": project_id, "created_at": time.time(), **record}
        return bool(await self.r.set(self.keys.project(project_id), json.dumps(payload), nx=True))

    async def get_project(self, project_id: str) -> dict[str, Any] | None:
        raw = await self.r.get(self.keys.project(project_id))
        return json.loads(raw) if raw else None

    async def put_thread(self, thread_id: str, record: dict[str, Any]) -> None:
        payload = {"schema_version": SCHEMA_VERSION, "thread_id": thread_id, "created_at": time.time(), **record}
        await self.r.set(self.keys.thread(thread_id), json.dumps(payload), nx=True)

    async def get_thread(self, thread_id: str) -> dict[str, Any] | None:
        raw = await self.r.get(self.keys.thread(thread_id))
        return json.loads(raw) if raw else None

    async def add_thread_run(self, thread_id: str, run_id: str) -> None:
        await self.r.rpush(self.keys.thread_runs(thread_id), run_id)

    async def thread_runs(self, thread_id: str) -> list[str]:
        return list(await self.r.lrange(self.keys.thread_runs(thread_id), 0, -1))

    async def save_thread_state(self, thread_id: str, state_json: str) -> None:
        """The writer's AgentState at the end of the thread's latest run (the next run continues from it)."""
        await self.r.set(self.keys.thread_state(thread_id), state_json)

    async def get_thread_state(self, thread_id: str) -> str | None:
        return await self.r.get(self.keys.thread_state(thread_id))

    async def append_event(self, event: Tier2Event) -> int:
        k = self.keys
        body = event.model_dump_json()
        seq = await self._append(
            keys=[k.run_event_seq(event.run_id), k.run_events(event.run_id), k.run_channel(event.run_id)],
            args=[body],
        )
        return int(seq)

    async def read_events(self, run_id: str, after: int = 0, count: int = 1000) -> list[tuple[int, Tier2Event]]:
        """Events with id > ``after``, oldest first."""
        entries = await self.r.xrange(self.keys.run_events(run_id), min=f"({after}-0", max="+", count=count)
        return [(int(eid.split("-")[0]), EVENT_ADAPTER.validate_json(fields["e"])) for eid, fields in entries]
