"""Chaos drill for the durable run platform, shared by `tests/e2e/test_chaos.py` (small) and `bench/chaos.py` (full).

A `LocalCluster` (own redis-server with AOF, ``tier2 serve --workers 0``, N ``tier2 worker`` processes) runs a
batch of briefs while a chaos thread SIGKILLs random workers (each replaced at once) and hard-restarts Redis;
every run has an SSE client that drops its connection at random and resumes with ``Last-Event-ID``.

Checked per run, against an undisturbed reference run of the same brief (offline model: deterministic):
terminal state; event ids seen by the client exactly 1..n (no gap, no duplicate) and equal to the server's log;
exactly one ``run_finished``; every side-effecting operation applied exactly once; the delivery fingerprint
(status, source snapshot, bundle hash, L1/L2 verdicts) identical to the reference.
"""

from __future__ import annotations

import json
import random
import signal
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis

from tier2.store.connect import connect_sync
from tier2.store.keys import Keys
from tier2.store.replies import stream_entries, text_map
from tier2.testing.cluster import LocalCluster, wait_until

__all__ = ["ChaosConfig", "ChaosReport", "run_chaos"]

TERMINAL = ("delivered", "failed", "stopped")


@dataclass
class ChaosConfig:
    briefs: list[str]
    runs: int
    workers: int = 2
    kill_every_s: float = 6.0
    redis_restarts: int = 1
    drop_after_frames: tuple[int, int] = (2, 12)
    lease_ttl_s: float = 2.0
    max_kills: int = 1000
    seed: int = 7
    timeout_s: float = 3600.0
    #: a store of the caller's (a Redis Cluster: `RedisShards.url`) instead of a private redis-server; it is not
    #: restarted (``redis_restarts`` must be 0)
    redis_url: str | None = None


@dataclass
class RunResult:
    run_id: str
    brief: str
    status: str = ""
    client_ids: list[int] = field(default_factory=list)
    server_ids: list[int] = field(default_factory=list)
    finished_events: int = 0
    reconnects: int = 0
    attempts: int = 0
    ops: dict[str, int] = field(default_factory=dict)
    identical: bool = False


@dataclass
class ChaosReport:
    runs: int = 0
    terminal: int = 0
    delivered: int = 0
    worker_kills: int = 0
    redis_restarts: int = 0
    runs_interrupted: int = 0
    reconnects: int = 0
    events_seen: int = 0
    lost_events: int = 0
    duplicate_events: int = 0
    duplicate_side_effects: int = 0
    interrupted_side_effects: int = 0  # began by an attempt that died before it completed, completed by a later one
    side_effects: int = 0
    identical_deliveries: int = 0
    wall_s: float = 0.0
    problems: list[str] = field(default_factory=list)

    def ok(self) -> bool:
        return (self.terminal == self.runs and self.lost_events == 0 and self.duplicate_events == 0
                and self.duplicate_side_effects == 0 and self.identical_deliveries == self.runs)


def _fingerprint(delivery: dict[str, Any]) -> tuple[Any, ...]:
    gates = sorted((g["id"], g["passed"]) for g in delivery["verification"]["gates"] if g.get("layer") != "L3")
    return (delivery["status"], delivery["source"]["sha256"], delivery["build"]["bundle_sha256"], tuple(gates))


def _differences(got: dict[str, Any], ref: dict[str, Any]) -> str:
    """What differs between two deliveries, for the report."""
    out = []
    if got["status"] != ref["status"]:
        out.append(f"status {got['status']} vs {ref['status']}")
    files = {f["path"]: f["sha256"] for f in got["source"]["files"]}
    ref_files = {f["path"]: f["sha256"] for f in ref["source"]["files"]}
    changed = sorted(p for p in files.keys() | ref_files.keys() if files.get(p) != ref_files.get(p))
    if changed:
        out.append("source files " + ", ".join(changed[:6]))
    if got["build"]["bundle_sha256"] != ref["build"]["bundle_sha256"]:
        out.append("bundle")
    gates = dict(_fingerprint(got)[3])
    ref_gates = dict(_fingerprint(ref)[3])
    flipped = sorted(g for g in gates.keys() | ref_gates.keys() if gates.get(g) != ref_gates.get(g))
    if flipped:
        out.append("gates " + ", ".join(f"{g}={gates.get(g)} (ref {ref_gates.get(g)})" for g in flipped))
    return "; ".join(out) or "nothing"


def _post_run(c: LocalCluster, brief: str) -> str:
    key = uuid.uuid4().hex  # retries with the same key: a timeout during a Redis restart never makes two runs
    for _ in range(100):
        try:
            r = httpx.post(f"{c.base}/v1/runs", json={"brief": brief}, headers={"Idempotency-Key": key}, timeout=60)
            if r.status_code == 202:
                return str(r.json()["run_id"])
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"could not submit a run: {c.log('serve.log')[-1000:]}")


def _get(c: LocalCluster, path: str) -> Any:
    for _ in range(100):
        try:
            r = httpx.get(f"{c.base}{path}", timeout=60)
            if r.status_code == 200:
                return r.json()
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"GET {path} kept failing")


def _follow(c: LocalCluster, res: RunResult, rng: random.Random, lo_hi: tuple[int, int]) -> None:
    """An SSE client that drops the connection every few frames and resumes from its last id."""
    last = 0
    while True:
        budget = rng.randint(*lo_hi)
        try:
            with httpx.stream("GET", f"{c.base}/v1/runs/{res.run_id}/events",
                              headers={"Last-Event-ID": str(last)}, timeout=httpx.Timeout(60, read=90)) as r:
                seq = None
                for line in r.iter_lines():
                    if line.startswith("id: "):
                        seq = int(line[4:])
                    elif line.startswith("data: ") and seq is not None:
                        res.client_ids.append(seq)
                        last = seq
                        if json.loads(line[6:])["type"] == "run_finished":
                            return
                        budget -= 1
                        if budget <= 0:
                            break  # drop the connection mid-stream
        except httpx.HTTPError:
            time.sleep(0.2)
        res.reconnects += 1


