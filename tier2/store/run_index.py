"""A tenant's runs, newest first, a page at a time: the per-tenant index (`Keys.tenant_runs`) and its reads.

`RunStore.accept_run` adds every accepted run of a tenant to the index in the same script that writes the record,
so a listed id always has a record until the run's retention ends (`tier2.store.retention`): a page drops the
entries of expired runs it meets. Pages are keyset-paginated by ``(accepted at, run id)``: a run accepted while a
client pages never shifts the next page (no duplicate, no skip). Filters (status, text in the brief or the id) are
applied to the records read, so a page scans at most ``scan`` index entries and says where to continue
(`RunPage.next`) — a rare filter over a long history costs bounded work per request, never a full scan.

Runs accepted before the index existed are added once by `RunIndex.backfill` (the service's startup).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

import redis.asyncio as aioredis

from tier2.store.connect import get_each
from tier2.store.keys import Keys
from tier2.store.records import RunRecord, load_run_record
from tier2.store.replies import members, opt_text, scored

__all__ = ["Cursor", "RunIndex", "RunPage", "SCAN_LIMIT"]

#: index entries one page request reads at most (filters that match rarely continue on the next request)
SCAN_LIMIT: Final = 2000
_CHUNK: Final = 200
_BACKFILL_VERSION: Final = "1"


@dataclass(frozen=True)
class Cursor:
    """Where a page ends: the last run it covered (its acceptance time and id)."""

    at: float
    run_id: str


@dataclass(frozen=True)
class RunPage:
    runs: list[RunRecord]
    #: where the next page starts (None: the listing is complete)
    next: Cursor | None
    #: index entries read for this page
    scanned: int


def _load(raw: str | None) -> RunRecord | None:
    """A stored record, or None when it is gone or unreadable (a listing never fails on one bad record)."""
    if raw is None:
        return None
    try:
        return load_run_record(raw)
    except ValueError:
        return None


def _matches(record: RunRecord, statuses: Collection[str] | None, text: str | None) -> bool:
    if statuses and record.status not in statuses:
        return False
    if text:
        return text in record.brief.casefold() or text in record.run_id.casefold()
    return True


class RunIndex:
    """Reads of the per-tenant run index; the client is injected."""

    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.r, self.keys = client, keys

    async def page(self, tenant: str, *, after: Cursor | None = None, statuses: Collection[str] | None = None,
                   text: str | None = None, limit: int = 50, scan: int = SCAN_LIMIT) -> RunPage:
        """Up to ``limit`` of the tenant's runs older than ``after`` (newest first) matching every filter given:
        ``statuses`` (any of), ``text`` (case-insensitive, in the brief or the run id)."""
        key = self.keys.tenant_runs(tenant)
        needle = text.casefold() if text else None
        found: list[RunRecord] = []
        last = after
        scanned = 0
        while scanned < scan:
            entries = await self._older(key, last, min(_CHUNK, scan - scanned))
            if not entries:
                return RunPage(found, None, scanned)
            raws = await get_each(self.r, [self.keys.run(run_id) for run_id, _ in entries])
            gone = [run_id for (run_id, _), raw in zip(entries, raws, strict=True) if raw is None]
            if gone:  # expired (tier2.store.retention): the index forgets them as it meets them
                await self.r.zrem(key, *gone)
            for (run_id, at), raw in zip(entries, raws, strict=True):
                scanned += 1
                last = Cursor(at, run_id)
                record = _load(opt_text(raw))
                if record is not None and record.tenant == tenant and _matches(record, statuses, needle):
                    found.append(record)
                    if len(found) >= limit:
                        return RunPage(found, last if await self._older(key, last, 1) else None, scanned)
        return RunPage(found, last if last is not None and await self._older(key, last, 1) else None, scanned)

    async def _older(self, key: str, cursor: Cursor | None, n: int) -> list[tuple[str, float]]:
        """The next ``n`` entries after ``cursor`` in newest-first order (ties on the time: by id, descending)."""
        if cursor is None:
            reply = await self.r.zrevrangebyscore(key, "+inf", "-inf", start=0, num=n, withscores=True)
            return scored(reply)
        out: list[tuple[str, float]] = []
        offset = 0
        while len(out) < n:  # the cursor's time is inclusive: skip the ties already covered (ids >= the cursor's)
            reply = await self.r.zrevrangebyscore(key, cursor.at, "-inf", start=offset, num=n, withscores=True)
            if not reply:
                break
            offset += len(reply)
            out += [(m, s) for m, s in scored(reply) if s < cursor.at or m < cursor.run_id]
        return out[:n]

    async def backfill(self) -> int:
        """Add every run of the global index that has a tenant to its tenant's index (once per store: a marker
        key records it); returns how many entries were added. Idempotent: entries already present are kept."""
        if await self.r.get(self.keys.tenant_runs_indexed()) == _BACKFILL_VERSION:
            return 0
        added, start = 0, 0
        while True:
            ids = members(await self.r.zrange(self.keys.runs_index(), start, start + _CHUNK - 1))
            if not ids:
                break
            start += len(ids)
            raws = await get_each(self.r, [self.keys.run(i) for i in ids])
            async with self.r.pipeline(transaction=False) as p:
                queued = 0
                for raw in raws:
                    record = _load(opt_text(raw))
                    if record is not None and record.tenant:
                        p.zadd(self.keys.tenant_runs(record.tenant), {record.run_id: record.created_at or 0.0},
                               nx=True)
                        queued += 1
                if queued:
                    added += sum(int(n) for n in await p.execute())
        await self.r.set(self.keys.tenant_runs_indexed(), _BACKFILL_VERSION)
        return added
