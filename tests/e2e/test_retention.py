"""Retention on real processes: a delivered run shows when it expires, `tier2 runs export` copies it (record,
every event, trajectory, delivery, design, report) before that, refuses to overwrite or to export a run that has
not ended, and once the retention is over the run is gone from the store, its record, its keys and the listing."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from tests.e2e.helpers import run_cli
from tier2.store.keys import Keys
from tier2.testing.cluster import LocalCluster, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
RETENTION_S = 20


@pytest.fixture
def cluster(tmp_path: Path, redis_url: str) -> Iterator[LocalCluster]:
    prefix = f"ret-{uuid.uuid4().hex[:8]}"
    with LocalCluster(tmp_path, redis_url=redis_url, key_prefix=prefix) as c:
        (c.config / "security" / "zz-retention.toml").write_text(f"[retention]\nrun_ttl_s = {RETENTION_S}\n")
        c.keys = Keys(prefix=prefix)  # type: ignore[attr-defined]
        c.start_service(workers=1)
        yield c


def test_an_ended_run_is_exported_then_expires(cluster: LocalCluster, tmp_path: Path) -> None:
    run_id = httpx.post(f"{cluster.base}/v1/runs", json={"brief": POTION}, timeout=30).json()["run_id"]
    env = {"TIER2_URL": cluster.base}
    early = run_cli("runs", "export", run_id, "--out", str(tmp_path / "early"), env=env)
    run = wait_until(lambda: (r := httpx.get(f"{cluster.base}/v1/runs/{run_id}", timeout=30).json())["status"]
                     in ("delivered", "failed", "stopped") and r, 240, "the run to end")
    assert run["status"] == "delivered", run["stop_reason"]
    if early.returncode != 0:                                   # asked while it ran: refused, nothing written
        assert "export it once it has ended" in early.stderr and not (tmp_path / "early").exists()
    assert time.time() < run["expires_at"] <= time.time() + RETENTION_S + 1

    out = tmp_path / "export"
    proc = run_cli("runs", "export", run_id, "--out", str(out), "--json", env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    manifest = json.loads(proc.stdout)
    assert manifest == json.loads((out / "export.json").read_text())
    assert {"run.json", "events.jsonl", "trajectory.json", "delivery.json", "design.json", "report.json"} <= \
        set(manifest["files"])
    for name, meta in manifest["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == meta["sha256"]
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert [e["id"] for e in events] == list(range(1, len(events) + 1)) == list(range(1, manifest["events"] + 1))
    assert events[-1]["event"] == "run_finished" and events[-1]["data"]["status"] == "delivered"
    assert json.loads((out / "run.json").read_text())["run_id"] == run_id
    assert json.loads((out / "delivery.json").read_text())["status"] == "delivered"
    assert json.loads((out / "trajectory.json").read_text())["calls"]

    again = run_cli("runs", "export", run_id, "--out", str(out), env=env)  # never overwrites
    assert again.returncode == 2 and "nothing overwritten" in again.stderr
    assert json.loads((out / "export.json").read_text()) == manifest

    r = redis.Redis.from_url(cluster.redis_url, decode_responses=True)
    keys: Keys = cluster.keys  # type: ignore[attr-defined]
    wait_until(lambda: httpx.get(f"{cluster.base}/v1/runs/{run_id}", timeout=30).status_code == 404,
               RETENTION_S + 30, "the run to expire", every=1)
    assert not [k for k in keys.run_retained(run_id) if r.exists(k)]  # every key of the run is gone
    listed = httpx.get(f"{cluster.base}/v1/runs", timeout=30).json()
    assert run_id not in [x["run_id"] for x in listed["runs"]]
    gone = run_cli("runs", "export", run_id, "--out", str(tmp_path / "late"), env=env)
    assert gone.returncode == 2 and not (tmp_path / "late").exists()