def _chaos_step(c: LocalCluster, cfg: ChaosConfig, rng: random.Random, rep: ChaosReport, step: int) -> None:
    if rep.redis_restarts < cfg.redis_restarts and step % 4 == 1:  # steps 1, 5, 9...: runs are in flight
        c.restart_redis()
        rep.redis_restarts += 1
        return
    alive = c.alive_workers()
    if alive and rep.worker_kills < cfg.max_kills:
        c.signal_worker(rng.choice(alive), signal.SIGKILL)
        rep.worker_kills += 1
        c.start_worker()


def run_chaos(root: Path, cfg: ChaosConfig, log: Any = print) -> ChaosReport:
    rng = random.Random(cfg.seed)
    rep = ChaosReport(runs=cfg.runs)
    policy = {"durability": {"lease_ttl_s": cfg.lease_ttl_s, "heartbeat_s": cfg.lease_ttl_s / 4,
                             "max_attempts": 50}}
    if cfg.redis_url is not None and cfg.redis_restarts:
        raise ValueError("the drill restarts only a redis-server of its own: redis_restarts=0 with redis_url")
    with LocalCluster(root, policy=policy, redis_url=cfg.redis_url) as c:
        c.start_service(workers=0)
        for _ in range(cfg.workers):
            c.start_worker()
        keys, r = Keys(), connect_sync(c.redis_url)
        reference: dict[str, dict[str, Any]] = {}
        for brief in dict.fromkeys(cfg.briefs):  # undisturbed reference runs
            run_id = _post_run(c, brief)

            def reference_done(rid: str = run_id) -> bool:
                return _get(c, f"/v1/runs/{rid}")["status"] in TERMINAL

            wait_until(reference_done, 300, "a reference")
            reference[brief] = _get(c, f"/v1/runs/{run_id}/delivery")
            log(f"reference {brief[:40]!r}: {reference[brief]['status']}")
        t0 = time.monotonic()
        results = [RunResult(_post_run(c, cfg.briefs[i % len(cfg.briefs)]), cfg.briefs[i % len(cfg.briefs)])
                   for i in range(cfg.runs)]
        clients = [threading.Thread(target=_follow, args=(c, res, random.Random(rng.random()),
                                                          cfg.drop_after_frames), daemon=True) for res in results]
        for t in clients:
            t.start()
        # chaos acts from this (main) thread: a redis-server started from a short-lived thread would be killed
        # with it (PR_SET_PDEATHSIG follows the creating thread)
        deadline, step = time.monotonic() + cfg.timeout_s, 0
        while any(t.is_alive() for t in clients) and time.monotonic() < deadline:
            time.sleep(rng.uniform(cfg.kill_every_s * 0.5, cfg.kill_every_s * 1.5))
            if any(t.is_alive() for t in clients):
                step += 1
                _chaos_step(c, cfg, rng, rep, step)
        for t in clients:
            t.join(max(1.0, deadline - time.monotonic()))
        rep.wall_s = time.monotonic() - t0
        for res in results:
            _check(c, r, keys, res, reference[res.brief], rep)
        r.close()
    return rep


def _check(c: LocalCluster, r: redis.Redis, keys: Keys, res: RunResult, ref: dict[str, Any],
           rep: ChaosReport) -> None:
    run = _get(c, f"/v1/runs/{res.run_id}")
    res.status, res.attempts = run["status"], len(run.get("attempts", []))
    server = [int(eid.split("-")[0]) for eid, _ in stream_entries(r.xrange(keys.run_events(res.run_id)))]
    res.server_ids = server
    finished = [f for _, f in stream_entries(r.xrange(keys.run_events(res.run_id))) if '"run_finished"' in f["e"]]
    res.finished_events = len(finished)
    res.ops = {k: int(v) for k, v in text_map(r.hgetall(keys.run_op_applied(res.run_id))).items()}
    rep.terminal += res.status in TERMINAL
    rep.delivered += res.status == "delivered"
    rep.runs_interrupted += res.attempts > 1
    rep.reconnects += res.reconnects
    rep.events_seen += len(res.client_ids)
    seen = set(res.client_ids)
    rep.duplicate_events += len(res.client_ids) - len(seen)
    rep.lost_events += len(set(server) - seen)
    if server != list(range(1, len(server) + 1)):
        rep.problems.append(f"{res.run_id}: server event ids not gapless")
    if res.finished_events != 1:
        rep.problems.append(f"{res.run_id}: {res.finished_events} run_finished events")
    rep.side_effects += len(res.ops)
    rep.duplicate_side_effects += sum(n - 1 for n in res.ops.values() if n > 1)
    began = {k: int(v) for k, v in text_map(r.hgetall(keys.run_op_began(res.run_id))).items()}
    rep.interrupted_side_effects += sum(1 for op, n in began.items() if n > 1 and res.ops.get(op) == 1)
    detail = "no delivery"
    if res.status in TERMINAL:
        try:
            got = _get(c, f"/v1/runs/{res.run_id}/delivery")
            res.identical = _fingerprint(got) == _fingerprint(ref)
            detail = _differences(got, ref)
        except RuntimeError:
            res.identical = False
    rep.identical_deliveries += res.identical
    if not res.identical:
        rep.problems.append(f"{res.run_id} (attempts {res.attempts}): delivery differs from the undisturbed run: "
                            f"{detail}")
