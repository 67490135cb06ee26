"""Workers on real processes: a SIGKILLed worker's run resumes in another from its newest checkpoint; a stale
(SIGSTOPped) worker cannot write after losing its lease; a run that kills every attempt ends failed, visibly."""

from __future__ import annotations

import json
import signal
import uuid
from pathlib import Path

import httpx
import pytest
import redis

from tier2.store.keys import Keys
from tier2.testing.cluster import LocalCluster, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
# a short lease (a takeover in seconds) with room for a loaded machine: a live worker misses ten beats to lose it
FAST_LEASES = {"durability": {"lease_ttl_s": 5, "heartbeat_s": 0.5, "max_attempts": 3}}


@pytest.fixture
def cluster(tmp_path: Path, redis_url: str):
    prefix = f"tw-{uuid.uuid4().hex[:8]}"
    with LocalCluster(tmp_path, policy=FAST_LEASES, redis_url=redis_url, key_prefix=prefix) as c:
        c.keys = Keys(prefix=prefix)  # type: ignore[attr-defined]
        c.r = redis.Redis.from_url(redis_url, decode_responses=True)  # type: ignore[attr-defined]
        c.start_service(workers=0)
        yield c


def _submit(c: LocalCluster) -> str:
    reply = httpx.post(f"{c.base}/v1/runs", json={"brief": POTION}, timeout=30)
    assert reply.status_code == 202, reply.text
    return reply.json()["run_id"]


def _run(c: LocalCluster, run_id: str) -> dict:
    return httpx.get(f"{c.base}/v1/runs/{run_id}", timeout=30).json()


def _terminal(c: LocalCluster, run_id: str, timeout: float = 180) -> dict:
    return wait_until(lambda: (r := _run(c, run_id))["status"] in ("delivered", "failed", "stopped") and r,
                      timeout, f"run {run_id} to end")


def _events(c: LocalCluster, run_id: str) -> list[tuple[int, dict]]:
    text = httpx.get(f"{c.base}/v1/runs/{run_id}/events", timeout=60).text
    out, seq = [], None
    for line in text.splitlines():
        if line.startswith("id: "):
            seq = int(line[4:])
        elif line.startswith("data: ") and seq is not None:
            out.append((seq, json.loads(line[6:])))
    return out


def _checkpoints(c: LocalCluster, run_id: str) -> int:
    return int(c.r.llen(c.keys.run_checkpoints(run_id)))  # type: ignore[attr-defined]


def test_killed_worker_run_resumes_in_another_from_its_checkpoint(cluster: LocalCluster) -> None:
    run_id = _submit(cluster)
    first = cluster.start_worker()
    wait_until(lambda: _checkpoints(cluster, run_id) >= 3, 120, "three checkpoints")
    cluster.signal_worker(first, signal.SIGKILL)
    assert _run(cluster, run_id)["status"] == "running"
    cluster.start_worker()
    run = _terminal(cluster, run_id)
    assert run["status"] == "delivered", run["stop_reason"]
    # the worker closes its attempt record right after the run's terminal write
    attempts = wait_until(lambda: (a := _run(cluster, run_id)["attempts"]) and "outcome" in a[-1] and a, 30,
                          "the attempt record to close")
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert attempts[0]["worker"] == "w1" and attempts[0]["outcome"] == "lease_lost"  # died without a word:
    assert attempts[0]["detail"].startswith("reclaimed by attempt 2")          # the reclaimer closed its record
    assert attempts[0]["ended_at"] == attempts[1]["started_at"]
    assert attempts[1]["worker"] == "w2" and attempts[1]["outcome"] == "finished"
    events = _events(cluster, run_id)
    assert [seq for seq, _ in events] == list(range(1, len(events) + 1))      # gapless, no duplicate
    started = [e for _, e in events if e["type"] == "attempt_started"]
    assert [e["attempt"] for e in started] == [1, 2]
    assert started[1]["resumed_from"] >= 3                                    # not from scratch
    assert sum(e["type"] == "run_started" for _, e in events) == 1
    assert sum(e["type"] == "run_finished" for _, e in events) == 1
    applied = cluster.r.hgetall(cluster.keys.run_op_applied(run_id))  # type: ignore[attr-defined]
    assert applied and set(applied.values()) == {"1"}                        # no side effect twice
    delivery = httpx.get(f"{cluster.base}/v1/runs/{run_id}/delivery", timeout=30).json()
    assert delivery["status"] == "delivered"


