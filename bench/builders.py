"""Benchmark: do the offline builders' tables pass the gates, on seeded generated briefs?

Usage: .venv/bin/python bench/builders.py [--genres shop,clicker] [--briefs 300] [--seed 23] [--node] [--json]

Per genre: builds ``--briefs`` briefs from its ``briefs.yaml`` (`tier2.testing.briefs`), counts the tables that
fail a data gate (`genre_data_gates`) or, for a genre with a mirror (``builder.MIRROR``), the latch split played on
it (`tier2.validators.builder_gates.latch_gate`), the builds that raised `GatesNotHeld`, and the build time. With
``--node``, the genre probe's win and lose plays are also played on the real rules (``template/src/state.js`` in
node, through the genre's ``tests/drive.mjs`` or ``tests/harness.mjs``) for the genres that ship such a driver
without a Python mirror (shooter, platformer). Deterministic figures; times are indicative.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tier2.packs import Genre, load_pack  # noqa: E402
from tier2.testing.briefs import generated_briefs  # noqa: E402
from tier2.validators.builder_gates import GatesNotHeld, latch_gate  # noqa: E402
from tier2.validators.data.pack_checks import genre_data_gates  # noqa: E402

_MOVES = {n: {"keys": [k]} for n, k in (("start", "Enter"), ("left", "ArrowLeft"), ("right", "ArrowRight"),
                                        ("abandon", "Escape"))}
#: genre -> (driver script, its action vocabulary, extra fields per action line, tables passed as a dir)
_NODE: dict[str, tuple[str, dict[str, Any], dict[str, Any], bool]] = {
    "shooter": ("tests/drive.mjs", _MOVES | {"fire": {"keys": ["Space"]}}, {}, True),
    "platformer": ("tests/harness.mjs", _MOVES | {"jump": {"keys": ["Space"]}}, {"gap": 1}, False),
}


def _node_play(genre: Genre, tables: dict[str, Any], policy: Any, limit: int, work: Path) -> str:
    script, actions, extra, as_dir = _NODE[genre.id]
    node = shutil.which("node")
    assert node is not None, "node is not on PATH"
    if as_dir:
        for name, table in tables.items():
            (work / name).write_text(json.dumps(table))
        arg = work
    else:
        arg = work / "tables.json"
        arg.write_text(json.dumps(tables))
    with subprocess.Popen([node, "--no-warnings", str(genre.root / script), str(arg)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        state, n = json.loads(proc.stdout.readline()), 0
        while state["outcome"] == "running" and n < limit:
            act = policy(state, actions, tables)
            if act is None:
                break
            name, frames = (act, genre.spec.probe.action_frames) if isinstance(act, str) else act
            proc.stdin.write(json.dumps({"action": name, "frames": frames, **extra}) + "\n")
            proc.stdin.flush()
            state, n = json.loads(proc.stdout.readline()), n + 1
        proc.stdin.close()
    return str(state["outcome"])


def bench_genre(genre: Genre, n: int, seed: int, node: bool, work: Path) -> dict[str, Any]:
    mirror = genre.code.mirror
    row: dict[str, Any] = {"genre": genre.id, "briefs": n, "refused": 0, "data_gate_failures": 0,
                           "latch": "mirror" if mirror else ("node" if node and genre.id in _NODE else "-"),
                           "latch_failures": 0, "examples": []}
    build_s = 0.0
    win, lose = genre.probe_fns()
    for brief in generated_briefs(genre, n, seed):
        t0 = time.perf_counter()
        try:
            tables = genre.build_tables(brief)
        except GatesNotHeld as exc:
            row["refused"] += 1
            row["examples"].append(f"{brief!r}: refused: {exc}"[:300])
            continue
        finally:
            build_s += time.perf_counter() - t0
        bad = [f"{g.id}: {g.summary}" for g in genre_data_gates(genre, tables) if not g.passed]
        row["data_gate_failures"] += bool(bad)
        if mirror is not None:
            gate = latch_gate(genre, tables, mirror)
            bad += [] if gate.passed else [f"{gate.id}: {gate.summary}"]
            row["latch_failures"] += not gate.passed
        elif row["latch"] == "node":
            got = (_node_play(genre, tables, win, genre.spec.probe.max_win_actions, work),
                   _node_play(genre, tables, lose, genre.spec.probe.max_lose_actions, work))
            if got != ("won", "lost"):
                row["latch_failures"] += 1
                bad.append(f"real rules: win play {got[0]}, lose play {got[1]}")
        if bad and len(row["examples"]) < 5:
            row["examples"].append(f"{brief!r}: {'; '.join(bad)}"[:300])
    row["build_ms_mean"] = round(1000 * build_s / max(1, n), 1)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--genres", default="")
    ap.add_argument("--briefs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--node", action="store_true", help="play the real rules in node where there is no mirror")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    pack = load_pack(ROOT / "capability_packs", "phaser")
    ids = [g for g in args.genres.split(",") if g] or sorted(pack.genres)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [bench_genre(pack.genre(g), args.briefs, args.seed, args.node, Path(tmp)) for g in ids]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['genre']:<11} briefs {r['briefs']}  refused {r['refused']}  data-gate failures "
                  f"{r['data_gate_failures']}  latch ({r['latch']}) failures {r['latch_failures']}  "
                  f"build {r['build_ms_mean']} ms")
            for ex in r["examples"]:
                print("    " + ex)
    return 0 if all(not (r["refused"] or r["data_gate_failures"] or r["latch_failures"]) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
