"""Real-game accuracy of generic-mode validation: every working game must pass, every broken game must fail by the
gate meant for it, every planted defect must be caught by the gate meant for it, and two runs must agree.

Usage: .venv/bin/python bench/real_games.py [--json] [--games NAME[,NAME]] [--only DEFECT[,DEFECT]]
                                            [--no-mutants] [--no-pac-man] [--no-recipes] [--repeat N] [--load N]

Corpus (names, licences and how each was labelled: tests/fixtures/real/README.md):

* the npm part (`capability_packs/phaser/corpus.py`, fetched from npm into workspaces/.cache): the three MIT
  demos of @phaserjs/create-game@1.3.2 from their sources and built with Vite, and pac-man-phaser@1.0.10 in a React
  host page. memory-card-game has a genuine upstream bug ("go is not defined" on pointer move): expected to fail
  l1.no_errors, no mutants. Mutants: `GENERIC_MUTANTS` on source projects, `SITE_MUTANTS` on built sites.
* public repositories rebuilt from a pinned commit, Phaser 3 and PixiJS 7/8 games, each read with the engine
  adapter its scripts show among every installed pack's (the row's ``engine``): `tier2.testing.corpus.recipe_games`,
  recipes tests/fixtures/real/<name>/recipe.yaml, sources from the local mirror /work/.mirror, built in the isolated
  sandbox into workspaces/.cache/real): each recipe's label (working → must pass; broken → must fail by its
  broken_gate) and its planted defects (class → intended gate; `SITE_MUTANTS` applied to the built output). A
  recipe whose repository is not mirrored here is skipped and said so.

--repeat N runs every case N times and reports whether the verdicts (passed + failed gates) are identical;
--load N keeps N busy child processes spinning during the runs (stopped by pid). Figures: bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from capability_packs.phaser.corpus import DEMOS, real_game_corpus  # noqa: E402
from tier2.browser import BrowserPool, find_chromium  # noqa: E402
from tier2.packs import load_pack  # noqa: E402
from tier2.settings.loader import PolicyStore, load_security  # noqa: E402
from tier2.testing.corpus import RealGame, load_recipes, mirror_of, recipe_games  # noqa: E402
from tier2.validators import ValidationRunner  # noqa: E402
from tier2.validators.mutants import GENERIC_MUTANTS, SITE_MUTANTS, Mutant, MutationError  # noqa: E402

#: npm games with a genuine upstream defect: expected to FAIL with this gate (and not mutated)
KNOWN_DEFECTS = {"memory-card-game": "l1.no_errors", "memory-card-game.dist": "l1.no_errors"}
_SITE = {m.defect: m for m in SITE_MUTANTS}
CACHE = ROOT / "workspaces" / ".cache"


def _mutants(game: RealGame) -> list[Mutant]:
    if game.defects is not None:  # a recipe game: its planted defects, each with the recipe's intended gate
        return [_SITE[d] for d in game.defects]
    return [] if game.name in KNOWN_DEFECTS else (SITE_MUTANTS if game.build != "source" else GENERIC_MUTANTS)


def _expected_broken(game: RealGame) -> str | None:
    return game.broken_gate if game.label == "broken" else KNOWN_DEFECTS.get(game.name)


async def _corpus(args: argparse.Namespace, names: set[str]) -> tuple[list[RealGame], list[str]]:
    npm_names = {*DEMOS, *(f"{d}.dist" for d in DEMOS), "pac-man.dist"}
    games = [] if names and not names & npm_names else \
        [g for g in real_game_corpus(CACHE, with_pac_man=not args.no_pac_man) if not names or g.name in names]
    skipped: list[str] = []
    if not args.no_recipes:
        wanted = {r.name for r in load_recipes() if not names or r.name in names}
        present = {r.name for r in load_recipes() if r.name in wanted and mirror_of(r).is_dir()}
        skipped = [f"{n}: no mirror of its repository here" for n in sorted(wanted - present)]
        games += await recipe_games(CACHE, names=present) if present else []
    return games, skipped


def _spin(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--games", default="", help="comma-separated game names (default: all)")
    ap.add_argument("--only", default="", help="comma-separated defect classes (default: all)")
    ap.add_argument("--no-mutants", action="store_true")
    ap.add_argument("--no-pac-man", action="store_true")
    ap.add_argument("--no-recipes", action="store_true", help="only the npm part of the corpus")
    ap.add_argument("--repeat", type=int, default=1, help="runs of every case (verdicts must be identical)")
    ap.add_argument("--load", type=int, default=0, help="busy child processes during the runs")
    args = ap.parse_args()
    names = {n for n in args.games.split(",") if n}
    only = {d for d in args.only.split(",") if d}
    pack = load_pack(ROOT / "capability_packs", "phaser")
    security = load_security(ROOT / "config")
    policy = PolicyStore(ROOT / "config").snapshot()
    corpus, skipped = await _corpus(args, names)
    runs: list[list[dict]] = []
    started = time.monotonic()
    spinners = _spin(args.load)
    try:
        with tempfile.TemporaryDirectory(prefix="tier2-real-games-") as tmp:
            async with BrowserPool(find_chromium(None, security.browser.executables)) as pool:
                runner = ValidationRunner(pool, pack, policy)
                for run in range(max(1, args.repeat)):
                    rows: list[dict] = []
                    for game in corpus:
                        cases: list[Mutant | None] = [] if only else [None]
                        if not args.no_mutants:
                            cases += [m for m in _mutants(game) if not only or m.defect in only]
                        for mutant in cases:
                            rows.append(await _check(runner, Path(tmp) / f"run{run}", game, mutant))
                    runs.append(rows)
    finally:
        for proc in spinners:
            proc.kill()
            proc.wait()
    summary = _summarise(runs, time.monotonic() - started, corpus, skipped, args.load)
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "real_games.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2) if args.json else _table(summary))
    return 0 if summary["all_correct"] and summary["runs_identical"] is not False else 1


async def _check(runner: ValidationRunner, work: Path, game: RealGame, mutant: Mutant | None) -> dict:
    defect = mutant.defect if mutant else "positive"
    case = work / "cases" / f"{game.name}-{defect}"
    shutil.copytree(game.path, case, ignore=shutil.ignore_patterns("node_modules", ".tier2", ".git"))
    row: dict = {"game": game.name, "package": game.package, "licence": game.licence, "build": game.build,
                 "label": game.label, "defect": defect}
    if mutant is not None:
        try:
            mutant.apply(case)
        except MutationError as exc:
            return {**row, "result": "n/a", "why": str(exc)}
    t0 = time.monotonic()
    report = await runner.validate_target(str(case), work / "reports" / case.name)
    failed = sorted(g.id for g in report.failures)
    chosen = next((n.split("read with the ", 1)[1].split(" engine adapter")[0] for n in report.notes
                   if n.startswith("read with the ")), runner.pack.adapter.title)
    row.update(passed=report.passed, failed_gates=failed, seconds=round(time.monotonic() - t0, 1),
               site=(report.site or {}).get("kind"), mode=report.mode, engine=chosen)
    broken = _expected_broken(game)
    if mutant is None and broken is not None:
        row.update(defect="broken (upstream)", expected=broken,
                   result="caught" if broken in failed else "caught by other" if failed else "missed")
    elif mutant is None:
        row["result"] = "pass" if report.passed else "false alarm"
    else:
        row["intended"] = sorted(mutant.intended_gates)
        row["result"] = ("caught by intended" if mutant.intended_gates & set(failed)
                         else "caught by other" if failed else "missed")
    print(f"  {row['seconds']:6.1f}s {game.name:24s} {chosen:8s} {row['defect']:20s} {row['result']:20s} {failed}",
          file=sys.stderr)
    return row


def _verdict(r: dict) -> tuple:
    return (r["game"], r["defect"], r.get("passed"), tuple(r.get("failed_gates", ())))


def _summarise(runs: list[list[dict]], seconds: float, corpus: list[RealGame], skipped: list[str],
               load: int) -> dict:
    rows = runs[0]
    by_gate: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in rows:
        for gate in r.get("intended", []) or ([r["expected"]] if "expected" in r else []):
            by_gate[gate][r["result"]] += 1
        if r["result"] == "false alarm":
            for gate in r["failed_gates"]:
                by_gate[gate]["false alarm"] += 1
    positives = [r for r in rows if r["defect"] == "positive"]
    broken = [r for r in rows if r["defect"] == "broken (upstream)"]
    mutants = [r for r in rows if r.get("intended") and r["result"] != "n/a"]
    differing = sorted({f"{a['game']}/{a['defect']}" for run in runs[1:] for a, b in zip(rows, run, strict=True)
                        if _verdict(a) != _verdict(b)})
    return {
        "corpus": [{"game": g.name, "package": g.package, "licence": g.licence, "build": g.build,
                    "label": g.label} for g in corpus],
        "skipped": skipped, "rows": rows, "by_gate": {k: dict(v) for k, v in sorted(by_gate.items())},
        "seconds": round(seconds, 1), "repeat": len(runs), "load": load,
        "runs_identical": (not differing) if len(runs) > 1 else None, "differing": differing,
        "working_passed": f"{sum(r['result'] == 'pass' for r in positives)}/{len(positives)}",
        "broken_caught_by_intended": f"{sum(r['result'] == 'caught' for r in broken)}/{len(broken)}",
        "mutants_caught": f"{sum(r['result'] != 'missed' for r in mutants)}/{len(mutants)}",
        "mutants_caught_by_intended_gate":
            f"{sum(r['result'] == 'caught by intended' for r in mutants)}/{len(mutants)}",
        "all_correct": all(r["result"] in ("pass", "caught by intended", "caught", "n/a") for r in rows),
    }


def _table(s: dict) -> str:
    lines = ["corpus:"] + [f"  {g['game']:24s} {g['build']:11s} {g['licence']:13s} {g['label']:8s} {g['package']}"
                           for g in s["corpus"]]
    lines += [f"  skipped {k}" for k in s["skipped"]]
    lines += ["", f"{'game':24s} {'case':20s} result", "-" * 78]
    lines += [f"{r['game']:24s} {r['defect']:20s} {r['result']}" + (f"  {r.get('failed_gates')}"
              if r["result"] not in ("pass", "caught by intended", "caught") else "") for r in s["rows"]]
    lines += ["", f"{'gate':24s} outcome (intended cases; false alarms on working games)", "-" * 78]
    lines += [f"{g:24s} " + ", ".join(f"{k}: {v}" for k, v in c.items()) for g, c in s["by_gate"].items()]
    same = {None: "", True: "   runs identical: yes", False: f"   runs identical: NO {s['differing']}"}
    lines += ["-" * 78, f"working games passed: {s['working_passed']}   broken caught by the intended gate: "
              f"{s['broken_caught_by_intended']}   mutants caught: {s['mutants_caught']}   by the intended gate: "
              f"{s['mutants_caught_by_intended_gate']}   ({s['seconds']} s, x{s['repeat']}, load {s['load']})"
              + same[s["runs_identical"]]]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
