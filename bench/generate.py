"""Benchmark: wall time of `tier2 generate` (offline model) over several briefs, split into phases.

Usage: .venv/bin/python bench/generate.py [--repeat N] [--json]

Runs the real CLI as a subprocess per brief (embedded Redis, esbuild, Chromium: one browser per run, reused
across that run's checks) and reads the split from each delivery.json: setup (project + agent assembly),
agent loop (model + file tools, excluding Build/RunGame), build (esbuild), validation (RunGame checks + the
final verification). Reports medians; the machine is shared and noisy, so read them as rough figures. Also sums
the deliveries' ``completion.content`` and ``completion.structural`` (``{verified, total}``) over the suite: intent
alignment (the brief's own content requirements verified) next to build health.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BRIEFS = [
    "a potion shop tycoon where I brew potions from herbs and sell them to adventurers",
    "a cozy bakery tycoon: bake bread and cakes, fill customer orders, don't go broke",
    "a blacksmith forge where I smelt ore into swords and shields for knights",
    "a space station repair shop fixing starship parts for passing pilots",
    "a flower stall arranging bouquets for weddings in a small town",
]


def run_one(brief: str, workdir: Path) -> dict[str, float]:
    out = workdir / f"g{abs(hash(brief)) % 10**8}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIER2_") and k != "REDIS_URL"}
    env["TIER2_WORKSPACES"] = str(workdir / "ws")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "tier2", "generate", brief, "--out", str(out), "--json", "--quiet"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"generate failed for {brief!r}: {proc.stderr[-2000:]}")
    record = json.loads(proc.stdout)
    t = record["timings_ms"]
    done = record.get("completion") or {}
    content, structural = done.get("content") or {}, done.get("structural") or {}
    return {"content_verified": content.get("verified", 0), "content_total": content.get("total", 0),
            "structural_verified": structural.get("verified", 0), "structural_total": structural.get("total", 0),
            "wall_s": wall, "in_run_s": t["total"] / 1000, "setup_s": t["setup"] / 1000,
            "agent_loop_s": (t["agent_loop"] + t.get("file_tools", 0)) / 1000, "build_s": t["build"] / 1000,
            "validation_s": t["validation"] / 1000}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1, help="runs per brief")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="tier2-bench-") as tmp:
        for _ in range(args.repeat):
            for brief in BRIEFS:
                rows.append(run_one(brief, Path(tmp)))
                print(f"  {rows[-1]['wall_s']:6.1f}s  {brief[:60]}", file=sys.stderr)
    counts = [k for k in rows[0] if k.endswith(("_verified", "_total"))]
    keys = [k for k in rows[0] if k not in counts]
    medians = {k: round(statistics.median(r[k] for r in rows), 2) for k in keys}
    intent = {k: int(sum(r[k] for r in rows)) for k in counts}
    result = {"runs": len(rows), "cpu_count": os.cpu_count(), "median": medians, "completion": intent,
              "max_wall_s": round(max(r["wall_s"] for r in rows), 2), "target_wall_s": 60}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"tier2 generate (offline), {len(rows)} runs, medians:")
        for k in keys:
            print(f"  {k:14s} {medians[k]:7.2f}")
        print(f"  max wall       {result['max_wall_s']:7.2f}   (target < 60 s per game)")
        print(f"  content        {intent['content_verified']} of {intent['content_total']} verified "
              f"(structural {intent['structural_verified']} of {intent['structural_total']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
