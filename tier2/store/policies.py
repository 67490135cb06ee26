"""Hot-policy snapshots in Redis, content-addressed by the policy's hash (`Keys.policy_snapshot`).

A run takes one snapshot when its first attempt starts and records its hash (``policy`` in the run record); every
later attempt — a resumed one on another worker or another machine included — loads that snapshot from here instead
of reading the policy files again, so an edit made meanwhile never changes a run that already started. A snapshot
is written once (``SET NX``: the same hash is the same bytes) and never expires while runs may name it.
"""

from __future__ import annotations

import logging

import redis.asyncio as aioredis
from pydantic import ValidationError

from tier2.settings.policy import Policy
from tier2.store.keys import Keys
from tier2.store.replies import opt_text

__all__ = ["PolicySnapshots"]

log = logging.getLogger(__name__)


class PolicySnapshots:
    """Put and get `Policy` snapshots by hash; the client is injected."""

    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.r, self.keys = client, keys

    async def put(self, policy: Policy) -> str:
        """Store ``policy`` under its ``source_hash`` (kept as it is when already there); returns the hash."""
        await self.r.set(self.keys.policy_snapshot(policy.source_hash), policy.model_dump_json(), nx=True)
        return policy.source_hash

    async def get(self, digest: str) -> Policy | None:
        """The snapshot stored under ``digest``; None when there is none or it no longer validates (a snapshot
        written by another version of tier2)."""
        raw = opt_text(await self.r.get(self.keys.policy_snapshot(digest)))
        if raw is None:
            return None
        try:
            return Policy.model_validate_json(raw)
        except ValidationError as exc:
            log.warning("policy snapshot %s does not load: %s", digest, exc)
            return None
