"""Retention: every Redis key of a run lives a bounded time after the run ends (docs/operations.md §20).

The bound is set where runs end: `tier2.store.finish.finish_run` gives every key of the run
(`Keys.run_retained`) the store's ``retention_s`` in the same script as the terminal write, and later writes keep
it (`RunStore.update_run` writes with ``KEEPTTL``; hashes, lists and streams keep a TTL by themselves); a key with
its own longer TTL (a snapshot's operation map) is cut to the retention. A
`RetentionSweep` at every worker start is the backstop: runs that ended before retention was configured (or on a
store where it was 0), and keys created after the end (a late attempt record), get the bound too — the record's
remaining time, so a run's keys expire together — and index entries whose run has expired are dropped.

Nothing is deleted early: a key without a TTL or with a longer one gets the run's, a key with a shorter one (the
lease) keeps it. To keep a run longer, export it
first (`tier2 runs export RUN_ID`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import redis.asyncio as aioredis

from tier2.events import TERMINAL_STATUSES
from tier2.store.connect import get_each
from tier2.store.keys import Keys
from tier2.store.records import stored_status
from tier2.store.replies import members

__all__ = ["RetentionSweep", "Swept"]

_CHUNK: Final = 200

# KEYS: the run's record, then its other keys. ARGV: retention in seconds.
# A key without a TTL, or with a longer one, gets the record's remaining time (the record gets ARGV[1] first when it
# has none): a run's keys expire together, none later than its record.
_BOUND = """
local rt = redis.call('TTL', KEYS[1])
if rt == -2 then return -1 end
if rt == -1 then redis.call('EXPIRE', KEYS[1], ARGV[1]); rt = tonumber(ARGV[1]) end
local n = 0
for i = 2, #KEYS do
  local t = redis.call('TTL', KEYS[i])
  if t == -1 or t > rt then redis.call('EXPIRE', KEYS[i], rt); n = n + 1 end
end
return n
"""


@dataclass(frozen=True)
class Swept:
    #: ended runs that had a key without a bound (now bounded)
    bounded: int
    #: index entries of runs whose record had expired (removed from the global index)
    pruned: int


class RetentionSweep:
    """One pass over every run of the global index (oldest first); the client is injected."""

    def __init__(self, client: aioredis.Redis, keys: Keys, retention_s: int) -> None:
        self.r, self.keys, self.retention_s = client, keys, retention_s
        self._bound = client.register_script(_BOUND)

    async def run(self) -> Swept:
        if self.retention_s <= 0:
            return Swept(0, 0)
        bounded = pruned = 0
        index = self.keys.runs_index()
        start = 0
        while True:
            ids = members(await self.r.zrange(index, start, start + _CHUNK - 1))
            if not ids:
                break
            raws = await get_each(self.r, [self.keys.run(i) for i in ids])
            gone = [i for i, raw in zip(ids, raws, strict=True) if raw is None]
            for run_id, raw in zip(ids, raws, strict=True):
                if stored_status(raw) in TERMINAL_STATUSES:
                    n = int(await self._bound(keys=self.keys.run_retained(run_id), args=[self.retention_s]))
                    bounded += n > 0
            if gone:
                pruned += int(await self.r.zrem(index, *gone))
            start += len(ids) - len(gone)
        return Swept(bounded, pruned)

