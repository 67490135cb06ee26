"""Benchmark: what the explorer and the reviewer cost a run, and that they change nothing the gates decide.

Usage: .venv/bin/python bench/companions.py [--briefs N] [--model ROUTE] [--library] [--json]

A private Redis and a private copy of config/; ``offline-faulty`` (a syntax error and a missing data key) on N
briefs, each twice: companions on (the policy in config/policy/companions.yaml) and off (both disabled). The
debug case library is off unless ``--library`` (so the writer itself sees the data error and asks the explorer).
Per run: status, model calls, estimated tokens and cost per agent (from the trajectory), the companions' calls and
wall time (``companion_called`` events), and whether both runs delivered the same src/ and data/ files with the
same gate verdicts. Reported: medians of the companions' share of the run's cost and model calls, the median
on/off ratio of model calls and cost, and how many brief pairs delivered identical files.
Everything is real (Redis, esbuild, Chromium); only the model is the embedded offline policy.
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

from tier2.events import CompanionCalled  # noqa: E402
from tier2.runs import RunRequest, execute_run, open_runtime  # noqa: E402
from tier2.settings.loader import Settings, load_security  # noqa: E402
from tier2.store.embedded import redis_url  # noqa: E402
from tier2.store.keys import Keys  # noqa: E402
from tier2.store.trajectory import TrajectoryStore  # noqa: E402

BRIEFS = ["a potion shop tycoon where I brew potions from herbs and sell them to adventurers",
          "a blacksmith shop: forge swords from iron and sell them to knights",
          "a flower stall: grow tulips and roses and sell bouquets at the market",
          "a bakery: bake bread and cakes from flour and sell them to villagers",
          "a tea house: blend teas from leaves and serve them to travellers"]
OFF = "companions: {explorer: {enabled: false}, reviewer: {enabled: false}}\n"


async def _run(rt: Any, brief: str, out: Path, model: str) -> dict[str, Any]:
    done = await execute_run(rt, RunRequest(brief=brief, out_dir=out, model=model))
    calls = await TrajectoryStore(rt.store.r, rt.store.keys).read(done.run_id)
    agents = TrajectoryStore.summarize(calls)["agents"]
    events = [e for _, e in await rt.store.read_events(done.run_id, after=0, count=10_000)
              if isinstance(e, CompanionCalled)]
    total = sum(a["cost_usd"] for a in agents.values())
    comp = {k: v for k, v in agents.items() if k in ("explorer", "reviewer")}
    delivery = done.delivery
    return {"status": done.status, "model_calls": sum(a["model_calls"] for a in agents.values()),
            "cost_usd": round(total, 6), "companions": comp,
            "companion_calls": [(e.agent, e.state, e.model_calls, e.duration_ms) for e in events],
            "companion_ms": sum(e.duration_ms for e in events),
            "files": {f["path"]: f["sha256"] for f in delivery["source"]["files"]
                      if f["path"].startswith(("src/", "data/"))},
            "gates": {g["id"]: g["passed"] for g in delivery["verification"]["gates"]}}


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="tier2-bench-companions-"))
    config = tmp / "config"
    shutil.copytree(ROOT / "config", config)
    base = "" if args.library else "learning: {cases: false}\n"
    settings = Settings(workspaces=tmp / "ws", config_dir=config, redis_url=None)
    security = load_security(config)
    pairs: list[dict[str, Any]] = []
    with redis_url(None, tmp / "redis", security.redis.executables, False, security.redis.start_timeout_s) as url:
        async with open_runtime(settings, url, Keys(prefix="bench-companions")) as rt:
            for i, brief in enumerate(BRIEFS[:args.briefs]):
                (config / "policy" / "zz-bench.yaml").write_text(base)
                on = await _run(rt, brief, tmp / f"on-{i}", args.model)
                (config / "policy" / "zz-bench.yaml").write_text(base + OFF)
                off = await _run(rt, brief, tmp / f"off-{i}", args.model)
                pairs.append({"brief": brief[:40], "on": on, "off": off,
                              "same_files": on["files"] == off["files"], "same_gates": on["gates"] == off["gates"]})
                print(f"{brief[:40]}: on {on['status']} {on['model_calls']} calls ${on['cost_usd']}, "
                      f"companions {on['companion_calls']}; off {off['status']} {off['model_calls']} calls "
                      f"${off['cost_usd']}; same files {pairs[-1]['same_files']}", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)

    def med(values: list[float]) -> float:
        return round(statistics.median(values), 4) if values else 0.0

    ons = [p["on"] for p in pairs]
    return {
        "briefs": len(pairs), "model": args.model, "library": args.library,
        "delivered_on": sum(o["status"] == "delivered" for o in ons),
        "delivered_off": sum(p["off"]["status"] == "delivered" for p in pairs),
        "same_files": sum(p["same_files"] for p in pairs), "same_gates": sum(p["same_gates"] for p in pairs),
        "explorer_calls": sum(1 for o in ons for c in o["companion_calls"] if c[0] == "explorer"),
        "reviewer_calls": sum(1 for o in ons for c in o["companion_calls"] if c[0] == "reviewer"),
        "median_companion_cost_share": med([sum(a["cost_usd"] for a in o["companions"].values()) / o["cost_usd"]
                                            for o in ons if o["cost_usd"]]),
        "median_companion_call_share": med([sum(a["model_calls"] for a in o["companions"].values())
                                            / o["model_calls"] for o in ons if o["model_calls"]]),
        "median_companion_ms": med([o["companion_ms"] for o in ons]),
        "median_ratio_model_calls_on_off": med([p["on"]["model_calls"] / p["off"]["model_calls"] for p in pairs]),
        "median_ratio_cost_on_off": med([p["on"]["cost_usd"] / p["off"]["cost_usd"] for p in pairs
                                         if p["off"]["cost_usd"]]),
        "runs": [{k: v for k, v in p.items()} | {"on": {k: v for k, v in p["on"].items() if k != "files"},
                                                 "off": {k: v for k, v in p["off"].items() if k != "files"}}
                 for p in pairs],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--briefs", type=int, default=3)
    ap.add_argument("--model", default="offline-faulty")
    ap.add_argument("--library", action="store_true", help="leave the debug case library on")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    report = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for k, v in report.items():
        if k != "runs":
            print(f"{k}: {v}")


if __name__ == "__main__":
    main()