def test_a_stale_worker_cannot_write_after_losing_its_lease(cluster: LocalCluster) -> None:
    run_id = _submit(cluster)
    stale = cluster.start_worker()
    wait_until(lambda: _checkpoints(cluster, run_id) >= 2, 120, "two checkpoints")
    cluster.signal_worker(stale, signal.SIGSTOP)                              # a long GC pause / frozen VM
    cluster.start_worker()
    wait_until(lambda: len(_run(cluster, run_id)["attempts"]) == 2, 60, "the takeover")
    cluster.signal_worker(stale, signal.SIGCONT)                              # wakes up believing it runs
    run = _terminal(cluster, run_id)
    assert run["status"] == "delivered", run["stop_reason"]
    wait_until(lambda: "no longer current" in cluster.log(f"{stale}.log") or "lost its lease" in
               cluster.log(f"{stale}.log"), 60, "the stale worker to notice")
    events = _events(cluster, run_id)
    assert [seq for seq, _ in events] == list(range(1, len(events) + 1))
    assert sum(e["type"] == "run_finished" for _, e in events) == 1
    assert events[-1][1]["type"] == "run_finished"                            # nothing written after the end
    wait_until(lambda: _run(cluster, run_id)["attempts"][-1].get("outcome") == "finished", 30,
               "the current attempt to close as finished")
    first = _run(cluster, run_id)["attempts"][0]
    assert first["outcome"] == "lease_lost" and first["ended_at"]             # the stale one cannot rewrite it


def test_a_run_whose_attempts_all_die_ends_failed_with_a_reason(tmp_path: Path, redis_url: str) -> None:
    prefix = f"tw-{uuid.uuid4().hex[:8]}"
    policy = {"durability": {"lease_ttl_s": 2, "heartbeat_s": 0.5, "max_attempts": 1}}
    with LocalCluster(tmp_path, policy=policy, redis_url=redis_url, key_prefix=prefix) as c:
        c.start_service(workers=0)
        r = redis.Redis.from_url(redis_url, decode_responses=True)
        run_id = _submit(c)
        w = c.start_worker()
        wait_until(lambda: r.llen(Keys(prefix=prefix).run_checkpoints(run_id)) >= 1, 120, "a checkpoint")
        c.signal_worker(w, signal.SIGKILL)
        c.start_worker()
        run = _terminal(c, run_id, timeout=60)
        assert run["status"] == "failed" and "gave up after 1 attempts" in run["stop_reason"]
        events = _events(c, run_id)
        assert events[-1][1]["type"] == "run_finished" and events[-1][1]["status"] == "failed"
        attempts = wait_until(lambda: (a := httpx.get(f"{c.base}/v1/runs/{run_id}", timeout=30).json()["attempts"])
                              and "outcome" in a[-1] and a, 30, "the give-up attempt's record to close")
        assert [(a["attempt"], a["outcome"]) for a in attempts] == [(1, "lease_lost"), (2, "finished")]
        assert all(a["ended_at"] for a in attempts) and "gave up" in attempts[1]["detail"]
        # the project is free again: a new run on it is accepted
        assert r.get(Keys(prefix=prefix).project_active(run["project_id"])) is None


def test_cancel_reaches_a_run_on_a_worker_process(cluster: LocalCluster) -> None:
    run_id = _submit(cluster)
    cluster.start_worker()
    wait_until(lambda: _checkpoints(cluster, run_id) >= 1, 120, "a checkpoint")
    assert httpx.post(f"{cluster.base}/v1/runs/{run_id}/cancel", timeout=30).status_code == 202
    run = _terminal(cluster, run_id, timeout=60)
    assert run["status"] == "stopped" and run["stop_reason"] == "cancelled by request"
    kinds = [e["type"] for _, e in _events(cluster, run_id)]
    assert kinds.index("cancel_requested") < kinds.index("run_finished") == len(kinds) - 1
    attempts = wait_until(lambda: (a := _run(cluster, run_id)["attempts"]) and "outcome" in a[-1] and a, 30,
                          "the attempt record to close")
    assert attempts[-1]["outcome"] == "cancelled" and attempts[-1]["ended_at"]
