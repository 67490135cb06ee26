"""Project snapshots in Redis, content-addressed: blobs (``SET NX`` by sha256, stored once across every run) and
manifests by id; plus, per run, the snapshot taken right after each side-effect operation (so a replayed
operation can bring the files back to what they were after it)."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis

from tier2.store.keys import Keys

__all__ = ["SnapshotStore"]


class SnapshotStore:
    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.r, self.keys = client, keys
        self.known: set[str] = set()  # blobs this process has seen stored

    def _blob(self, digest: str) -> str:
        return f"{self.keys.prefix}:snap:blob:{digest}"

    def _tree(self, snapshot_id: str) -> str:
        return f"{self.keys.prefix}:snap:tree:{snapshot_id}"

    def _ops(self, run_id: str) -> str:
        return f"{self.keys.prefix}:run:{run_id}:snap_ops"

    async def put(self, snapshot_id: str, manifest_json: str, blobs: dict[str, bytes]) -> int:
        """Store the manifest and every blob not stored yet; returns how many blobs were new."""
        todo = [d for d in blobs if d not in self.known]
        new = 0
        if todo:
            pipe = self.r.pipeline(transaction=False)
            for d in todo:
                pipe.set(self._blob(d), blobs[d].decode("latin-1"), nx=True)  # bytes-exact over a str client
            new = sum(1 for ok in await pipe.execute() if ok)
        await self.r.set(self._tree(snapshot_id), manifest_json, nx=True)
        self.known.update(todo)
        return new

    async def manifest(self, snapshot_id: str) -> str | None:
        raw = await self.r.get(self._tree(snapshot_id))
        return raw.decode() if isinstance(raw, bytes) else raw

    async def blobs(self, digests: list[str]) -> dict[str, bytes]:
        if not digests:
            return {}
        values: list[Any] = await self.r.mget([self._blob(d) for d in digests])
        missing = [d for d, v in zip(digests, values, strict=True) if v is None]
        if missing:
            raise ValueError(f"snapshot blobs missing from the store: {missing[:3]}")
        return {d: (v if isinstance(v, bytes) else v.encode("latin-1")) for d, v in zip(digests, values, strict=True)}

    async def record_op(self, run_id: str, op_id: str, snapshot_id: str) -> None:
        await self.r.hset(self._ops(run_id), op_id, snapshot_id)

    async def after_op(self, run_id: str, op_id: str) -> str | None:
        raw = await self.r.hget(self._ops(run_id), op_id)
        return raw.decode() if isinstance(raw, bytes) else raw
