"""Benchmark: what the legibility collector costs at one screenshot point.

Usage: .venv/bin/python bench/legibility.py [--runs N] [--json]

The shop template with the longest offline names (the space brief of tests/integration/test_legibility.py: 9
items, 4 recipes, ~60 texts on the Play screen) is built and started; then, on the same page and frame, the
median wall time of one collection (`collect_legibility`: the display-list walk in the page, the transfer, the
JSON parse) against the median of a bare `evaluate` round trip, and the judgement of that snapshot in Python.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tier2.browser import BrowserPool, GameSession, find_chromium  # noqa: E402
from tier2.browser.session import SERVED_ORIGIN  # noqa: E402
from tier2.packs import load_pack  # noqa: E402
from tier2.settings.loader import LegibilityPolicy, load_security  # noqa: E402
from tier2.toolchain import run_build  # noqa: E402
from tier2.validators.legibility import collect_legibility  # noqa: E402
from tier2.validators.legibility.judge import judge_screen  # noqa: E402
from tier2.validators.trace import PlayTrace  # noqa: E402

BRIEF = "a galactic salvage yard: assemble navigation cores, thrusters and shield generators for pilots"


def _ms(since: float) -> float:
    return (time.monotonic() - since) * 1000


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    pack = load_pack(ROOT / "capability_packs", "phaser")
    exe = find_chromium(None, load_security(ROOT / "config").browser.executables)
    with tempfile.TemporaryDirectory(prefix="tier2-bench-legibility-") as tmp:
        project = Path(tmp) / "game"
        shutil.copytree(pack.template_dir, project)
        for name, table in pack.genre("shop").build_tables(BRIEF).items():
            (project / "data" / name).write_text(json.dumps(table, ensure_ascii=False))
        if not (await run_build(pack, project, timeout_s=120)).ok:
            print("build failed", file=sys.stderr)
            return 1
        collect, bare, judge = [], [], []
        async with BrowserPool(exe) as pool, GameSession(pool, SERVED_ORIGIN + "dist/index.html",
                                                         serve_root=project, force_canvas=True) as s:
            await s.load(15)
            await s.advance(1000)
            await s.p.keyboard.press("Space")
            await s.advance(300)
            trace = PlayTrace()
            for _ in range(args.runs):
                t0 = time.monotonic()
                await collect_legibility(s, trace, "02-play")
                collect.append(_ms(t0))
                t0 = time.monotonic()
                await s.evaluate("() => 0")
                bare.append(_ms(t0))
                t0 = time.monotonic()
                judge_screen(trace.legibility[-1], LegibilityPolicy())
                judge.append(_ms(t0))
    snap = trace.legibility[-1]
    out = {"runs": args.runs, "texts": len(snap["texts"]), "shapes": len(snap["shapes"]),
           "collect_ms_median": round(statistics.median(collect), 2),
           "bare_round_trip_ms_median": round(statistics.median(bare), 2),
           "collect_over_round_trip": round(statistics.median(collect) / max(0.01, statistics.median(bare)), 1),
           "judge_ms_median": round(statistics.median(judge), 2)}
    print(json.dumps(out, indent=2) if args.json else
          f"{out['texts']} texts, {out['shapes']} shapes; collect {out['collect_ms_median']} ms median "
          f"(a bare round trip {out['bare_round_trip_ms_median']} ms, x{out['collect_over_round_trip']}); "
          f"judge {out['judge_ms_median']} ms median over {args.runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
