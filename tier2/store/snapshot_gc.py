"""Garbage collection of the snapshot store: remove the blobs and manifests no live snapshot references.

A snapshot is **live** while the run that took it has not ended (its record is not terminal): only such a run can
resume and restore it. Everything else — snapshots of ended runs, of runs whose record is gone, blobs no live
manifest lists — is removed, and the tenant's ledger (`Keys.snap_sizes`, `Keys.snap_bytes`) with it.

Concurrent snapshots are safe without a lock: every stored snapshot stamps each blob and manifest it references
with a tick of the tenant's clock (`Keys.snap_stamps`), atomically with storing it and with adding it to its run's
index. A pass takes a tick first, then reads the live runs' manifests; the delete script removes a member only if
its stamp is still older than that tick — so anything a snapshot referenced after the pass began is kept, and
anything referenced before it is in a manifest the pass has read.

When: after every run ends (its tenant), when a snapshot would pass the tenant's quota (then the snapshot is
retried once), and `collect_all` for every tenant. The TTLs remove what the GC never reaches (a tenant that stopped
running anything); `collect_all` also gives pre-tenant snapshot keys (no TTL) one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import redis.asyncio as aioredis

from tier2.events import TERMINAL_STATUSES
from tier2.store.keys import Keys
from tier2.store.replies import text, texts

__all__ = ["Collected", "SnapshotGC"]

_BATCH = 500

# KEYS: stamps, sizes, bytes. ARGV: tick, blob key prefix, tree key prefix, members... -> {blobs, trees} removed
_DELETE = """
local tick, removed = tonumber(ARGV[1]), {b = 0, t = 0}
for i = 4, #ARGV do
  local m = ARGV[i]
  local stamp = redis.call('ZSCORE', KEYS[1], m)
  if stamp and tonumber(stamp) < tick then
    local kind, id = string.sub(m, 1, 1), string.sub(m, 3)
    redis.call('DEL', (kind == 'b' and ARGV[2] or ARGV[3]) .. id)
    redis.call('ZREM', KEYS[1], m)
    local size = redis.call('HGET', KEYS[2], m)
    if size then
      redis.call('HDEL', KEYS[2], m)
      redis.call('DECRBY', KEYS[3], size)
    end
    removed[kind] = removed[kind] + 1
  end
end
return {removed.b, removed.t}
"""
# KEYS: sizes, bytes -> the recounted total
_RECOUNT = """
local total = 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do total = total + tonumber(v) end
redis.call('SET', KEYS[2], total, 'KEEPTTL')
return total
"""


@dataclass(frozen=True)
class Collected:
    """One tenant's pass: blobs and manifests removed, runs found ended, the bytes left."""

    blobs: int
    trees: int
    ended_runs: int
    used: int


class SnapshotGC:
    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.r, self.keys = client, keys
        self._delete = client.register_script(_DELETE)
        self._recount = client.register_script(_RECOUNT)

    async def _live_runs(self, tenant: str) -> tuple[list[str], int]:
        """The tenant's snapshot-taking runs that have not ended (ended ones leave the index)."""
        runs = sorted(texts(await self.r.smembers(self.keys.snap_runs(tenant))))
        live: list[str] = []
        ended: list[str] = []
        for run_id in runs:
            raw = await self.r.get(self.keys.run(run_id))
            status = json.loads(raw).get("status") if raw else None
            (live if raw and status not in TERMINAL_STATUSES else ended).append(run_id)
        if ended:
            await self.r.srem(self.keys.snap_runs(tenant), *ended)
            await self.r.delete(*(self.keys.run_snapshots(r) for r in ended))
        return live, len(ended)

    async def _live_members(self, tenant: str, runs: list[str]) -> set[str]:
        trees: set[str] = set()
        for run_id in runs:
            trees |= set(texts(await self.r.smembers(self.keys.run_snapshots(run_id))))
        members = {f"t:{sid}" for sid in trees}
        for sid in sorted(trees):
            raw = await self.r.get(self.keys.snap_tree(tenant, sid))
            if raw is not None:
                members |= {f"b:{entry[1]}" for entry in json.loads(text(raw)) if entry[1]}
        return members

    async def collect(self, tenant: str) -> Collected:
        """One pass over ``tenant``'s snapshots (safe while its runs keep taking snapshots)."""
        stamps = self.keys.snap_stamps(tenant)
        tick = int(await self.r.incr(self.keys.snap_clock(tenant)))
        runs, ended = await self._live_runs(tenant)
        live = await self._live_members(tenant, runs)
        members: list[bytes | str] = await self.r.zrangebyscore(stamps, "-inf", f"({tick}")  # type: ignore[assignment]
        old = [m for m in texts(members) if m not in live]
        removed = {"b": 0, "t": 0}
        for i in range(0, len(old), _BATCH):
            batch = old[i:i + _BATCH]
            blobs, trees = await self._delete(
                keys=[stamps, self.keys.snap_sizes(tenant), self.keys.snap_bytes(tenant)],
                args=[tick, self.keys.snap_blob(tenant, ""), self.keys.snap_tree(tenant, ""), *batch])
            removed["b"] += int(blobs)
            removed["t"] += int(trees)
        used = int(await self._recount(keys=[self.keys.snap_sizes(tenant), self.keys.snap_bytes(tenant)]))
        return Collected(removed["b"], removed["t"], ended, used)

    async def collect_all(self, legacy_ttl_s: int | None = None) -> dict[str, Collected]:
        """A pass over every tenant that has snapshots; ``legacy_ttl_s``: give snapshot keys from before tenants
        (no TTL) this one, so they go once no run can still resume from them."""
        done = {t: await self.collect(t) for t in sorted(texts(await self.r.smembers(self.keys.snap_tenants())))}
        if legacy_ttl_s is not None:
            for pattern in (self.keys.legacy_snap_blob("*"), self.keys.legacy_snap_tree("*")):
                head = len(pattern) - 1
                async for key in self.r.scan_iter(match=pattern, count=1000):
                    name = text(key)
                    if ":" not in name[head:] and await self.r.ttl(name) == -1:
                        await self.r.expire(name, legacy_ttl_s)
        return done
