"""Benchmark: full-L1 validation time per game, warm (one browser reused) vs cold (a fresh browser each game).

Usage: .venv/bin/python bench/validate.py [--runs N] [--json]

"Full L1" = everything `tier2 validate` does on a tier2 project: esbuild build, data gates, static gates, the
Canvas-renderer probe (boot, frames, pixels, input, responsiveness, latch-split plays) and the default-renderer
(WebGL) smoke session, L3 excluded. Medians over N runs per mode, plus the median per-phase split.
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

from tier2.browser import BrowserPool, find_chromium  # noqa: E402
from tier2.packs import load_pack  # noqa: E402
from tier2.settings.loader import PolicyStore, load_security  # noqa: E402
from tier2.validators import ValidationRunner  # noqa: E402


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    pack = load_pack(ROOT / "capability_packs", "phaser")
    exe = find_chromium(None, load_security(ROOT / "config").browser.executables)
    policy = PolicyStore(ROOT / "config").snapshot()
    results: dict[str, list[float]] = {"warm": [], "cold": []}
    phases: list[dict[str, int]] = []
    with tempfile.TemporaryDirectory(prefix="tier2-bench-validate-") as tmp:
        game = Path(tmp) / "game"
        shutil.copytree(pack.template_dir, game)
        async with BrowserPool(exe) as pool:
            runner = ValidationRunner(pool, pack, policy)
            await runner.validate_project(game, Path(tmp) / "warmup")  # launch + first-load caches
            for i in range(args.runs):
                t0 = time.monotonic()
                report = await runner.validate_project(game, Path(tmp) / f"warm{i}")
                results["warm"].append(time.monotonic() - t0)
                phases.append(report.timings_ms)
                assert report.passed, report.feedback()
        for i in range(args.runs):
            t0 = time.monotonic()
            async with BrowserPool(exe) as pool:
                report = await ValidationRunner(pool, pack, policy).validate_project(game, Path(tmp) / f"cold{i}")
            results["cold"].append(time.monotonic() - t0)
            assert report.passed, report.feedback()
    keys = sorted({k for p in phases for k in p})
    out = {
        "runs": args.runs,
        "median_s": {k: round(statistics.median(v), 2) for k, v in results.items()},
        "min_s": {k: round(min(v), 2) for k, v in results.items()},
        "warm_phase_median_ms": {k: int(statistics.median(p.get(k, 0) for p in phases)) for k in keys},
        "targets_s": {"warm": 1.5, "cold": 4.0},
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"full-L1 validation of the template game, {args.runs} runs each")
        for k in ("warm", "cold"):
            print(f"  {k}: median {out['median_s'][k]:.2f} s (min {out['min_s'][k]:.2f} s; target "
                  f"{out['targets_s'][k]} s)")
        print("  warm split (median ms): " + ", ".join(f"{k} {v}" for k, v in out["warm_phase_median_ms"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
