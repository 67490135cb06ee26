"""Fair dispatch: which accepted run a worker starts next (round-robin over tenants, ``max_running`` each), and
every other operation on the dispatch stream (group, reclaim, hold, ack): the one owner of that stream's commands.

The dispatch stream (`Keys.dispatch`, consumer group `DISPATCH_GROUP`) stays the outbox *and* the reclaim
mechanism; it carries two kinds of entry:

* **inbox** entries, written by the acceptance's dispatch step (`ENQUEUE_LUA`: once per run, `Keys.dispatch_enqueued`;
  ``run_id``, ``tenant``);
* **started** entries (``picked=1``), one per run handed to a worker: pending for that worker until it
  acknowledges the run's end, so a killed worker's run is reclaimed by ``XAUTOCLAIM`` exactly as before.

Two Lua scripts on the dispatcher's one slot make the selection (`Dispatcher.take`): `_DRAIN` moves new inbox
entries into per-tenant FIFO queues (acknowledging them at once, so they are never reclaimed as runs); then the
client reads what lives in the runs' slots (each waiting tenant's running set pruned of ended runs, the queue heads
whose cancel was requested); then `_PICK` drains again (an entry that arrived since is queued, never mistaken
for the started entry) and walks the ring of tenants with waiting runs, rotating it, and takes the
head of the first tenant below its ``max_running`` (a run whose cancel was requested is taken anyway: it ends at
once). The taken run is written as a started entry and read into the worker's pending list in the same script.
A tenant's backlog therefore waits for its own turn in the ring and never delays another tenant by more than one run
per tenant ahead of it.

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

from tier2.store.keys import DISPATCH_GROUP, Keys
from tier2.store.quotas import ended_runs, prune_ended
from tier2.store.replies import stream_entries, texts

__all__ = ["ENQUEUE_LUA", "Dispatcher", "TRIM_SCAN"]

#: stream entries one trim reads at most (from the oldest; entries of runs still waiting or running are re-read by
#: the next trim, so the bound keeps each pass cheap behind a long backlog)
TRIM_SCAN = 2000
_TRIM_CHUNK = 200

# Every key of these scripts is in the `{dispatch}` slot (the stream, the ring, the tenants' queues and running
# sets); what lives in the runs' slots (records, cancel flags) the client reads between them (`Dispatcher.take`).
# drain(...): new inbox entries into the tenants' queues (acknowledged at once: never reclaimed as runs).
_DRAIN_LUA = """
local function drain(cfg, group, consumer, stream, ring)
  while true do
    local got = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', 100, 'STREAMS', stream, '>')
    if not got then return end
    for _, entry in ipairs(got[1][2]) do
      local f, run_id, tenant, picked = entry[2], nil, '', false
      for i = 1, #f, 2 do
        if f[i] == 'run_id' then run_id = f[i + 1] elseif f[i] == 'tenant' then tenant = f[i + 1]
        elseif f[i] == 'picked' then picked = true end
      end
      redis.call('XACK', stream, group, entry[1])
      if run_id and not picked then
        redis.call('RPUSH', cfg.queue[1] .. tenant .. cfg.queue[2], run_id)
        if not redis.call('LPOS', ring, tenant) then redis.call('RPUSH', ring, tenant) end
      end
    end
  end
end
"""
# KEYS: dispatch stream, tenant ring. ARGV: group, consumer, config JSON (key templates). Drains, returns the ring.
_DRAIN = _DRAIN_LUA + """
drain(cjson.decode(ARGV[3]), ARGV[1], ARGV[2], KEYS[1], KEYS[2])
return redis.call('LRANGE', KEYS[2], 0, -1)
"""
# KEYS: dispatch stream, tenant ring. ARGV: group, consumer, config JSON (key templates, max_running table, the
# runs already seen cancelled: taken whatever the limit, they end at once). The running sets were pruned of ended
# runs just before. It drains again first: an inbox entry that arrived since `_DRAIN` would otherwise be the entry
# the XREADGROUP after the started entry's XADD returns (the oldest unread), and its run would be lost.
# Returns {entry id, run id} for a taken run, or {'', last stream id} when nothing can start now.
_PICK = _DRAIN_LUA + """
local cfg = cjson.decode(ARGV[3])
local group, consumer, stream, ring = ARGV[1], ARGV[2], KEYS[1], KEYS[2]
drain(cfg, group, consumer, stream, ring)
local cancelled = {}
for _, id in ipairs(cfg.cancelled) do cancelled[id] = true end
local function key(tpl, id) return tpl[1] .. id .. tpl[2] end
for _ = 1, redis.call('LLEN', ring) do
  local tenant = redis.call('LMOVE', ring, ring, 'LEFT', 'RIGHT')
  local queue = key(cfg.queue, tenant)
  local head = redis.call('LINDEX', queue, 0)
  if not head then
    redis.call('LREM', ring, 0, tenant)
  else
    local running = key(cfg.running, tenant)
    local limit = cfg.max_running[tenant] or cfg.max_running['']
    if redis.call('SCARD', running) < limit or cancelled[head] then
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
# KEYS: enqueued hash, dispatch stream. ARGV: run id, tenant. The acceptance's dispatch step: one inbox entry per
# run, however often the step is retried.
ENQUEUE_LUA = """
if redis.call('HSETNX', KEYS[1], ARGV[1], '1') == 0 then return 0 end
redis.call('XADD', KEYS[2], '*', 'run_id', ARGV[1], 'tenant', ARGV[2])
return 1
"""


