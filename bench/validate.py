"""Benchmark: `tier2 validate` time per game, this checkout side by side with a baseline commit, cold and warm.

Usage: .venv/bin/python bench/validate.py [--runs N] [--baseline REF | --no-baseline] [--games NAME,...] [--json]

Games: ``template`` — a game the offline writer generates (`tier2 generate` once, offline model, into a temporary
folder) — and each test game in ``tests/fixtures/games/`` (with its ``lib/phaser.min.js``). Each validation is the
entry `tier2 validate` uses (`ValidationRunner.validate_target`, mode auto: build, data and static gates, the
Canvas-renderer play, the default-renderer (WebGL) smoke, L2, the offline L3 heuristic, report written), timed
from the pool's creation to its report (and, cold, to the browser's exit). Modes, N runs each (default 5):

* ``cli``: the command itself, ``python -m tier2 validate GAME --json`` (a fresh process with its imports, a fresh
  browser, an empty workspaces folder, so an empty validation cache), timed as the process's wall time;
* ``cold``: a fresh process, a fresh browser and an empty validation cache per run, timed inside the process;
* ``warm``: one process and one pool: an untimed first validation, then a validation of the same files (a
  passing default-renderer smoke of unchanged files is reused, `tier2.validators.reuse`);
* ``changed``: the same pool, one more validation after a one-line change to the game's script (a new bundle: the
  smoke always runs).

The baseline (default ``fc5246b``, the merge-base this work started from) is checked out into a temporary
``git worktree`` and timed the same way in the same run, the two taking turns run by run; the report gives
old and new medians, the ratio and the median per-phase split, and says whether both gave the same verdict per
gate. The machine is shared: read the figures as rough, the ratio as the finding.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "fc5246b"
BRIEF = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
MODES = ("cli", "cold", "warm", "changed")
#: the file a one-line change goes into (the first that exists), per game layout
TOUCH = ("src/main.js", "game.js", "assets/*.js")


# ---- child: runs inside the tree being timed (TIER2_BENCH_TREE), prints one JSON record per validation ----

async def _child(spec: dict[str, Any]) -> list[dict[str, Any]]:
    from tier2.browser import BrowserPool, find_chromium
    from tier2.packs import load_pack
    from tier2.settings.loader import PolicyStore, load_security
    from tier2.validators import ValidationRunner

    tree = Path(spec["tree"])
    skills = tree / "skills"  # the baseline's skills sat beside the packs; now each pack holds its own
    pack = load_pack(tree / "capability_packs", "phaser", *([skills] if skills.is_dir() else []))
    exe = find_chromium(None, load_security(tree / "config").browser.executables)
    policy = PolicyStore(tree / "config").snapshot()
    out, game, records = Path(spec["out"]), spec["game"], []

    def runner_for(pool: Any) -> Any:
        try:
            return ValidationRunner(pool, pack, policy, cache_dir=Path(spec["cache"]))
        except TypeError:  # the baseline's runner takes no cache (and has none)
            return ValidationRunner(pool, pack, policy)

    def record(mode: str, started: float, report: Any) -> None:
        records.append({"mode": mode, "wall_s": time.monotonic() - started, "timings_ms": report.timings_ms,
                        "verdicts": {g.id: g.passed for g in report.gates if g.layer != "L3"}})

    if spec["mode"] == "cold":
        started = time.monotonic()
        pool = BrowserPool(exe)
        try:
            report = await runner_for(pool).validate_target(game, out / "cold")
        finally:
            await pool.close()
        record("cold", started, report)
        return records
    async with BrowserPool(exe) as pool:
        runner = runner_for(pool)
        await runner.validate_target(game, out / "first")
        for i in range(spec["runs"]):
            started = time.monotonic()
            record("warm", started, await runner.validate_target(game, out / f"warm{i}"))
        for i in range(spec["runs"]):
            with open(spec["touch"], "a") as f:
                f.write(f"\n;window.__tier2BenchRun = {i};\n")
            started = time.monotonic()
            record("changed", started, await runner.validate_target(game, out / f"changed{i}"))
    return records


# ---- parent ----

def _worktree(ref: str, where: Path) -> Path:
    tree = where / "baseline"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), ref], check=True)
    modules = (ROOT / "capability_packs/phaser/node_modules").resolve()
    (tree / "capability_packs/phaser/node_modules").symlink_to(modules, target_is_directory=True)
    return tree


def _generate_template(where: Path) -> Path:
    """A game the offline writer made: `tier2 generate` once (offline model, its own embedded Redis)."""
    out = where / "template"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIER2_") and k != "REDIS_URL"}
    env["TIER2_WORKSPACES"] = str(where / "ws")
    proc = subprocess.run([sys.executable, "-m", "tier2", "generate", BRIEF, "--out", str(out), "--json", "--quiet"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"tier2 generate failed: {proc.stderr[-2000:]}")
    shutil.rmtree(out / ".tier2", ignore_errors=True)  # its reports; the game is what remains
    return out


def _games(names: list[str] | None, where: Path) -> dict[str, Path]:
    sys.path.insert(0, str(ROOT))
    from tests.fixtures.fixture_games import GAMES, install_game

    wanted = names or ["template", *sorted(p.name for p in GAMES.iterdir() if p.is_dir())]
    games: dict[str, Path] = {}
    for name in wanted:
        if name == "template":
            games[name] = _generate_template(where)
        elif (GAMES / name).is_dir():
            games[name] = install_game(name, where / "games" / name)
        else:
            raise SystemExit(f"unknown game {name!r}")
    return games


def _touch_file(game: Path) -> Path:
    for pattern in TOUCH:
        found = sorted(game.glob(pattern))
        if found:
            return found[0]
    raise SystemExit(f"no script to change in {game}")


def _run_child(tree: Path, spec: dict[str, Any]) -> list[dict[str, Any]]:
    env = {**os.environ, "TIER2_BENCH_TREE": str(tree), "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)], cwd=tree,
                          env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"validation in {tree} failed: {proc.stderr[-3000:]}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def _run_cli(tree: Path, game: Path, out: Path, workspaces: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIER2_") and k != "REDIS_URL"}
    env.update(PYTHONPATH=str(tree), TIER2_WORKSPACES=str(workspaces))
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "tier2", "validate", str(game), "--out", str(out), "--json"],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"tier2 validate in {tree} failed ({proc.returncode}): {proc.stderr[-3000:]}")
    report = json.loads(proc.stdout)
    return {"mode": "cli", "wall_s": wall, "timings_ms": report["timings_ms"],
            "verdicts": {g["id"]: g["passed"] for g in report["gates"] if g["layer"] != "L3"}}


def _measure(trees: dict[str, Path], game: Path, runs: int, where: Path) -> dict[str, list[dict[str, Any]]]:
    """Records per tree. The trees take turns run by run (in alternating order) so that the load of the shared
    machine hits both alike; each round is one ``cli`` process, one ``cold`` process and one warm process (an
    untimed first validation, then one ``warm`` and one ``changed``)."""
    copies = {}
    for label in trees:
        copies[label] = where / label / game.name
        shutil.copytree(game, copies[label])
    results: dict[str, list[dict[str, Any]]] = {label: [] for label in trees}
    for i in range(runs):
        order = list(trees.items()) if i % 2 == 0 else list(reversed(trees.items()))
        for label, tree in order:
            results[label].append(_run_cli(tree, copies[label], where / label / f"out-cli{i}",
                                           where / label / f"ws-cli{i}"))
        for label, tree in order:
            spec = {"tree": str(tree), "mode": "cold", "game": str(copies[label]), "runs": 1,
                    "out": str(where / label / f"out-cold{i}"), "cache": str(where / label / f"cache-cold{i}")}
            results[label] += _run_child(tree, spec)
        for label, tree in order:
            spec = {"tree": str(tree), "mode": "warm", "game": str(copies[label]), "runs": 1,
                    "out": str(where / label / f"out-warm{i}"), "cache": str(where / label / f"cache-warm{i}"),
                    "touch": str(_touch_file(copies[label]))}
            results[label] += _run_child(tree, spec)
    return results


def _summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in MODES:
        rows = [r for r in records if r["mode"] == mode]
        if not rows:
            continue
        keys = sorted({k for r in rows for k in r["timings_ms"]})
        out[mode] = {"median_s": round(statistics.median(r["wall_s"] for r in rows), 2),
                     "min_s": round(min(r["wall_s"] for r in rows), 2),
                     "phases_ms": {k: int(statistics.median(r["timings_ms"].get(k, 0) for r in rows)) for k in keys},
                     "verdicts": rows[0]["verdicts"]}
    return out


def _print(name: str, summary: dict[str, dict[str, Any]]) -> None:
    old, new = summary.get("old"), summary["new"]
    print(f"\n{name}")
    for mode in MODES:
        if mode not in new:
            continue
        n = new[mode]
        line = f"  {mode:8} new {n['median_s']:6.2f} s (min {n['min_s']:.2f})"
        if old and mode in old:
            o = old[mode]
            same = "same verdicts" if o["verdicts"] == n["verdicts"] else (
                "VERDICTS DIFFER: " + ", ".join(f"{k} {o['verdicts'].get(k)}→{n['verdicts'].get(k)}"
                                               for k in sorted(set(o["verdicts"]) | set(n["verdicts"]))
                                               if o["verdicts"].get(k) != n["verdicts"].get(k)))
            ratio = n["median_s"] / o["median_s"]
            line += f"   old {o['median_s']:6.2f} s (min {o['min_s']:.2f})   new/old {ratio:.2f}   {same}"
        print(line)
        for label, part in (("old", old), ("new", new)):
            if part and mode in part:
                phases = ", ".join(f"{k} {v}" for k, v in part[mode]["phases_ms"].items() if v)
                print(f"      {label} phases (median ms): {phases}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline", default=BASELINE, help="git ref timed beside this checkout")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--games", help="comma-separated: template and/or names under tests/fixtures/games")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        import asyncio

        for rec in asyncio.run(_child(json.loads(args.child))):
            print(json.dumps(rec))
        return 0
    started, load_before = time.monotonic(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tier2-bench-validate-") as tmp:
        where = Path(tmp)
        trees = {"new": ROOT}
        baseline = None if args.no_baseline else _worktree(args.baseline, where)
        try:
            if baseline is not None:
                trees = {"old": baseline, "new": ROOT}
            games = _games(args.games.split(",") if args.games else None, where)
            out: dict[str, Any] = {"runs": args.runs, "baseline": None if baseline is None else args.baseline,
                                   "games": {}}
            for name, game in games.items():
                print(f"timing {name} ...", file=sys.stderr)
                results = _measure(trees, game, args.runs, where / "runs" / name)
                out["games"][name] = {label: _summary(recs) for label, recs in results.items()}
                if not args.json:
                    _print(name, out["games"][name])
        finally:
            if baseline is not None:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)], check=False)
    out["bench_s"] = round(time.monotonic() - started)
    out["load_average"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"\n{out['bench_s']} s; load average {out['load_average'][0]} at the start, "
              f"{out['load_average'][1]} at the end (2 cores: figures above ~2 are inflated)")
    return 0


if __name__ == "__main__":
    if os.environ.get("TIER2_BENCH_TREE"):  # a child: import tier2 from the tree being timed, nothing else
        sys.path.insert(0, os.environ["TIER2_BENCH_TREE"])
    sys.exit(main())
