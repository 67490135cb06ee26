"""Accept = durable under failover: with `Durability.min_replicas` the accept waits (``WAIT``) for a replica's
acknowledgement of its own write, and says ``not_replicated`` when none comes in time (a primary + replica + three
Sentinels on loopback, `tier2.testing.redis_topology`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tier2.store.connect import connect
from tier2.store.keys import Keys
from tier2.store.run_store import Durability, RunStore
from tier2.testing.redis_topology import SentinelSet

pytestmark = [pytest.mark.redis, pytest.mark.slow]


@pytest.fixture
def sentinels(tmp_path: Path) -> Iterator[SentinelSet]:
    with SentinelSet(tmp_path / "sentinel") as s:
        yield s


@pytest.fixture
async def store(sentinels: SentinelSet) -> AsyncIterator[RunStore]:
    s = RunStore(connect(sentinels.url, resilient=True), Keys(prefix="rep"), Durability(1, 2000))
    yield s
    await s.close()


async def test_the_accept_is_created_once_a_replica_has_the_write(store: RunStore, sentinels: SentinelSet) -> None:
    got = await store.accept_run("r-1", {"status": "queued"}, project_id="p1", dispatch=True, tenant="a")
    assert got.outcome == "created"
    replica = connect(f"redis://127.0.0.1:{sentinels.replicas[0]}")
    try:
        assert await replica.exists(store.keys.run("r-1")) == 1  # acknowledged = already on the replica
    finally:
        await replica.aclose()


async def test_without_a_replica_the_accept_is_not_replicated(store: RunStore, sentinels: SentinelSet) -> None:
    sentinels.kill(sentinels.replicas[0])
    got = await store.accept_run("r-2", {"status": "queued"}, project_id="p2", dispatch=True, tenant="a")
    assert (got.outcome, got.detail) == ("not_replicated", "0")
    assert await store.get_run("r-2") is not None  # written on the primary: a retry with the key replays it
    again = await store.accept_run("r-2", {"status": "queued"}, project_id="p2", dispatch=True, tenant="a")
    assert again.outcome == "not_replicated"  # still no replica: still no acceptance
    assert await store.r.xlen(store.keys.dispatch()) == 1  # the retried call found its record: one entry