class Dispatcher:
    """Takes the next run for a worker, fairly across tenants (see the module docstring)."""

    def __init__(self, client: aioredis.Redis, keys: Keys, max_running: Mapping[str, int]) -> None:
        """``max_running``: tenant -> runs at once; the ``""`` entry is the default for every other tenant."""
        self.r, self.keys = client, keys
        self._drain = client.register_script(_DRAIN)
        self._pick = client.register_script(_PICK)
        self._max_running = dict(max_running)
        self._queue, self._running = keys.template("tenant_queue"), keys.template("tenant_running")

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
        entry_id, value = await self._take_once(consumer)
        if entry_id:
            return entry_id, value
        # wait for the next entry (a new submission, or another worker's start: cheap spurious wake-ups)
        await self.r.xread({self.keys.dispatch(): value}, count=1, block=block_ms)
        entry_id, value = await self._take_once(consumer)
        return (entry_id, value) if entry_id else None

    async def _take_once(self, consumer: str) -> tuple[str, str]:
        """One selection in three one-slot steps: drain the inbox (`_DRAIN`, returns the ring), read what lives in
        the runs' slots (ended runs pruned from each waiting tenant's running set, the queue heads whose cancel was
        requested), then pick (`_PICK`). What changes between the steps only makes the pick conservative: a
        running set pruned a moment late counts a run too many; a head cancelled meanwhile waits for its turn."""
        stream, ring = self.keys.dispatch(), self.keys.dispatch_tenants()
        cfg = json.dumps({"queue": self._queue})
        tenants = texts(await self._drain(keys=[stream, ring], args=[DISPATCH_GROUP, consumer, cfg]))
        for tenant in tenants:
            await prune_ended(self.r, self.keys, self.keys.tenant_running(tenant))
        cancelled: list[str] = []
        if tenants:
            async with self.r.pipeline(transaction=False) as p:
                for tenant in tenants:
                    p.lindex(self.keys.tenant_queue(tenant), 0)
                heads = texts([x for x in await p.execute() if x is not None])
            if heads:
                async with self.r.pipeline(transaction=False) as p:
                    for head in heads:
                        p.exists(self.keys.run_cancel(head))
                    flags = await p.execute()
                cancelled = [h for h, flag in zip(heads, flags, strict=True) if flag]
        pick = json.dumps({"queue": self._queue, "running": self._running, "max_running": self._max_running,
                           "cancelled": cancelled})
        entry_id, value = await self._pick(keys=[stream, ring], args=[DISPATCH_GROUP, consumer, pick])
        return str(entry_id), str(value)

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
            acked = [(eid, f.get("run_id", ""), bool(f.get("picked"))) for eid, f in entries if eid not in pending]
            ended = await ended_runs(self.r, self.keys, {rid for _, rid, _ in acked if rid})
            doomed = [(eid, rid, picked) for eid, rid, picked in acked if not rid or rid in ended]
            if doomed:
                deleted += int(await self.r.xdel(stream, *(eid for eid, _, _ in doomed)))
                inbox = [rid for _, rid, picked in doomed if rid and not picked]
                if inbox:  # the run's acceptance step will never enqueue it again: it has ended
                    await self.r.hdel(self.keys.dispatch_enqueued(), *inbox)
            if len(entries) < _TRIM_CHUNK:
                break
            start = f"({hi}"
        return deleted
