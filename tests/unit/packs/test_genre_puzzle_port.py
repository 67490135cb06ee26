"""The puzzle genre's Python port of the rules (rules.py: checks.py and probe.py plan with it) against the game's
own JavaScript (template/src/board.js, state.js) run by real node: same deals, same play, same snapshots."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tier2.packs import load_pack

ROOT = Path(__file__).resolve().parents[3]
GENRE = load_pack(ROOT / "capability_packs", "phaser").genre("puzzle")
_PROBE = GENRE.module("probe")
assert _PROBE is not None
PROBE: ModuleType = _PROBE
RULES = PROBE.rules
SRC = GENRE.template_dir / "src"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is part of the toolchain; not on PATH here")

# Reads {deals: [[seed, size, kinds]], games: [{tables, actions}]} on stdin; prints the deals and, per game, the
# snapshot after every action (the Play scene's routing: swap / rotate / a cursor move).
_DRIVER = """
import { dealBoard } from 'SRC/board.js';
import { createState, swap, rotate, moveCursor, snapshot } from 'SRC/state.js';
let raw = '';
process.stdin.on('data', (d) => { raw += d; });
process.stdin.on('end', () => {
  const req = JSON.parse(raw);
  const deals = req.deals.map(([seed, size, kinds]) => dealBoard({ rng: seed }, size, kinds));
  const games = req.games.map(({ tables, actions }) => {
    const st = createState(tables);
    const out = [snapshot(st)];
    for (const a of actions) {
      if (a === 'swap') swap(st); else if (a === 'rotate') rotate(st); else moveCursor(st, a);
      out.push(snapshot(st));
    }
    return out;
  });
  process.stdout.write(JSON.stringify({ deals, games }));
});
"""


def _node(request: dict[str, Any]) -> dict[str, Any]:
    script = _DRIVER.replace("SRC", SRC.as_uri().removeprefix("file://"))
    proc = subprocess.run([str(NODE), "--input-type=module", "-e", script], input=json.dumps(request),
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return dict(json.loads(proc.stdout))


def _js_tables(tables: dict[str, Any]) -> dict[str, Any]:
    return {"theme": tables["theme.json"], "board": tables["board.json"], "goals": tables["goals.json"]}


_KEYS = ("outcome", "grid", "cursor", "selected", "facing", "moves_left", "score", "matches", "target", "cascades",
         "shuffles")


def test_the_deal_is_the_same_in_python_and_in_the_game() -> None:
    deals = [[seed * 7919 + 13, size, kinds] for seed, (size, kinds) in
             enumerate([(5, 4), (6, 4), (7, 5), (8, 6), (9, 7), (10, 8)] * 5)]
    deals.append([0, 5, 4])
    deals.append([4294967295, 10, 4])
    got = _node({"deals": deals, "games": []})["deals"]
    assert got == [RULES.deal_board(seed, size, kinds) for seed, size, kinds in deals]


def test_probe_plays_give_the_same_snapshots_in_python_and_in_the_game() -> None:
    """Each game is played by the probe on the Python model; node replays the same actions on state.js."""
    briefs = ["a relaxing candy match-3 puzzle", "hard jewel swapping game in a mine", "a grid of coloured blocks",
              "space puzzle with planets and comets", "challenging rune matching puzzle for wizards"]
    games: list[dict[str, Any]] = []
    expected: list[list[dict[str, Any]]] = []
    for brief in briefs:
        tables = GENRE.build_tables(brief)
        for matching in (True, False):
            game, actions = RULES.Game(tables), list[str]()
            snaps = [game.snapshot()]
            while game.outcome == "running" and len(actions) < 400:
                name = (PROBE.win_action if matching else PROBE.lose_action)(game.snapshot(), {
                    a: {} for a in PROBE.ACTIONS}, tables)
                assert name is not None
                game.act(name)
                actions.append(name)
                snaps.append(game.snapshot())
            assert game.outcome == ("won" if matching else "lost")
            games.append({"tables": _js_tables(tables), "actions": actions})
            expected.append(snaps)
    got = _node({"deals": [], "games": games})["games"]
    for g, (js, py) in enumerate(zip(got, expected, strict=True)):
        assert len(js) == len(py)
        for i, (a, b) in enumerate(zip(js, py, strict=True)):
            assert {k: a[k] for k in _KEYS} == {k: b[k] for k in _KEYS}, (g, i, games[g]["actions"][max(0, i - 1)])


def test_cascades_and_redeals_match_on_long_plays() -> None:
    """Many moves on small boards with many kinds: matching swaps run out now and then (redeals), cascades too."""
    base = GENRE.build_tables("a relaxing candy match-3 puzzle")
    games: list[dict[str, Any]] = []
    expected: list[dict[str, Any]] = []
    for seed in range(6):
        tables = {**base, "board.json": {**base["board.json"], "size": 5, "seed": seed * 1001,
                                         "kinds": (base["board.json"]["kinds"] * 2)[:7]},
                  "goals.json": {**base["goals.json"], "moves": 60, "target_score": 10**6}}
        game, actions = RULES.Game(tables), list[str]()
        while game.outcome == "running":
            name = PROBE.win_action(game.snapshot(), {a: {} for a in PROBE.ACTIONS}, tables)
            game.act(name)
            actions.append(name)
        games.append({"tables": _js_tables(tables), "actions": actions})
        expected.append(game.snapshot())
    got = _node({"deals": [], "games": games})["games"]
    for js, py in zip(got, expected, strict=True):
        assert {k: js[-1][k] for k in _KEYS} == {k: py[k] for k in _KEYS}
    assert sum(py["shuffles"] for py in expected) >= 1, "no redeal was played"
    assert sum(py["cascades"] for py in expected) >= 1
