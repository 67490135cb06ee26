"""Scale benchmark of the run platform: throughput with 1 and 2 workers, SSE replay, live event latency.

Usage: .venv/bin/python bench/scale.py [--runs 6] [--replay-events 10000] [--repeat 5] [--json]

1. runs/minute: ``tier2 serve --workers 0`` + 1, then 2 ``tier2 worker`` processes on one Redis; ``--runs``
   offline-model runs submitted at once, timed from the first POST to the last terminal state.
2. SSE replay: a run with ``--replay-events`` events; time for a client to receive all of them over HTTP from
   id 0 and from the middle (median of ``--repeat``).
3. Live latency: events appended while a client is streaming; receive time minus append time on loopback
   (p50/p99 over 500 events).
The machine is shared and has 2 cores (each run's browser checks use about one): read the figures as medians
on this machine, not as limits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tier2.events import PhaseChanged, RunFinished  # noqa: E402
from tier2.store.run_store import RunStore  # noqa: E402
from tier2.testing.cluster import LocalCluster, wait_until  # noqa: E402

BRIEFS = [
    "a potion shop tycoon where I brew potions from herbs and sell them to adventurers",
    "a cozy bakery tycoon: bake bread and cakes, fill customer orders, don't go broke",
    "a blacksmith forge where I smelt ore into swords and shields for knights",
]


def throughput(c: LocalCluster, runs: int) -> float:
    t0 = time.monotonic()
    ids = [httpx.post(f"{c.base}/v1/runs", json={"brief": BRIEFS[i % len(BRIEFS)]}, timeout=60).json()["run_id"]
           for i in range(runs)]
    for rid in ids:
        wait_until(lambda rid=rid: httpx.get(f"{c.base}/v1/runs/{rid}", timeout=30).json()["status"]
                   in ("delivered", "failed", "stopped"), 1800, rid)
    return runs / ((time.monotonic() - t0) / 60)


async def _seed(url: str, run_id: str, n: int, terminal: bool) -> None:
    store = RunStore.from_url(url)
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


def replay(c: LocalCluster, n: int, repeat: int) -> dict[str, float]:
    asyncio.run(_seed(c.redis_url, "r-replaybench", n, terminal=True))
    out: dict[str, list[float]] = {"from_0_s": [], "from_middle_s": []}
    for _ in range(repeat):
        for key, after in (("from_0_s", 0), ("from_middle_s", n // 2)):
            t0 = time.monotonic()
            got = _stream(c, "r-replaybench", after)
            out[key].append(time.monotonic() - t0)
            assert got == n + 1 - after, (got, n, after)
    return {k: statistics.median(v) for k, v in out.items()}


def latency(c: LocalCluster, n: int = 500) -> dict[str, float]:
    run_id = "r-latencybench"
    asyncio.run(_seed(c.redis_url, run_id, 0, terminal=False))
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
        store = RunStore.from_url(c.redis_url)
        for i in range(n):
            await store.append_event(PhaseChanged(run_id=run_id, phase="implement", detail=f"live {i}"))
            await asyncio.sleep(0.01)
        await store.append_event(RunFinished(run_id=run_id, status="delivered", stop_reason="bench"))
        await store.close()

    asyncio.run(produce())
    t.join(60)
    ms = sorted(d * 1000 for d in delays)
    return {"events": len(ms), "p50_ms": statistics.median(ms), "p99_ms": ms[int(len(ms) * 0.99) - 1]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--replay-events", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="tier2-scale-") as tmp, LocalCluster(Path(tmp)) as c:
        c.start_service(workers=0)
        result["sse_replay"] = {"events": args.replay_events, **replay(c, args.replay_events, args.repeat)}
        print(f"replay: {result['sse_replay']}", file=sys.stderr, flush=True)
        result["live_latency"] = latency(c)
        print(f"latency: {result['live_latency']}", file=sys.stderr, flush=True)
        c.start_worker()
        result["runs_per_min_1_worker"] = throughput(c, args.runs)
        print(f"1 worker: {result['runs_per_min_1_worker']:.2f} runs/min", file=sys.stderr, flush=True)
        c.start_worker()
        result["runs_per_min_2_workers"] = throughput(c, args.runs)
        result["speedup_2_vs_1"] = result["runs_per_min_2_workers"] / result["runs_per_min_1_worker"]  # type: ignore[operator]
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"runs/min, 1 worker:  {result['runs_per_min_1_worker']:.2f}")
        print(f"runs/min, 2 workers: {result['runs_per_min_2_workers']:.2f}  (x{result['speedup_2_vs_1']:.2f})")
        r = result["sse_replay"]
        print(f"SSE replay of {r['events']} events: from id 0 {r['from_0_s']:.2f} s, "  # type: ignore[index]
              f"from the middle {r['from_middle_s']:.2f} s (median of {args.repeat})")  # type: ignore[index]
        lat = result["live_latency"]
        print(f"live latency over {lat['events']} events: p50 {lat['p50_ms']:.1f} ms, "  # type: ignore[index]
              f"p99 {lat['p99_ms']:.1f} ms")  # type: ignore[index]
    return 0


if __name__ == "__main__":
    sys.exit(main())
