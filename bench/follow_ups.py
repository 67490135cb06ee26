"""Benchmark: what a follow-up costs against re-running the goal from scratch (issue #24).

Usage: .venv/bin/python bench/follow_ups.py [--repeat 3] [--json]

Plays the follow-up suite (the pack's ``follow_ups.yaml``: three base games, fifteen follow-ups) with the
offline model on a private redis-server, real esbuild and Chromium. Per follow-up: the end, the goal version, the
designers re-run, the model calls against the base game's from scratch, the plan's local-replan ratio (nodes
reused / nodes) and the wall time. Model calls and plan figures are deterministic; the times are medians over
``--repeat`` runs of the whole suite (they depend on the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tier2.runs import open_runtime  # noqa: E402
from tier2.settings.loader import Settings, load_security  # noqa: E402
from tier2.store.embedded import redis_url  # noqa: E402
from tier2.store.keys import Keys  # noqa: E402
from tier2.testing.follow_ups import load_chains, run_chain  # noqa: E402


async def suite(tmp: Path, round_no: int) -> list[dict[str, Any]]:
    config = tmp / "config"
    if not config.exists():
        shutil.copytree(ROOT / "config", config)
    settings = Settings(workspaces=tmp / "ws", config_dir=config, redis_url=None)
    security = load_security(config)
    rows: list[dict[str, Any]] = []
    with redis_url(None, tmp / f"redis-{round_no}", security.redis.executables, False,
                   security.redis.start_timeout_s) as url:
        async with open_runtime(settings, url, Keys(prefix=f"bench-follow-{round_no}")) as rt:
            for chain in load_chains(rt.pack):
                base, results = await run_chain(rt, chain, tmp / f"r{round_no}-{chain.genre}")
                for r in [base, *results]:
                    rows.append({"genre": chain.genre, "follow_up": r.text, "what": r.what, "status": r.status,
                                 "goal_version": r.goal_version, "rerun": sorted(r.rerun), "calls": r.calls,
                                 "scratch_calls": r.scratch_calls,
                                 "local_replan_ratio": r.metrics.get("local_replan_ratio"),
                                 "invalidation_rate": r.metrics.get("invalidation_rate"), "seconds": r.seconds})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tier2-bench-follow-"))
    try:
        rounds = [asyncio.run(suite(tmp, i)) for i in range(max(1, args.repeat))]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = rounds[0]
    for i, row in enumerate(rows):  # calls must not vary between rounds; times are medians
        assert all(r[i]["calls"] == row["calls"] for r in rounds), f"model calls differ between rounds: {row}"
        row["seconds"] = round(statistics.median(r[i]["seconds"] for r in rounds), 1)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    print(f"follow-up suite, offline model, {len(rounds)} round(s); calls: model calls of the run "
          "(base: the game from scratch)")
    print(f"{'genre':10} {'follow-up':58} {'end':9} {'v':>2} {'calls':>5} {'scratch':>7} {'ratio':>5} "
          f"{'reuse':>5} {'s':>5}  re-run designers")
    for r in rows:
        ratio = r["calls"] / r["scratch_calls"] if r["scratch_calls"] else 0.0
        reuse = r["local_replan_ratio"] if r["local_replan_ratio"] is not None else 0.0
        print(f"{r['genre']:10} {r['follow_up'][:58]:58} {r['status']:9} {r['goal_version']:>2} {r['calls']:>5} "
              f"{r['scratch_calls']:>7} {ratio:>5.2f} {reuse:>5.2f} {r['seconds']:>5.1f}  {','.join(r['rerun'])}")
    follow = [r for r in rows if r["what"] != "base"]
    print(f"follow-ups: {len(follow)}; median calls / scratch: "
          f"{statistics.median(r['calls'] / r['scratch_calls'] for r in follow):.2f}; "
          f"median local-replan ratio: {statistics.median(r['local_replan_ratio'] or 0 for r in follow):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
