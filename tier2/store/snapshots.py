"""Project snapshots in Redis, content-addressed and per tenant: blobs by sha256 (stored once per tenant across
its runs), manifests by id; plus, per run, the snapshot taken right after each side-effect operation (so a replayed
operation can bring the files back to what they were after it).

Bounded (security config ``[tenants]``, `tier2.settings.tenants`):

* **quota** — ``snapshot_bytes``: the bytes of the tenant's blobs and manifests in Redis, counted in a ledger
  (`Keys.snap_sizes`, `Keys.snap_bytes`) kept in the same script that stores them. A snapshot whose new blobs
  would pass it is refused whole (`QuotaExceeded`, nothing stored) — after one GC pass (`tier2.store.snapshot_gc`)
  has freed what no live snapshot references;
* **per blob** — ``snapshot_blob_bytes``: a bigger file is never read nor stored (`tier2.workspace.snapshots.scan`);
* **expiry** — ``snapshot_ttl_s``: every blob, manifest and run index has a TTL, refreshed by every snapshot that
  references it; what no snapshot touched for that long goes by itself.

Blobs travel as latin-1 text over the decoding client (bytes-exact); their stored length is what the quota counts.
Snapshots stored before they were per tenant (``snap:blob:<digest>``, no TTL) are still read as a fallback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from tier2.errors import QuotaExceeded
from tier2.settings.tenants import LOCAL_TENANT, TenantLimits
from tier2.store.connect import get_each
from tier2.store.keys import Keys
from tier2.store.snapshot_gc import SnapshotGC

__all__ = ["SnapshotLimits", "SnapshotStore"]

# KEYS: stamps, sizes, bytes, clock, tree, tenant's snapshot runs (all the tenant's slot). ARGV: cfg JSON,
# manifest, then the data of cfg.given (in order). The run's index of its snapshots (its slot) and the set of
# snapshot tenants (the globals') were written just before, in that order: a GC pass that reads the run's index
# after this script sees the snapshot; one that read it before began before the stamps (kept by them).
# -> {'ok', new blobs, used} | {'missing', JSON digests} | {'quota', used, needed}
_PUT = """
local cfg = cjson.decode(ARGV[1])
local given = {}
for i, d in ipairs(cfg.given) do given[d] = ARGV[2 + i] end
local need, missing, fresh = 0, {}, {}
for _, d in ipairs(cfg.digests) do
  if redis.call('EXISTS', cfg.blob .. d) == 0 then
    if given[d] then need = need + string.len(given[d]); fresh[#fresh + 1] = d else missing[#missing + 1] = d end
  end
end
if #missing > 0 then return {'missing', cjson.encode(missing)} end
local tree_new = redis.call('EXISTS', KEYS[5]) == 0
if tree_new then need = need + string.len(ARGV[2]) end
local used = tonumber(redis.call('GET', KEYS[3]) or '0')
if need > 0 and used + need > cfg.quota then return {'quota', tostring(used), tostring(need)} end
local stamp = redis.call('INCR', KEYS[4])
local function charge(field, n)
  if redis.call('HSETNX', KEYS[2], field, n) == 1 then redis.call('INCRBY', KEYS[3], n) end
end
for _, d in ipairs(fresh) do redis.call('SET', cfg.blob .. d, given[d], 'PX', cfg.ttl_ms) end
for _, d in ipairs(cfg.digests) do
  redis.call('PEXPIRE', cfg.blob .. d, cfg.ttl_ms)
  redis.call('ZADD', KEYS[1], stamp, 'b:' .. d)
  charge('b:' .. d, redis.call('STRLEN', cfg.blob .. d))
end
if tree_new then
  redis.call('SET', KEYS[5], ARGV[2], 'PX', cfg.ttl_ms)
else
  redis.call('PEXPIRE', KEYS[5], cfg.ttl_ms)
end
redis.call('ZADD', KEYS[1], stamp, 't:' .. cfg.sid)
charge('t:' .. cfg.sid, redis.call('STRLEN', KEYS[5]))
if cfg.run ~= '' then redis.call('SADD', KEYS[6], cfg.run) end
for _, k in ipairs({KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]}) do redis.call('PEXPIRE', k, cfg.ttl_ms * 2) end
return {'ok', tostring(#fresh), redis.call('GET', KEYS[3])}
"""


@dataclass(frozen=True)
class SnapshotLimits:
    """A tenant's snapshot-store limits (``snapshot_bytes``, ``snapshot_blob_bytes``, ``snapshot_ttl_s``)."""

    quota_bytes: int = TenantLimits().snapshot_bytes
    blob_bytes: int = TenantLimits().snapshot_blob_bytes
    ttl_s: int = TenantLimits().snapshot_ttl_s

    @classmethod
    def of(cls, limits: TenantLimits) -> SnapshotLimits:
        return cls(limits.snapshot_bytes, limits.snapshot_blob_bytes, limits.snapshot_ttl_s)


class SnapshotStore:
    """One tenant's snapshots (``run_id``: the run taking them, whose index keeps them live for the GC)."""

    def __init__(self, client: aioredis.Redis, keys: Keys, tenant: str = LOCAL_TENANT,
                 limits: SnapshotLimits = SnapshotLimits(), run_id: str | None = None) -> None:
        self.r, self.keys, self.tenant, self.limits, self.run_id = client, keys, tenant, limits, run_id
        self.known: set[str] = set()  # blobs this process has seen stored (their data is not sent again)
        self._put = client.register_script(_PUT)

    def _config(self, snapshot_id: str, digests: list[str], given: list[str]) -> str:
        return json.dumps({"tenant": self.tenant, "blob": self.keys.snap_blob(self.tenant, ""), "sid": snapshot_id,
                           "ttl_ms": self.limits.ttl_s * 1000, "quota": self.limits.quota_bytes,
                           "digests": digests, "given": given, "run": self.run_id or ""})

    async def put(self, snapshot_id: str, manifest_json: str, blobs: dict[str, bytes]) -> int:
        """Store the manifest and every blob not stored yet, refreshing the TTL of every blob it references; returns
        how many blobs were new. `QuotaExceeded` (nothing stored) when the new bytes do not fit ``snapshot_bytes``,
        even after a GC pass of the tenant."""
        digests = sorted(blobs)
        given = [d for d in digests if d not in self.known]
        collected = False
        await self.r.sadd(self.keys.snap_tenants(), self.tenant)
        if self.run_id:  # before the tenant's script: the GC keeps what a live run's index names
            async with self.r.pipeline(transaction=False) as p:
                p.sadd(self.keys.run_snapshots(self.run_id), snapshot_id)
                p.pexpire(self.keys.run_snapshots(self.run_id), self.limits.ttl_s * 1000)
                await p.execute()
        for _ in range(4):
            keys = [self.keys.snap_stamps(self.tenant), self.keys.snap_sizes(self.tenant),
                    self.keys.snap_bytes(self.tenant), self.keys.snap_clock(self.tenant),
                    self.keys.snap_tree(self.tenant, snapshot_id), self.keys.snap_runs(self.tenant)]
            args: list[Any] = [self._config(snapshot_id, digests, given), manifest_json,
                               *(blobs[d].decode("latin-1") for d in given)]  # bytes-exact over a str client
            reply = await self._put(keys=keys, args=args)
            verdict = _text(reply[0])
            if verdict == "ok":
                self.known.update(digests)
                return int(reply[1])
            if verdict == "missing":  # expired or collected since this process saw it: send its data
                lost = set(json.loads(_text(reply[1])))
                self.known -= lost
                given = sorted(set(given) | lost)
                continue
            used, needed = int(reply[1]), int(reply[2])
            if collected:
                raise QuotaExceeded("snapshot_bytes", used, self.limits.quota_bytes,
                                    f"the tenant's snapshots use {used} of {self.limits.quota_bytes} bytes in the "
                                    f"snapshot store (snapshot_bytes); this snapshot needs {needed} more")
            await SnapshotGC(self.r, self.keys).collect(self.tenant)  # free what no live snapshot references
            self.known.clear()
            given, collected = digests, True
        raise RuntimeError("snapshot store: blobs kept disappearing while storing a snapshot")

    async def manifest(self, snapshot_id: str) -> str | None:
        raw = await self.r.get(self.keys.snap_tree(self.tenant, snapshot_id))
        if raw is None:
            raw = await self.r.get(self.keys.legacy_snap_tree(snapshot_id))
        return None if raw is None else _text(raw)

    async def blobs(self, digests: list[str]) -> dict[str, bytes]:
        if not digests:
            return {}
        values: list[Any] = await self.r.mget([self.keys.snap_blob(self.tenant, d) for d in digests])
        absent = [d for d, v in zip(digests, values, strict=True) if v is None]
        if absent:  # stored before snapshots were per tenant
            legacy = dict(zip(absent, await get_each(self.r, [self.keys.legacy_snap_blob(d) for d in absent]),
                              strict=True))  # untagged names: one GET each (many slots)
            values = [legacy[d] if v is None else v for d, v in zip(digests, values, strict=True)]
        missing = [d for d, v in zip(digests, values, strict=True) if v is None]
        if missing:
            raise ValueError(f"snapshot blobs missing from the store: {missing[:3]}")
        return {d: (v if isinstance(v, bytes) else v.encode("latin-1")) for d, v in zip(digests, values, strict=True)}

    async def used(self) -> int:
        """The bytes the tenant's snapshots hold in Redis (the ledger; the GC recounts it)."""
        return int(await self.r.get(self.keys.snap_bytes(self.tenant)) or 0)

    async def record_op(self, run_id: str, op_id: str, snapshot_id: str) -> None:
        key = self.keys.run_snap_ops(run_id)
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, op_id, snapshot_id)
        pipe.expire(key, self.limits.ttl_s)
        await pipe.execute()

    async def after_op(self, run_id: str, op_id: str) -> str | None:
        raw = await self.r.hget(self.keys.run_snap_ops(run_id), op_id)
        return None if raw is None else _text(raw)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
