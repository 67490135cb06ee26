"""Benchmark: the whole offline two-phase run (design studio, then the writer) for briefs of different genres —
requirement coverage, the genre built, whether it was delivered, and the run time.

Usage: .venv/bin/python bench/genres.py [--runs 1] [--json] [--out DIR] [BRIEF ...]

Each brief runs through the real CLI (``tier2 generate --json``, offline model, embedded Redis) as a subprocess;
the delivery's completion map gives "N of M requirements verified" and the genre; the wall time is the median
over ``--runs``. Briefs default to one per genre of the pack plus two the pack cannot build as asked (a genre
with no template, and "multiplayer"/"3D"), which must end not delivered with the reason stated.
The machine is shared and noisy: read the times as rough.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BRIEFS = [
    "a cozy bakery tycoon: bake bread and cakes, fill customer orders, don't go broke",
    "a side-scrolling space shooter: dodge asteroids, shoot alien ships, collect power-ups, three lives",
    "a platformer where a fox jumps over spikes and gaps to reach the flag, collecting coins",
    "a match-3 puzzle with gems on a grid: swap tiles to score before the moves run out",
    "an idle clicker about baking cookies: click to earn, buy upgrades, reach a million",
    "a top-down maze where a mouse collects cheese and escapes through the exit before time runs out",
    "a kart racing game with three laps on a desert track",
    "a multiplayer 3D battle royale",
]


def run_one(brief: str, out: Path) -> dict:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "tier2", "generate", brief, "--out", str(out), "--json", "--quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - started
    try:
        delivery = json.loads(proc.stdout)
    except ValueError:
        return {"brief": brief, "status": f"no delivery (exit {proc.returncode})", "wall_s": wall,
                "stderr": proc.stderr[-600:]}
    done = delivery.get("completion") or {}
    return {"brief": brief, "status": delivery.get("status"), "stop_reason": delivery.get("stop_reason", ""),
            "genre": done.get("genre"), "verified": done.get("verified"), "total": done.get("total"),
            "unsupported": [u.get("what") for u in done.get("unsupported", [])], "wall_s": wall,
            "screenshot": delivery.get("screenshot")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("briefs", nargs="*", default=BRIEFS)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out", help="keep the projects here (default: a temporary directory)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    base = Path(args.out).resolve() if args.out else Path(tempfile.mkdtemp(prefix="tier2-bench-genres-"))
    rows = []
    for i, brief in enumerate(args.briefs):
        results = [run_one(brief, base / f"g{i}-r{r}") for r in range(args.runs)]
        row = results[-1] | {"wall_s": statistics.median(x["wall_s"] for x in results), "runs": args.runs}
        rows.append(row)
        if not args.json:
            cov = f"{row.get('verified')}/{row.get('total')}" if row.get("total") is not None else "-"
            print(f"{row['status']:<10} genre={row.get('genre')!s:<11} requirements {cov:<6} "
                  f"{row['wall_s']:6.1f} s  {brief[:70]}", flush=True)
            if row["status"] != "delivered":
                print(f"{'':<10} why: {str(row.get('stop_reason'))[:300]}")
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"projects in {base}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
