"""A worker SIGKILLed in the middle of the design phase: another worker resumes the design — the leader's split
and the designers who had answered are taken from the run's team mailbox, not asked again — and the run ends
delivered with one spec. Real processes, real Redis, real Chromium; the offline model with simulated latency on
the slow designers so the kill lands between their answers."""

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
BRIEF = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
SLOW = ("level", "ui", "audio", "vfx", "assets")
POLICY = {
    "durability": {"lease_ttl_s": 2, "heartbeat_s": 0.5, "max_attempts": 3},
    "models": {"offline-slow": {"kind": "offline", "model": "tier2-offline-policy-v1",
                                "parameters": {"delay_s": 4.0}}},
    "agents": {f"designer.{area}": "offline-slow" for area in SLOW},
}


def _events(r: redis.Redis, keys: Keys, run_id: str) -> list[dict]:
    return [json.loads(fields["e"]) for _, fields in r.xrange(keys.run_events(run_id))]  # type: ignore[union-attr]


def _plan(events: list[dict]) -> list[tuple[str, str, dict]]:
    return [(e["node"], e["status"], e.get("evidence") or {}) for e in events if e["type"] == "plan_changed"]


def test_a_worker_killed_mid_design_resumes_the_design_not_the_run(tmp_path: Path, redis_url: str) -> None:
    prefix = f"td-{uuid.uuid4().hex[:8]}"
    keys = Keys(prefix=prefix)
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    with LocalCluster(tmp_path, policy=POLICY, redis_url=redis_url, key_prefix=prefix) as c:
        c.start_service(workers=0)
        reply = httpx.post(f"{c.base}/v1/runs", json={"brief": BRIEF}, timeout=30)
        assert reply.status_code == 202, reply.text
        run_id = reply.json()["run_id"]
        first = c.start_worker()
        # the fast designer answered; the slow ones are still waiting on their model
        wait_until(lambda: ("design.gameplay", "verified") in {(n, s) for n, s, _ in _plan(_events(r, keys, run_id))},
                   120, "the gameplay designer's answer")
        before = _plan(_events(r, keys, run_id))
        assert ("design.spec", "verified") not in {(n, s) for n, s, _ in before}, "the kill came too late"
        c.signal_worker(first, signal.SIGKILL)
        c.start_worker()
        run = wait_until(lambda: (x := httpx.get(f"{c.base}/v1/runs/{run_id}", timeout=30).json())["status"]
                         in ("delivered", "failed", "stopped") and x, 240, "the run to end")
        assert run["status"] == "delivered", run.get("stop_reason")
    events = _events(r, keys, run_id)
    plan = _plan(events)
    after_kill = plan[len(before):]
    # the second attempt took the split and the gameplay answer from the mailbox; nobody asked the leader to
    # split again or the gameplay designer to answer again
    assert [a["attempt"] for a in events if a["type"] == "attempt_started"] == [1, 2]
    assert ("design.brief", "running") not in {(n, s) for n, s, _ in after_kill}
    assert ("design.gameplay", "running") not in {(n, s) for n, s, _ in after_kill}
    assert any(n == "design.gameplay" and s == "verified" and "mailbox" in str(ev.get("source"))
               for n, s, ev in after_kill), after_kill
    for area in SLOW:  # the ones cut off by the kill were asked (again) and answered
        assert (f"design.{area}", "verified") in {(n, s) for n, s, _ in after_kill}
    assert sum(1 for n, s, _ in plan if n == "design.spec" and s == "verified") == 1
    assert sum(e["type"] == "run_started" for e in events) == 1
    assert sum(e["type"] == "run_finished" for e in events) == 1
    seqs = [int(eid.split("-")[0]) for eid, _ in r.xrange(keys.run_events(run_id))]  # type: ignore[union-attr]
    assert seqs == list(range(1, len(seqs) + 1))  # gapless, no duplicate
    done = run["completion"]
    assert done["genre"] == "shop" and done["total"] >= 5 and done["verified"] == done["total"], done


def test_a_worker_killed_between_two_goal_versions_resumes_on_the_new_one(tmp_path: Path, redis_url: str) -> None:
    """A follow-up in a thread (goal v2) whose worker is SIGKILLed while the designers it touches are answering:
    the next attempt continues goal version 2 — not a v3, not back on v1 — and the thread's stored versions are
    exactly 1 and 2, the newest ending delivered."""
    prefix = f"tf-{uuid.uuid4().hex[:8]}"
    keys = Keys(prefix=prefix)
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    with LocalCluster(tmp_path, policy=POLICY, redis_url=redis_url, key_prefix=prefix) as c:
        c.start_service(workers=0)
        worker = c.start_worker()
        base = httpx.post(f"{c.base}/v1/runs", json={"brief": BRIEF}, timeout=30).json()
        wait_until(lambda: httpx.get(f"{c.base}/v1/runs/{base['run_id']}", timeout=30).json()["status"]
                   == "delivered", 240, "the base game")
        reply = httpx.post(f"{c.base}/v1/runs", json={"brief": "same game, but with a snowy winter theme",
                                                      "thread_id": base["thread_id"]}, timeout=30)
        assert reply.status_code == 202, reply.text
        run_id = reply.json()["run_id"]
        wait_until(lambda: ("design.assets", "running") in {(n, s) for n, s, _ in _plan(_events(r, keys, run_id))},
                   120, "the follow-up's designers at work")
        c.signal_worker(worker, signal.SIGKILL)
        c.start_worker()
        run = wait_until(lambda: (x := httpx.get(f"{c.base}/v1/runs/{run_id}", timeout=30).json())["status"]
                         in ("delivered", "failed", "stopped") and x, 240, "the follow-up to end")
        assert run["status"] == "delivered", run.get("stop_reason")
        plans = httpx.get(f"{c.base}/v1/threads/{base['thread_id']}/plans", timeout=30)
        assert plans.status_code == 200, plans.text
        versions = plans.json()["versions"]
        newest = httpx.get(f"{c.base}/v1/threads/{base['thread_id']}/plan", timeout=30).json()
    assert [v["goal_version"] for v in versions] == [1, 2], versions
    assert newest["goal_version"] == 2 and newest["run_id"] == run_id and newest["end"]["kind"] == "delivered"
    events = _events(r, keys, run_id)
    assert [a["attempt"] for a in events if a["type"] == "attempt_started"] == [1, 2]
    assert {e["goal_version"] for e in events if e["type"] == "goal_versioned"} == {2}
    assert {e["goal_version"] for e in events if e["type"] == "plan_changed"} <= {1, 2}
