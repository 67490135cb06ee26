"""Fair dispatch: which accepted run a worker starts next (round-robin over tenants, ``max_running`` each), and
every other operation on the dispatch stream (group, reclaim, hold, ack): the one owner of that stream's commands.

The dispatch stream (`Keys.dispatch`, consumer group `DISPATCH_GROUP`) stays the outbox *and* the reclaim
mechanism; it carries two kinds of entry:

* **inbox** entries, written by `RunStore.accept_run` atomically with the run record (``run_id``, ``tenant``);
* **started** entries (``picked=1``), one per run handed to a worker: pending for that worker until it
  acknowledges the run's end, so a killed worker's run is reclaimed by ``XAUTOCLAIM`` exactly as before.

One Lua script (`_TAKE`) does the whole selection atomically: it drains new inbox entries into per-tenant FIFO
queues (acknowledging them at once, so they are never reclaimed as runs), then walks the ring of tenants with
waiting runs, rotating it, and takes the head of the first tenant below its ``max_running`` (a run whose cancel
was requested is taken anyway: it ends at once). The taken run is written as a started entry and read into the
worker's pending list in the same script. A tenant's backlog therefore waits for its own turn in the ring and
never delays another tenant by more than one run per tenant ahead of it.

Runs in flight per tenant are a self-healing SET pruned of terminal runs when counted (`store.quotas`).

**Trimming** (`Dispatcher.trim`, after every run a worker acknowledges): an entry is deleted only when all three
hold — the group has read it, it is acknowledged (pending for no consumer) and its run has ended (record terminal
or gone). A pending entry (a started run, reclaimable) and an entry the group has not read yet (a new submission)
are never touched; an inbox entry stays while its run waits in a tenant queue. No lock is needed: an acknowledged
entry never becomes pending again and an ended run never restarts, so a check that held stays true until the
delete.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tier2.events import TERMINAL_STATUSES
from tier2.store.keys import DISPATCH_GROUP, Keys
from tier2.store.quotas import LIVE_COUNT_LUA
from tier2.store.records import stored_status
from tier2.store.replies import stream_entries

__all__ = ["Dispatcher", "TRIM_SCAN"]

#: stream entries one trim reads at most (from the oldest; entries of runs still waiting or running are re-read by
#: the next trim, so the bound keeps each pass cheap behind a long backlog)
TRIM_SCAN = 2000
_TRIM_CHUNK = 200

# KEYS: dispatch stream, tenant ring. ARGV: group, consumer, config JSON (key templates, max_running table).
# Returns {entry id, run id} for a taken run, or {'', last stream id} when nothing can start now.
_TAKE = LIVE_COUNT_LUA + """
local cfg = cjson.decode(ARGV[3])
local group, consumer, stream, ring = ARGV[1], ARGV[2], KEYS[1], KEYS[2]
local function key(tpl, id) return tpl[1] .. id .. tpl[2] end
while true do  -- drain the inbox into per-tenant queues
  local got = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', 100, 'STREAMS', stream, '>')
  if not got then break end
  for _, entry in ipairs(got[1][2]) do
    local f, run_id, tenant, picked = entry[2], nil, '', false
    for i = 1, #f, 2 do
      if f[i] == 'run_id' then run_id = f[i + 1] elseif f[i] == 'tenant' then tenant = f[i + 1]
      elseif f[i] == 'picked' then picked = true end
    end
    redis.call('XACK', stream, group, entry[1])
    if run_id and not picked then
      redis.call('RPUSH', key(cfg.queue, tenant), run_id)
      if not redis.call('LPOS', ring, tenant) then redis.call('RPUSH', ring, tenant) end
    end
  end
end
for _ = 1, redis.call('LLEN', ring) do
  local tenant = redis.call('LMOVE', ring, ring, 'LEFT', 'RIGHT')
  local queue = key(cfg.queue, tenant)
  local head = redis.call('LINDEX', queue, 0)
  if not head then
    redis.call('LREM', ring, 0, tenant)
  else
    local running = key(cfg.running, tenant)
    local limit = cfg.max_running[tenant] or cfg.max_running['']
    if live_count(cfg, running) < limit or redis.call('EXISTS', key(cfg.cancel, head)) == 1 then
      redis.call('LPOP', queue)
      if redis.call('LLEN', queue) == 0 then redis.call('LREM', ring, 0, tenant) end
      redis.call('SADD', running, head)
      redis.call('XADD', stream, '*', 'run_id', head, 'tenant', tenant, 'picked', '1')
      local got = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', 1, 'STREAMS', stream, '>')
      return {got[1][2][1][1], head}
    end
  end
