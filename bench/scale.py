"""Scale benchmark of the run platform: throughput offline and with a slow model, SSE replay, live event latency.

Usage: .venv/bin/python bench/scale.py [--runs 6] [--replay-events 10000] [--repeat 5] [--redis-url URL | --cluster N]
       [--workers 1,2,4] [--concurrency 1,4,8] [--grid] [--model-runs 1] [--model-repeat 5] [--latency 1-3]
       [--seed 0] [--model-calls 12] [--json]

Quick form: ``--runs 2 --replay-events 2000 --repeat 3 --model-repeat 3`` (14 min on the shared 2-core VM at load
~12, a third of it the 1x8 layout); a smoke of every part (3 min at that load): ``--runs 1 --replay-events 200
--repeat 1 --workers 1 --concurrency 2 --model-repeat 1 --latency 0.1-0.2 --model-calls 5``.

1. runs/minute offline: ``tier2 serve --workers 0`` + 1, then 2 ``tier2 worker`` processes; ``--runs``
   offline-model runs submitted at once, timed from the first POST to the last terminal state (``--runs 0``: off).
   CPU-bound: every step of the offline policy is local work.
2. runs/minute with a slow model (I/O-bound, as with a real model): the writer's route is the fake
   OpenAI-compatible server on loopback, answering each request after a seeded random ``--latency`` (seconds,
   uniform) and playing a writer that makes ``--model-calls`` calls per run and delivers (`tier2.testing.scale`);
   the design team stays offline. Layouts: the baseline (1 worker at concurrency 1), each of ``--workers`` at
   concurrency 1 and each of ``--concurrency`` on one worker (``--grid``: every combination). Per layout, its
   workers are started, then ``--model-repeat`` times ``parallelism x --model-runs`` runs are submitted at once,
   then its workers are stopped. Reported: the median runs/minute over the repeats (which also outvotes a first
   repeat on cold workers), the ideal (the baseline's median x parallelism, `tier2.testing.scale.ideal_runs_per_min`)
   and the ratio; runs not delivered are counted.
3. SSE replay: a run with ``--replay-events`` events; time for a client to receive all of them over HTTP from
   id 0 and from the middle (median of ``--repeat``; ``--replay-events 0``: off).
4. Live latency: events appended while a client is streaming; receive time minus append time on loopback
   (p50/p99 over 500 events).

``--redis-url``: the same bench against any store (a Redis Cluster, a remote server) instead of a private
redis-server (``--cluster N``: one started here, N primaries on loopback, `RedisShards`); its keys go under a
fresh prefix (``scale-<random>``) and are left there. The machine is shared and has 2 cores (each run's browser
checks use about one): read the figures as medians on this machine with its load (printed), not as limits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tier2.events import PhaseChanged, RunFinished  # noqa: E402
from tier2.store.keys import Keys  # noqa: E402
from tier2.store.lifecycle import is_terminal  # noqa: E402
from tier2.store.run_store import RunStore  # noqa: E402
from tier2.testing import FakeOpenAIServer  # noqa: E402
from tier2.testing.cluster import LocalCluster, wait_until  # noqa: E402
from tier2.testing.redis_topology import RedisShards  # noqa: E402
from tier2.testing.scale import Cell, cells, figures, parse_latency, route_policy, scale_writer  # noqa: E402

#: three shop briefs the offline reader builds (a brief it refuses ends at the design in a second and would
#: inflate every figure: the blacksmith forge that stood here is read as an RPG since the reader learned one)
BRIEFS = [
    "a potion shop tycoon where I brew potions from herbs and sell them to adventurers",
    "a cozy bakery tycoon: bake bread and cakes, fill customer orders, don't go broke",
    "a flower stall arranging bouquets for weddings in a small town",
]
ROUTE = "scripted"


def _terminal(c: LocalCluster, run_id: str) -> str | None:
    status = httpx.get(f"{c.base}/v1/runs/{run_id}", timeout=30).json()["status"]
    return status if is_terminal(status) else None


def _batch(c: LocalCluster, runs: int, model: str | None = None) -> tuple[float, dict[str, int]]:
    """``runs`` submitted at once; runs/minute from the first POST to the last terminal state, and the statuses."""
    t0 = time.monotonic()
    extra = {"model": model} if model else {}
    ids = []
    for i in range(runs):
        r = httpx.post(f"{c.base}/v1/runs", json={"brief": BRIEFS[i % len(BRIEFS)], **extra}, timeout=60)
        r.raise_for_status()
        ids.append(r.json()["run_id"])
    statuses: dict[str, int] = {}
    for rid in ids:
        status = wait_until(lambda rid=rid: _terminal(c, rid), 1800, rid, every=0.2)
        statuses[status] = statuses.get(status, 0) + 1
    return runs / ((time.monotonic() - t0) / 60), statuses


def throughput(c: LocalCluster, runs: int) -> float:
    return _batch(c, runs)[0]


def _start_workers(c: LocalCluster, cell: Cell) -> list[str]:
    names = [c.start_worker(concurrency=cell.concurrency) for _ in range(cell.workers)]
    for name in names:  # the banner is printed once the worker holds its runtime, just before it consumes
        wait_until(lambda name=name: f"tier2 worker {name} " in c.log(f"{name}.log"), 120, f"worker {name}")
    return names


def _stop_workers(c: LocalCluster) -> None:
    for name in c.alive_workers():
        c.signal_worker(name, signal.SIGTERM)


def with_model(c: LocalCluster, srv: FakeOpenAIServer, layouts: list[Cell], runs_per_slot: int,
               repeat: int) -> dict[str, Any]:
    samples: dict[Cell, tuple[int, list[float]]] = {}
    not_delivered: dict[str, dict[str, int]] = {}
    calls_before, delay_before, runs_done = len(srv.delays), sum(srv.delays), 0
    for cell in layouts:
        _start_workers(c, cell)
        runs = cell.parallelism * runs_per_slot
        rpm: list[float] = []
        for i in range(repeat):
            value, statuses = _batch(c, runs, ROUTE)
            rpm.append(value)
            runs_done += runs
            others = {s: n for s, n in statuses.items() if s != "delivered"}
            if others:
                not_delivered[cell.label] = {s: not_delivered.get(cell.label, {}).get(s, 0) + n
                                             for s, n in others.items()}
            print(f"model {cell.label} repeat {i + 1}/{repeat}: {value:.2f} runs/min ({runs} runs, {statuses}); "
                  f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
        samples[cell] = (runs, rpm)
        _stop_workers(c)
    calls = len(srv.delays) - calls_before
    return {"layouts": [f.as_dict() for f in figures(samples)], "not_delivered": not_delivered,
            "model_calls_per_run": calls / max(runs_done, 1),
            "model_wait_per_run_s": (sum(srv.delays) - delay_before) / max(runs_done, 1)}


async def _seed(url: str, keys: Keys, run_id: str, n: int, terminal: bool) -> None:
    store = RunStore.from_url(url, keys)
    await store.accept_run(run_id, {"tenant": "local", "status": "delivered" if terminal else "running"},
                           project_id=f"p-{run_id}", dispatch=False)
    for start in range(0, n, 50):  # 50 appends in flight at a time (the client's connection pool)
        await asyncio.gather(*(store.append_event(PhaseChanged(run_id=run_id, phase="implement", detail=f"e{i}"))
                               for i in range(start, min(n, start + 50))))
    if terminal:
        await store.append_event(RunFinished(run_id=run_id, status="delivered", stop_reason="bench"))
    await store.close()


def _stream(c: LocalCluster, run_id: str, after: int) -> int:
    frames = 0
    with httpx.stream("GET", f"{c.base}/v1/runs/{run_id}/events", params={"after": after}, timeout=120) as r:
        for line in r.iter_lines():
            frames += line.startswith("id: ")
    return frames


def replay(c: LocalCluster, keys: Keys, n: int, repeat: int) -> dict[str, float]:
    asyncio.run(_seed(c.redis_url, keys, "r-replaybench", n, terminal=True))
    out: dict[str, list[float]] = {"from_0_s": [], "from_middle_s": []}
    for _ in range(repeat):
        for key, after in (("from_0_s", 0), ("from_middle_s", n // 2)):
            t0 = time.monotonic()
            got = _stream(c, "r-replaybench", after)
            out[key].append(time.monotonic() - t0)
            assert got == n + 1 - after, (got, n, after)
    return {k: statistics.median(v) for k, v in out.items()}


def latency(c: LocalCluster, keys: Keys, n: int = 500) -> dict[str, float]:
    run_id = "r-latencybench"
    asyncio.run(_seed(c.redis_url, keys, run_id, 0, terminal=False))
    delays: list[float] = []
    ready = threading.Event()

    def client() -> None:
        with httpx.stream("GET", f"{c.base}/v1/runs/{run_id}/events", timeout=120) as r:
            ready.set()
            for line in r.iter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    delays.append(time.time() - event["at"])
                    if event["type"] == "run_finished":
                        return

    t = threading.Thread(target=client, daemon=True)
    t.start()
    ready.wait(30)
    time.sleep(0.5)

    async def produce() -> None:
        store = RunStore.from_url(c.redis_url, keys)
        for i in range(n):
            await store.append_event(PhaseChanged(run_id=run_id, phase="implement", detail=f"live {i}"))
            await asyncio.sleep(0.01)
        await store.append_event(RunFinished(run_id=run_id, status="delivered", stop_reason="bench"))
        await store.close()

    asyncio.run(produce())
    t.join(60)
    ms = sorted(d * 1000 for d in delays)
    return {"events": len(ms), "p50_ms": statistics.median(ms), "p99_ms": ms[int(len(ms) * 0.99) - 1]}


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _print(result: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"store: {result['store']}; load average at start {result['load_start']}, at end {result['load_end']}")
    if "runs_per_min_1_worker" in result:
        print(f"offline runs/min, 1 worker:  {result['runs_per_min_1_worker']:.2f}")
        print(f"offline runs/min, 2 workers: {result['runs_per_min_2_workers']:.2f}  "
              f"(x{result['speedup_2_vs_1']:.2f})")
    if "with_model" in result:
        m = result["with_model"]
        print(f"with a model answering after {args.latency} s, {m['model_calls_per_run']:.1f} calls and "
              f"{m['model_wait_per_run_s']:.1f} s of model wait per run (median of {args.model_repeat}):")
        print("  layout  parallelism  runs  runs/min (min-max)     ideal  relative")
        for row in m["layouts"]:
            lo, hi = min(row["runs_per_min"]), max(row["runs_per_min"])
            print(f"  {row['workers']}x{row['concurrency']:<5} {row['parallelism']:>11} {row['runs']:>5}  "
                  f"{row['median']:>8.2f} ({lo:.2f}-{hi:.2f})  {row['ideal']:>8.2f}  {row['relative_to_ideal']:>8.2f}")
        if m["not_delivered"]:
            print(f"  not delivered: {m['not_delivered']}")
    if "sse_replay" in result:
        r = result["sse_replay"]
        print(f"SSE replay of {r['events']} events: from id 0 {r['from_0_s']:.2f} s, "
              f"from the middle {r['from_middle_s']:.2f} s (median of {args.repeat})")
    lat = result["live_latency"]
    print(f"live latency over {lat['events']} events: p50 {lat['p50_ms']:.1f} ms, p99 {lat['p99_ms']:.1f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--runs", type=int, default=6, help="offline runs per worker count (0: skip)")
    ap.add_argument("--replay-events", type=int, default=10_000, help="events of the SSE replay (0: skip)")
    ap.add_argument("--repeat", type=int, default=5, help="repeats of the SSE replay")
    ap.add_argument("--redis-url", help="an existing store (default: a private redis-server)")
    ap.add_argument("--cluster", type=int, default=0, metavar="N",
                    help="start a Redis Cluster of N primaries on loopback as the store (instead of --redis-url)")
    ap.add_argument("--workers", type=_ints, default=[1, 2, 4], help="worker counts at concurrency 1")
    ap.add_argument("--concurrency", type=_ints, default=[1, 4, 8], help="concurrencies on one worker")
    ap.add_argument("--grid", action="store_true", help="every workers x concurrency combination")
    ap.add_argument("--model-runs", type=int, default=1, help="runs per slot in one repeat (0: skip the model part)")
    ap.add_argument("--model-repeat", type=int, default=5, help="repeats per layout (the median is reported)")
    ap.add_argument("--latency", default="1-3", help="the model's delay per request, seconds (LOW-HIGH or one)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model-calls", type=int, default=12, help="writer model calls per run (at least 5)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    layouts = cells(args.workers, args.concurrency, grid=args.grid)
    stack = contextlib.ExitStack()
    if args.cluster:
        shards_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="tier2-scale-shards-"))
        args.redis_url = stack.enter_context(RedisShards(Path(shards_dir), args.cluster)).url
        result_store = f"a Redis Cluster of {args.cluster} primaries on loopback"
    else:
        result_store = "the given --redis-url" if args.redis_url else "a private redis-server"
    keys = Keys(f"scale-{uuid.uuid4().hex[:8]}") if args.redis_url else Keys()
    result: dict[str, Any] = {"store": result_store, "load_start": [round(x, 2) for x in os.getloadavg()]}
    fake = FakeOpenAIServer(scale_writer(args.model_calls), latency=parse_latency(args.latency, args.seed))
    with stack, fake as srv, tempfile.TemporaryDirectory(prefix="tier2-scale-") as tmp, \
            LocalCluster(Path(tmp), policy=route_policy(srv.base_url, ROUTE), redis_url=args.redis_url,
                         key_prefix=keys.prefix) as c:
        c.start_service(workers=0)
        if args.replay_events:
            result["sse_replay"] = {"events": args.replay_events, **replay(c, keys, args.replay_events, args.repeat)}
            print(f"replay: {result['sse_replay']}", file=sys.stderr, flush=True)
        result["live_latency"] = latency(c, keys)
        print(f"latency: {result['live_latency']}", file=sys.stderr, flush=True)
        if args.runs:
            c.start_worker()
            result["runs_per_min_1_worker"] = throughput(c, args.runs)
            print(f"1 worker: {result['runs_per_min_1_worker']:.2f} runs/min", file=sys.stderr, flush=True)
            c.start_worker()
            result["runs_per_min_2_workers"] = throughput(c, args.runs)
            result["speedup_2_vs_1"] = result["runs_per_min_2_workers"] / result["runs_per_min_1_worker"]
            _stop_workers(c)
        if args.model_runs:
            result["with_model"] = with_model(c, srv, layouts, args.model_runs, args.model_repeat)
    result["load_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
