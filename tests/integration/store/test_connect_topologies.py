"""`tier2.store.connect` against real topologies on loopback: a 3-node Redis Cluster and a primary + replica
watched by three Sentinels (`tier2.testing.redis_topology`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tier2.store.connect import connect
from tier2.store.run_store import resilient_client
from tier2.testing.redis_topology import RedisShards, SentinelSet

pytestmark = [pytest.mark.redis, pytest.mark.slow]


@pytest.fixture
def shards(tmp_path: Path) -> Iterator[RedisShards]:
    with RedisShards(tmp_path / "cluster") as c:
        yield c


@pytest.fixture
def sentinels(tmp_path: Path) -> Iterator[SentinelSet]:
    with SentinelSet(tmp_path / "sentinel") as s:
        yield s


async def test_a_cluster_url_reaches_every_node_through_the_slot_map(shards: RedisShards) -> None:
    client = connect(shards.url)
    try:
        for i in range(30):  # keys spread over the three primaries' slots
            await client.set(f"k{i}", str(i))
        assert [await client.get(f"k{i}") for i in range(30)] == [str(i) for i in range(30)]
        nodes = {client.get_node_from_key(f"k{i}").port for i in range(30)}  # type: ignore[attr-defined]
        assert nodes == set(shards.ports)
    finally:
        await client.aclose()


async def test_a_sentinel_url_follows_the_master_through_a_failover(sentinels: SentinelSet) -> None:
    client = resilient_client(sentinels.url, outage_s=30)
    try:
        await client.set("before", "1")
        await client.execute_command("WAIT", 1, 5000)
        old = sentinels.kill_primary()
        new = sentinels.wait_failover(old)
        assert new != old
        assert await client.get("before") == "1"  # replicated before the kill: kept by the promoted replica
        await client.set("after", "2")
        assert (await client.info("server"))["tcp_port"] == new
    finally:
        await client.aclose()


async def test_the_health_report_reads_a_version_from_either_topology(shards: RedisShards,
                                                                      sentinels: SentinelSet) -> None:
    from tier2.service.health import _redis

    for url in (shards.url, sentinels.url):
        got = await _redis(url)
        assert got["ok"] is True and str(got["version"])[:1].isdigit(), got
