"""Real-game accuracy of generic-mode validation: working games must pass, every seeded mutant must be caught by
the gate meant for it.

Usage: .venv/bin/python bench/real_games.py [--json] [--games NAME[,NAME]] [--only DEFECT[,DEFECT]]
                                            [--no-mutants] [--no-pac-man]

Corpus (`tier2.testing.corpus.real_game_corpus`, fetched from npm into workspaces/.cache; name@version + licence
printed with each row): the three MIT demos of @phaserjs/create-game@1.3.2 validated from their sources, the same
demos built as their authors build them (`npm ci` from their lockfile — Phaser 3.80.1, Vite 5 — then `vite build`;
the dist/ folder is validated as it is), and pac-man-phaser@1.0.10 (MIT) rendered by a React host page and built
with Vite. memory-card-game has a genuine upstream bug ("go is not defined" on pointer move): it is expected to
fail l1.no_errors, and it gets no mutants. Mutants: `GENERIC_MUTANTS` on source projects, `SITE_MUTANTS` (page
and bundle edits) on built sites.
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

from tier2.browser import BrowserPool, find_chromium  # noqa: E402
from tier2.packs import load_pack  # noqa: E402
from tier2.settings.loader import PolicyStore, load_security  # noqa: E402
from tier2.testing.corpus import RealGame, real_game_corpus  # noqa: E402
from tier2.validators import ValidationRunner  # noqa: E402
from tier2.validators.mutants import GENERIC_MUTANTS, SITE_MUTANTS, Mutant, MutationError  # noqa: E402

#: games with a genuine upstream defect: expected to FAIL with this gate (and not mutated)
KNOWN_DEFECTS = {"memory-card-game": "l1.no_errors", "memory-card-game.dist": "l1.no_errors"}


def _mutants(game: RealGame) -> list[Mutant]:
    return [] if game.name in KNOWN_DEFECTS else (SITE_MUTANTS if game.build != "source" else GENERIC_MUTANTS)


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--games", default="", help="comma-separated game names (default: all)")
    ap.add_argument("--only", default="", help="comma-separated defect classes (default: all)")
    ap.add_argument("--no-mutants", action="store_true")
    ap.add_argument("--no-pac-man", action="store_true")
    args = ap.parse_args()
    names = {n for n in args.games.split(",") if n}
    only = {d for d in args.only.split(",") if d}
    pack = load_pack(ROOT / "capability_packs", "phaser")
    security = load_security(ROOT / "config")
    policy = PolicyStore(ROOT / "config").snapshot()
    corpus = [g for g in real_game_corpus(ROOT / "workspaces" / ".cache", with_pac_man=not args.no_pac_man)
              if not names or g.name in names]
    rows: list[dict] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tier2-real-games-") as tmp:
        work = Path(tmp)
        async with BrowserPool(find_chromium(None, security.browser.executables)) as pool:
            runner = ValidationRunner(pool, pack, policy)
            for game in corpus:
                cases: list[Mutant | None] = [] if only else [None]
                if not args.no_mutants:
                    cases += [m for m in _mutants(game) if not only or m.defect in only]
                for mutant in cases:
                    rows.append(await _check(runner, work, game, mutant))
    summary = _summarise(rows, time.monotonic() - started, corpus)
    print(json.dumps(summary, indent=2) if args.json else _table(summary))
    return 0 if summary["all_correct"] else 1


async def _check(runner: ValidationRunner, work: Path, game: RealGame, mutant: Mutant | None) -> dict:
    defect = mutant.defect if mutant else "positive"
    case = work / "cases" / f"{game.name}-{defect}"
    shutil.copytree(game.path, case, ignore=shutil.ignore_patterns("node_modules", ".tier2"))
    row: dict = {"game": game.name, "package": game.package, "licence": game.licence, "build": game.build,
                 "defect": defect}
    if mutant is not None:
        try:
            mutant.apply(case)
        except MutationError as exc:
            return {**row, "result": "n/a", "why": str(exc)}
    t0 = time.monotonic()
    report = await runner.validate_target(str(case), work / "reports" / case.name)
    failed = sorted(g.id for g in report.failures)
    row.update(passed=report.passed, failed_gates=failed, seconds=round(time.monotonic() - t0, 1),
               site=(report.site or {}).get("kind"), mode=report.mode)
    if mutant is None and game.name in KNOWN_DEFECTS:
        row.update(defect="known upstream bug", expected=KNOWN_DEFECTS[game.name],
                   result="caught" if KNOWN_DEFECTS[game.name] in failed else "missed")
    elif mutant is None:
        row["result"] = "pass" if report.passed else "false alarm"
    else:
        row["intended"] = sorted(mutant.intended_gates)
        row["result"] = ("caught by intended" if mutant.intended_gates & set(failed)
                         else "caught by other" if failed else "missed")
    print(f"  {row['seconds']:6.1f}s {game.name:24s} {row['defect']:22s} {row['result']:20s} {failed}",
          file=sys.stderr)
    return row


def _summarise(rows: list[dict], seconds: float, corpus: list[RealGame]) -> dict:
    by_gate: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in rows:
        for gate in r.get("intended", []):
            by_gate[gate][r["result"]] += 1
    positives = [r for r in rows if r["defect"] == "positive"]
    mutants = [r for r in rows if r.get("intended") and r["result"] != "n/a"]
    return {
        "corpus": [{"game": g.name, "package": g.package, "licence": g.licence, "build": g.build} for g in corpus],
        "rows": rows, "by_intended_gate": {k: dict(v) for k, v in sorted(by_gate.items())},
        "seconds": round(seconds, 1),
        "positives_passed": f"{sum(r['result'] == 'pass' for r in positives)}/{len(positives)}",
        "known_bugs_caught": f"{sum(r['result'] == 'caught' for r in rows if r['defect'] == 'known upstream bug')}"
                             f"/{sum(r['defect'] == 'known upstream bug' for r in rows)}",
        "mutants_caught": f"{sum(r['result'] != 'missed' for r in mutants)}/{len(mutants)}",
        "mutants_caught_by_intended_gate":
            f"{sum(r['result'] == 'caught by intended' for r in mutants)}/{len(mutants)}",
        "all_correct": all(r["result"] in ("pass", "caught by intended", "caught", "n/a") for r in rows),
    }


def _table(s: dict) -> str:
    lines = ["corpus:"] + [f"  {g['game']:24s} {g['build']:11s} {g['licence']:4s} {g['package']}" for g in s["corpus"]]
    lines += ["", f"{'game':24s} {'case':22s} result", "-" * 78]
    lines += [f"{r['game']:24s} {r['defect']:22s} {r['result']}" + (f"  {r.get('failed_gates')}"
              if r["result"] not in ("pass", "caught by intended") else "") for r in s["rows"]]
    lines += ["", f"{'intended gate':24s} outcome", "-" * 78]
    lines += [f"{g:24s} " + ", ".join(f"{k}: {v}" for k, v in c.items()) for g, c in s["by_intended_gate"].items()]
    lines += ["-" * 78, f"working games passed: {s['positives_passed']}   known upstream bugs caught: "
              f"{s['known_bugs_caught']}   mutants caught: {s['mutants_caught']}   by the intended gate: "
              f"{s['mutants_caught_by_intended_gate']}   ({s['seconds']} s)"]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