end
local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)
return {'', last[1] and last[1][1] or '0-0'}
"""


class Dispatcher:
    """Takes the next run for a worker, fairly across tenants (see the module docstring)."""

    def __init__(self, client: aioredis.Redis, keys: Keys, max_running: Mapping[str, int]) -> None:
        """``max_running``: tenant -> runs at once; the ``""`` entry is the default for every other tenant."""
        self.r, self.keys = client, keys
        self._take = client.register_script(_TAKE)
        self._cfg = json.dumps({
            "run": keys.template("run"), "queue": keys.template("tenant_queue"),
            "running": keys.template("tenant_running"), "cancel": keys.template("run_cancel"),
            "terminal": sorted(TERMINAL_STATUSES), "max_running": dict(max_running),
        })

    async def ensure_group(self) -> None:
        """The stream and its consumer group (idempotent)."""
        try:
            await self.r.xgroup_create(self.keys.dispatch(), DISPATCH_GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def reclaim(self, consumer: str, min_idle_ms: int, skip: Collection[str] = ()) -> tuple[str, str] | None:
        """(entry id, run id) of a started run whose worker stopped renewing it for ``min_idle_ms`` — now pending
        for ``consumer`` — unless its run is one of ``skip`` (already running here)."""
        _next_id, claimed, *_ = await self.r.xautoclaim(self.keys.dispatch(), DISPATCH_GROUP, consumer,
                                                        min_idle_time=min_idle_ms, start_id="0-0", count=1)
        for entry_id, fields in claimed:
            if fields and fields.get("run_id") not in skip:
                return entry_id, fields["run_id"]
        return None

    async def keep(self, consumer: str, entry_id: str) -> None:
        """Renew ``consumer``'s hold on a started entry (its idle time restarts: nobody reclaims it)."""
        await self.r.xclaim(self.keys.dispatch(), DISPATCH_GROUP, consumer, 0, [entry_id], justid=True)

    async def ack(self, entry_id: str) -> None:
        """The started run's end: its entry is no longer pending for anyone."""
        await self.r.xack(self.keys.dispatch(), DISPATCH_GROUP, entry_id)

    async def take(self, consumer: str, block_ms: int) -> tuple[str, str] | None:
        """(entry id, run id) of the run this consumer starts now — the entry is pending for it until acked —
        or None after waiting up to ``block_ms`` for a new entry without one becoming startable."""
        entry_id, value = await self._take(keys=[self.keys.dispatch(), self.keys.dispatch_tenants()],
                                           args=[DISPATCH_GROUP, consumer, self._cfg])
        if entry_id:
            return entry_id, value
        # wait for the next entry (a new submission, or another worker's start: cheap spurious wake-ups)
        await self.r.xread({self.keys.dispatch(): value}, count=1, block=block_ms)
        entry_id, value = await self._take(keys=[self.keys.dispatch(), self.keys.dispatch_tenants()],
                                           args=[DISPATCH_GROUP, consumer, self._cfg])
        return (entry_id, value) if entry_id else None

    async def trim(self, scan: int = TRIM_SCAN) -> int:
        """Delete the entries nobody needs any more (the rule in the module docstring), reading at most ``scan``
        from the oldest; how many were deleted."""
        stream = self.keys.dispatch()
        groups = await self.r.xinfo_groups(stream)
        last = next((str(g["last-delivered-id"]) for g in groups if str(g["name"]) == DISPATCH_GROUP), None)
        if last is None or last == "0-0":
            return 0
        deleted, start = 0, "-"
        while scan > 0:
            entries = stream_entries(await self.r.xrange(stream, min=start, max=last, count=min(_TRIM_CHUNK, scan)))
            if not entries:
                break
            scan -= len(entries)
            lo, hi = entries[0][0], entries[-1][0]
            pending = {str(p["message_id"]) for p in await self.r.xpending_range(
                stream, DISPATCH_GROUP, min=lo, max=hi, count=len(entries))}
            acked = [(eid, f.get("run_id", "")) for eid, f in entries if eid not in pending]
            ended = await self._ended({rid for _, rid in acked if rid})
            doomed = [eid for eid, rid in acked if not rid or rid in ended]
            if doomed:
                deleted += int(await self.r.xdel(stream, *doomed))
            if len(entries) < _TRIM_CHUNK:
                break
            start = f"({hi}"
        return deleted

    async def _ended(self, run_ids: Collection[str]) -> set[str]:
        """Of ``run_ids``, those whose record is terminal or gone."""
        ids = sorted(run_ids)
        if not ids:
            return set()
        async with self.r.pipeline(transaction=False) as p:
            for rid in ids:
                p.get(self.keys.run(rid))
            raws = await p.execute()
        # gone: ended; unreadable: kept (never delete on doubt)
        return {rid for rid, raw in zip(ids, raws, strict=True) if not raw or stored_status(raw) in TERMINAL_STATUSES}
