"""Validator accuracy on real games: positives must pass, every mutant must be caught by the gate meant for it.

Usage: .venv/bin/python bench/validator_accuracy.py [--json] [--only DEFECT[,DEFECT]]

Positives: the three MIT demos of npm @phaserjs/create-game@1.3.2 (bundled against phaser@3.90.0, generic
mode) and tier2 games (the pack template plus offline-generated tables for several briefs, contract mode).
Negatives: `tier2.validators.mutants` operators applied to the template (contract) and to the demos (generic).
Prints a per-class confusion table: caught / caught by the intended gate / missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from capability_packs.phaser.corpus import fetch_create_game_demos  # noqa: E402
from tier2.browser import BrowserPool, find_chromium  # noqa: E402
from tier2.packs import load_pack  # noqa: E402
from tier2.settings.loader import PolicyStore, load_security  # noqa: E402
from tier2.validators import ValidationRunner  # noqa: E402
from tier2.validators.mutants import CONTRACT_MUTANTS, GENERIC_MUTANTS, MutationError  # noqa: E402

GENERATED_BRIEFS = [
    "a potion shop tycoon where I brew potions from herbs and sell them to adventurers",
    "a blacksmith forge where I smelt ore into swords and shields for knights",
]
#: Demos with a genuine upstream defect (documented in the closing notes): expected to FAIL with this gate.
KNOWN_DEFECTS = {
    "memory-card-game": ("l1.no_errors", "ReferenceError: go is not defined (src/Play.js:240, on pointer move)"),
}


def _tier2_games(pack, work: Path) -> dict[str, Path]:
    games = {}
    template = work / "tier2-template"
    shutil.copytree(pack.template_dir, template)
    games["tier2:template"] = template
    for i, brief in enumerate(GENERATED_BRIEFS):
        dest = work / f"tier2-generated-{i}"
        shutil.copytree(pack.template_dir, dest)
        for name, table in pack.genre("shop").build_tables(brief).items():
            (dest / "data" / name).write_text(json.dumps(table, indent=2))
        games[f"tier2:{brief.split()[1]}"] = dest
    return games


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated defect classes to run")
    args = ap.parse_args()
    only = {d for d in args.only.split(",") if d}
    pack = load_pack(ROOT / "capability_packs", "phaser")
    security = load_security(ROOT / "config")
    policy = PolicyStore(ROOT / "config").snapshot()
    rows: list[dict] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tier2-accuracy-") as tmp:
        work = Path(tmp)
        demos = fetch_create_game_demos(ROOT / "workspaces" / ".cache")
        tier2 = _tier2_games(pack, work)
        async with BrowserPool(find_chromium(None, security.browser.executables)) as pool:
            runner = ValidationRunner(pool, pack, policy)

            async def check(label: str, kind: str, src: Path, defect: str | None, intended: frozenset[str],
                            mutate=None) -> None:
                game = work / "cases" / f"{label}-{defect or 'positive'}".replace(":", "_")
                shutil.copytree(src, game, ignore=shutil.ignore_patterns("node_modules", "dist", ".tier2"))
                if mutate is not None:
                    try:
                        mutate(game)
                    except MutationError as exc:
                        rows.append({"game": label, "defect": defect, "result": "n/a", "why": str(exc)})
                        return
                t0 = time.monotonic()
                report = await runner.validate_target(str(game), work / "reports" / game.name)
                failed = sorted(g.id for g in report.failures)
                row = {"game": label, "kind": kind, "defect": defect or "positive", "passed": report.passed,
                       "failed_gates": failed, "seconds": round(time.monotonic() - t0, 2)}
                if defect is None and label in KNOWN_DEFECTS:
                    gate, why = KNOWN_DEFECTS[label]
                    row.update(defect="known upstream bug", expected=gate, why=why,
                               result="caught" if gate in failed else "missed")
                elif defect is None:
                    row["result"] = "pass" if report.passed else "false alarm"
                else:
                    row["result"] = ("caught by intended" if intended & set(failed)
                                     else "caught by other" if failed else "missed")
                rows.append(row)
                print(f"  {row['seconds']:6.1f}s {label:22s} {row['defect']:26s} {row['result']:20s} {failed}",
                      file=sys.stderr)

            for name, path in {**tier2, **{f"demo:{k}": v for k, v in demos.items()}}.items():
                if not only:
                    await check(name.removeprefix("demo:"), "contract" if name.startswith("tier2") else "generic",
                                path, None, frozenset())
            for m in CONTRACT_MUTANTS:
                if not only or m.defect in only:
                    await check("tier2:template", "contract", tier2["tier2:template"], m.defect, m.intended_gates,
                                m.apply)
            for m in GENERIC_MUTANTS:
                if not only or m.defect in only:
                    await check("coin-clicker", "generic", demos["coin-clicker"], m.defect, m.intended_gates, m.apply)
    summary = _summarise(rows, time.monotonic() - started)
    print(json.dumps(summary, indent=2) if args.json else _table(summary))
    return 0 if summary["all_correct"] else 1


def _summarise(rows: list[dict], seconds: float) -> dict:
    by_class: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in rows:
        by_class[r["defect"]][r["result"]] += 1
    positives = [r for r in rows if r["defect"] == "positive"]
    mutants = [r for r in rows if r["defect"] not in ("positive", "known upstream bug") and r["result"] != "n/a"]
    return {
        "rows": rows, "classes": {k: dict(v) for k, v in sorted(by_class.items())}, "seconds": round(seconds, 1),
        "positives_passed": f"{sum(r['result'] == 'pass' for r in positives)}/{len(positives)}",
        "mutants_caught": f"{sum(r['result'] != 'missed' for r in mutants)}/{len(mutants)}",
        "mutants_caught_by_intended_gate":
            f"{sum(r['result'] == 'caught by intended' for r in mutants)}/{len(mutants)}",
        "all_correct": all(r["result"] in ("pass", "caught by intended", "caught", "n/a") for r in rows),
    }


def _table(s: dict) -> str:
    lines = [f"{'class':28s} {'n':>3s}  outcome", "-" * 70]
    for cls, counts in s["classes"].items():
        lines.append(f"{cls:28s} {sum(counts.values()):3d}  " + ", ".join(f"{k}: {v}" for k, v in counts.items()))
    lines += ["-" * 70, f"positives passed: {s['positives_passed']}   mutants caught: {s['mutants_caught']}   "
              f"by the intended gate: {s['mutants_caught_by_intended_gate']}   ({s['seconds']} s)"]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
