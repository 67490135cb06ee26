"""Configuration tiers on real processes (``tier2 serve`` + ``tier2 worker`` + redis-server, offline model): a hot
policy edit changes the next run without a restart; an edit that raises a ceiling is refused, with the reason logged
and evented, and the previous snapshot stays; a resumed attempt (SIGKILLed worker) keeps its run's snapshot even
after the policy files changed; the policy and security/build hashes are on the run and in its delivery."""

from __future__ import annotations

import json
import os
import signal
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tier2.store.keys import Keys
from tier2.testing.cluster import LocalCluster, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
TERMINAL = ("delivered", "failed", "stopped")


def _edit(c: LocalCluster, text: str) -> None:
    """An operator edits the hot policy (a visibly newer file, however coarse the clock)."""
    path = c.config / "policy" / "zz-edit.yaml"
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    stamp = max(before, path.stat().st_mtime_ns) + 10**9
    os.utime(path, ns=(stamp, stamp))


def _submit(c: LocalCluster) -> str:
    reply = httpx.post(f"{c.base}/v1/runs", json={"brief": POTION}, timeout=30)
    assert reply.status_code == 202, reply.text
    return str(reply.json()["run_id"])


def _run(c: LocalCluster, run_id: str) -> dict[str, Any]:
    return dict(httpx.get(f"{c.base}/v1/runs/{run_id}", timeout=30).json())


def _finished(c: LocalCluster, run_id: str) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """The ended run, its delivery and its events (the stream closes after ``run_finished``)."""
    text = httpx.get(f"{c.base}/v1/runs/{run_id}/events", timeout=300).text
    events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    run = _run(c, run_id)
    assert run["status"] in TERMINAL, run
    delivery = httpx.get(f"{c.base}/v1/runs/{run_id}/delivery", timeout=30).json()
    return run, delivery, events


@pytest.fixture
def cluster(tmp_path: Path, redis_url: str):
    prefix = f"tc-{uuid.uuid4().hex[:8]}"
    fast = {"durability": {"lease_ttl_s": 2, "heartbeat_s": 0.5, "max_attempts": 3}}
    with LocalCluster(tmp_path, policy=fast, redis_url=redis_url, key_prefix=prefix) as c:
        c.keys = Keys(prefix=prefix)  # type: ignore[attr-defined]
        c.start_service(workers=0)
        yield c


def test_a_policy_edit_changes_the_next_run_and_an_edit_above_a_ceiling_is_refused(cluster: LocalCluster) -> None:
    c = cluster
    worker = c.start_worker()
    first, first_delivery, first_events = _finished(c, _submit(c))
    assert first["status"] == "delivered", first["stop_reason"]
    h1, security = first["policy_hash"], first["security_hash"]
    assert h1 and security and first["policy"] == h1
    assert first_delivery["policy_hash"] == h1 and first_delivery["security_hash"] == security
    assert first_delivery["usage"]["budget"]["cap_usd"] == 0.5             # the shipped default budget
    assert not any(e["type"] == "policy_refused" for e in first_events)

    _edit(c, "budget:\n  usd: 0.4\n")                                        # lowering: takes effect, no restart
    second, second_delivery, _ = _finished(c, _submit(c))
    assert second["status"] == "delivered", second["stop_reason"]
    h2 = second["policy_hash"]
    assert h2 != h1 and second_delivery["policy_hash"] == h2
    assert second_delivery["usage"]["budget"]["cap_usd"] == 0.4
    assert second["security_hash"] == security                               # the versioned tier did not move

    _edit(c, "budget:\n  usd: 0.3\nbreakers:\n  steps_per_run: 100000\n")    # raises a ceiling: refused whole
    third, third_delivery, third_events = _finished(c, _submit(c))
    assert third["status"] == "delivered", third["stop_reason"]
    assert third["policy_hash"] == h2 and third_delivery["policy_hash"] == h2  # the previous snapshot stayed
    assert third_delivery["usage"]["budget"]["cap_usd"] == 0.4
    refused = [e for e in third_events if e["type"] == "policy_refused"]
    assert len(refused) == 1 and refused[0]["policy"] == h2 and refused[0]["refused"] not in (h1, h2)
    assert "breakers.steps_per_run = 100000 is above its ceiling 200" in refused[0]["reason"]
    assert str(c.config) not in refused[0]["reason"]                         # no server path shown to tenants
    for log in ("serve.log", f"{worker}.log"):                               # logged where it was refused
        assert "policy edit refused" in c.log(log) and "steps_per_run = 100000" in c.log(log)
    assert c.alive_workers() == [worker] and c.serve_proc is not None and c.serve_proc.poll() is None


def test_a_resumed_attempt_keeps_its_runs_policy_snapshot(cluster: LocalCluster) -> None:
    c = cluster
    r = redis.Redis.from_url(c.redis_url, decode_responses=True)
    run_id = _submit(c)
    first = c.start_worker()
    wait_until(lambda: r.llen(c.keys.run_checkpoints(run_id)) >= 3, 120, "three checkpoints")  # type: ignore[attr-defined]
    taken = _run(c, run_id)["policy_hash"]
    c.signal_worker(first, signal.SIGKILL)
    # an operator lowers the step cap below what the run already spent: a valid edit, in effect for new runs
    _edit(c, "breakers:\n  steps_per_run: 1\n")
    c.start_worker()
    run, delivery, events = _finished(c, run_id)
    assert run["status"] == "delivered", run["stop_reason"]                  # the new cap would have stopped it
    assert [e["attempt"] for e in events if e["type"] == "attempt_started"] == [1, 2]
    assert run["policy_hash"] == taken and delivery["policy_hash"] == taken
    later, _, _ = _finished(c, _submit(c))                                   # the edit is in effect for a new run
    assert later["policy_hash"] != taken
    assert later["status"] == "stopped" and "steps_per_run=1" in later["stop_reason"], later["stop_reason"]
    r.close()
