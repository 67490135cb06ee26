"""Chaos benchmark of the durable run platform (the small version runs in tests/e2e/test_chaos.py).

Usage: .venv/bin/python bench/chaos.py [--runs 50] [--workers 2] [--kill-every 6] [--redis-restarts 2] [--cluster N]
[--json]

Real processes on loopback: a private redis-server (AOF, appendfsync always), ``tier2 serve --workers 0`` and
``--workers`` ``tier2 worker`` processes. While the runs execute, a chaos thread SIGKILLs a random worker's
process group every ~``--kill-every`` seconds (a replacement starts at once) and hard-restarts Redis
``--redis-restarts`` times; every run has an SSE client that drops its connection every 2-12 frames and resumes
with Last-Event-ID. Reports lost/duplicate events as seen by the clients, duplicate side effects (operation
ids applied more than once), terminal runs, and deliveries identical to an undisturbed run of the same brief.
Exit 0 only when all of those hold. ``--cluster N``: the store is a Redis Cluster of N primaries on loopback
(`tier2.testing.redis_topology.RedisShards`) instead of one redis-server; it is not restarted (workers are still
killed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tier2.testing.chaos import ChaosConfig, run_chaos  # noqa: E402
from tier2.testing.redis_topology import RedisShards  # noqa: E402

BRIEFS = [
    "a potion shop tycoon where I brew potions from herbs and sell them to adventurers",
    "a cozy bakery tycoon: bake bread and cakes, fill customer orders, don't go broke",
    "a blacksmith forge where I smelt ore into swords and shields for knights",
    "a flower stall arranging bouquets for weddings in a small town",
    "a space station repair shop fixing starship parts for passing pilots",
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--kill-every", type=float, default=6.0, help="mean seconds between worker SIGKILLs")
    ap.add_argument("--redis-restarts", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cluster", type=int, default=0, metavar="N", help="a Redis Cluster of N primaries as the store")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tier2-chaos-") as tmp, contextlib.ExitStack() as stack:
        url = stack.enter_context(RedisShards(Path(tmp) / "shards", args.cluster)).url if args.cluster else None
        cfg = ChaosConfig(briefs=BRIEFS, runs=args.runs, workers=args.workers, kill_every_s=args.kill_every,
                          redis_restarts=0 if url else args.redis_restarts, seed=args.seed, redis_url=url)
        rep = run_chaos(Path(tmp) / "drill", cfg, log=lambda msg: print(msg, file=sys.stderr))
    if args.json:
        print(json.dumps(asdict(rep), indent=2))
    else:
        rows = [("runs", rep.runs), ("terminal", f"{rep.terminal} ({100 * rep.terminal / rep.runs:.0f}%)"),
                ("delivered", rep.delivered), ("worker SIGKILLs", rep.worker_kills),
                ("runs interrupted (attempts > 1)", rep.runs_interrupted), ("Redis hard restarts", rep.redis_restarts),
                ("SSE reconnects", rep.reconnects), ("events seen by clients", rep.events_seen),
                ("lost events", rep.lost_events), ("duplicate events", rep.duplicate_events),
                ("side effects (operation ids)", rep.side_effects),
                ("duplicate side effects", rep.duplicate_side_effects),
                ("  interrupted mid-execution, completed once later", rep.interrupted_side_effects),
                ("deliveries identical to undisturbed", f"{rep.identical_deliveries}/{rep.runs}"),
                ("wall time", f"{rep.wall_s:.0f} s")]
        for name, value in rows:
            print(f"{name:38s} {value}")
        for problem in rep.problems[:20]:
            print("problem:", problem)
    return 0 if rep.ok() else 1


if __name__ == "__main__":
    sys.exit(main())
