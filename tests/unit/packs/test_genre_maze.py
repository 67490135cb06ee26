"""The maze genre: builder determinism and variety, tables valid against the schemas and passing checks.py,
checks.py failing planted unsolvable or unfair mazes, the probe's decisions on hand-made states, and the Python
replay of the rules (mazelib.play, which the builder trusts) agreeing with state.js move for move."""

from __future__ import annotations

import json
import shutil
import subprocess
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import jsonschema
import pytest

from tests.markers import fast_first
from tier2.packs import load_pack

ROOT = Path(__file__).resolve().parents[3]
GENRE = load_pack(ROOT / "capability_packs", "phaser").genre("maze")


def _module(name: Literal["builder", "probe", "checks"]) -> ModuleType:
    mod = GENRE.module(name)
    assert mod is not None, name
    return mod


BUILDER, CHECKS, PROBE = _module("builder"), _module("checks"), _module("probe")
LIB = BUILDER.mazelib
MOVES: dict[str, Any] = {"start": {}, "up": {}, "down": {}, "left": {}, "right": {}, "abandon": {}}

BRIEFS = [
    "a dungeon crawl maze: collect every ruby, dodge skeletons", "hard pac-man style maze with ghosts",
    "easy relaxing garden hedge maze with a mouse", "a space station labyrinth", "top-down temple maze collector",
    "a maze", "hard brutal labyrinth with many enemies", "a labyrinth set in a neon city at night, hard",
    "a relaxing maze game with cute animals in a snowy forest", "maze: ancient desert ruins, three lives, fast",
    "underwater reef maze collecting pearls", "haunted mansion labyrinth with candles", "corridor collector",
    "pacman", "cozy maze for kids with apples", "Ünïcödé labyrinth ☕ crème brûlée", "", "x" * 5000,
    "🧭🧭 maze 🧭", "an intense frantic dungeon crawl",
]


@cache
def _built(brief: str) -> str:
    return json.dumps(GENRE.build_tables(brief), sort_keys=True)


def _tables(brief: str) -> dict[str, Any]:
    """The builder's tables for ``brief`` (built once per test session; a fresh copy each call)."""
    tables: dict[str, Any] = json.loads(_built(brief))
    return tables


def _passed(tables: dict[str, Any]) -> dict[str, bool]:
    return {r["id"]: r["passed"] for r in GENRE.check_tables(tables)}


def _findings(tables: dict[str, Any], cid: str) -> list[str]:
    return next(r["findings"] for r in GENRE.check_tables(tables) if r["id"] == cid)


@pytest.mark.parametrize("brief", fast_first(BRIEFS, 5))
def test_built_tables_validate_pass_checks_and_the_probe_plays_them(brief: str) -> None:
    tables = _tables(brief)
    assert set(tables) == set(GENRE.spec.data_tables)
    for name, schema in GENRE.schemas.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.validate(tables[name], schema, cls=jsonschema.Draft202012Validator)
    assert _passed(tables) == {"maze_solvable": True, "maze_fair": True}
    assert json.dumps(GENRE.build_tables(brief), sort_keys=True) == _built(brief)  # same brief, same bytes
    bounds = GENRE.spec.probe
    for frames, lead in ((bounds.action_frames, 0), (bounds.action_frames + 2, 9)):
        won = LIB.play(tables, lambda st: PROBE.win_action(st, MOVES, tables), frames, lead, bounds.max_win_actions)
        assert (won.outcome, won.hits) == ("won", 0)
    lost = LIB.play(tables, lambda st: PROBE.lose_action(st, MOVES, tables), bounds.action_frames, 0,
                    bounds.max_lose_actions)
    assert lost.outcome == "lost"
    pal = tables["theme.json"]["palette"]
    assert all(BUILDER.contrast(pal[k], pal[bg]) >= 4.5 for k in ("accent", "good", "bad", "text")
               for bg in ("panel", "background"))


def test_different_briefs_make_different_games() -> None:
    built = [_tables(b) for b in BRIEFS]
    assert len({t["theme.json"]["title"] for t in built}) >= 15
    assert len({json.dumps(t["mazes.json"]) for t in built}) == len(built)
    assert len({t["theme.json"]["gem_name"] for t in built}) >= 8
    assert len({t["theme.json"]["palette"]["accent"] for t in built}) == len(built)


def test_setting_and_difficulty_follow_the_brief() -> None:
    assert _tables("a dungeon crawl collecting rubies")["theme.json"]["gem_name"] == "rubies"
    assert _tables("underwater reef maze")["theme.json"]["hero"] in ("Diver", "Submarine", "Mermaid")
    easy = _tables("an easy relaxing maze")
    hard = _tables("a hard brutal maze")
    assert len(easy["mazes.json"]["mazes"]) < len(hard["mazes.json"]["mazes"]) == 3
    assert easy["rules.json"]["lives"] > hard["rules.json"]["lives"] - 1
    assert easy["rules.json"]["enemy_step_ms"] > hard["rules.json"]["enemy_step_ms"]


def _planted(rows: list[str], enemies: list[dict[str, Any]] | None = None, time_ms: int = 60_000) -> dict[str, Any]:
    tables = _tables("a maze")
    tables["mazes.json"]["mazes"][0] = {"name": "Planted", "rows": rows, "time_ms": time_ms, "enemies": enemies or []}
    return tables


OPEN = ["#########",
        "#P.....G#",
        "#.#####.#",
        "#...G..E#",
        "#########"]


def test_checks_pass_a_fair_hand_made_maze() -> None:
    assert _passed(_planted(OPEN, [{"path": [[5, 3], [6, 3]]}])) == {"maze_solvable": True, "maze_fair": True}


def test_checks_fail_a_walled_off_gem() -> None:
    rows = ["#########",
            "#P.....E#",
            "#.#######",
            "#...#G..#",
            "#########"]
    tables = _planted(rows)
    assert _passed(tables)["maze_solvable"] is False
    assert _findings(tables, "maze_solvable") == [
        "mazes.json mazes[0] (Planted): gem at (5, 3) cannot be reached from the start (1, 1) without crossing a "
        "wall or hazard"]


def test_checks_fail_a_gem_or_exit_behind_hazards() -> None:
    rows = ["#########",
            "#P....XE#",
            "#.#####.#",
            "#..G...X#",
            "#########"]
    tables = _planted(rows)
    assert _passed(tables)["maze_solvable"] is False
    assert any("the exit at (7, 1)" in f for f in _findings(tables, "maze_solvable"))


def test_checks_fail_unfair_mazes() -> None:
    walled_start = ["#########", "#P#....G#", "#.#.###.#", "#...G..E#", "#########"]
    assert any("right of the start" in f for f in _findings(_planted(walled_start), "maze_fair"))
    near_start = _planted(OPEN, [{"path": [[2, 1], [3, 1]]}])
    assert any("within 2 cells of the start" in f for f in _findings(near_start, "maze_fair"))
    jumpy = _planted(OPEN, [{"path": [[5, 3], [7, 1]]}])
    assert any("not next to the previous cell" in f for f in _findings(jumpy, "maze_fair"))
    in_wall = _planted(OPEN, [{"path": [[4, 2]]}])
    assert any("is a wall or hazard" in f for f in _findings(in_wall, "maze_fair"))
    rushed = _planted(OPEN, time_ms=5_000)  # the 12-move tour takes 4.2 s at a human pace
    assert any("too short" in f for f in _findings(rushed, "maze_fair"))


def test_checks_report_unreadable_mazes_instead_of_crashing() -> None:
    for rows in (["#####", "#P.G#", "#####"] + ["#"], ["#####", "#..G#", "#.E.#", "#####", "#####"],
                 ["#####", "#P.?#", "#E.G#", "#####", "#####"], "nope"):
        res = GENRE.check_tables(_planted(rows))  # type: ignore[arg-type]
        assert [r["passed"] for r in res] == [False, False], rows
    assert [r["passed"] for r in GENRE.check_tables({"mazes.json": {}})] == [False, False]


def _state(player: tuple[int, int], gems: list[tuple[int, int]], enemies: list[tuple[int, int]] = (),  # type: ignore[assignment]
           exit_open: bool = False) -> dict[str, Any]:
    return {"player": {"x": player[0], "y": player[1]}, "gems_left": [{"x": x, "y": y} for x, y in gems],
            "enemies": [{"x": x, "y": y} for x, y in enemies], "exit_open": exit_open, "level": 0}


def test_probe_walks_to_the_nearest_gem_then_the_exit() -> None:
    tables = _planted(OPEN)
    assert PROBE.win_action(_state((1, 1), [(7, 1), (4, 3)]), MOVES, tables) == "down"  # (4, 3) is 5 away, (7, 1) 6
    assert PROBE.win_action(_state((6, 3), [], exit_open=True), MOVES, tables) == "right"
    assert PROBE.win_action(_state((1, 1), [(7, 1)]), {"up": {}}, tables) is None
    assert PROBE.win_action(_state((1, 1), [(7, 1)]) | {"level": 7}, MOVES, tables) is None


def test_probe_keeps_clear_of_hazards_and_enemies() -> None:
    rows = ["#########",
            "#P.X...G#",
            "#.#.###.#",
            "#.......#",
            "#########"]
    tables = _planted(rows)
    assert PROBE.win_action(_state((2, 1), [(7, 1)]), MOVES, tables) == "left"  # around the hazard, not through it
    patrol = _planted(OPEN, [{"path": [[1, 3], [2, 3], [3, 3], [4, 3], [5, 3]]}])
    step = PROBE.win_action(_state((1, 2), [(4, 3)], enemies=[(2, 3)]), MOVES, patrol)
    assert step == "up"  # an enemy next door: back off rather than walk into its patrol
    guarded = _planted(OPEN, [{"path": [[2, 3], [3, 3], [4, 3], [5, 3]]}])
    # the gem next door lies on the enemy's beat: wait for it to walk away
    assert PROBE.win_action(_state((1, 3), [(2, 3)], enemies=[(3, 3)]), MOVES, guarded) == ("wait", PROBE.SHORT_WAIT)
    assert PROBE.win_action(_state((1, 3), [(2, 3)], enemies=[(5, 3)]), MOVES, guarded) == "right"


def test_lose_probe_walks_into_a_hazard_or_waits() -> None:
    rows = ["#########",
            "#P.X...G#",
            "#.#.###.#",
            "#......E#",
            "#########"]
    assert PROBE.lose_action(_state((1, 1), [(7, 1)]), MOVES, _planted(rows)) == "right"
    assert PROBE.lose_action(_state((1, 1), [(7, 1)]), MOVES, _planted(OPEN)) == ("wait", PROBE.LONG_WAIT)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is part of the toolchain")
@pytest.mark.parametrize("brief", ["hard pac-man style maze with ghosts", "a dungeon crawl maze: collect every ruby"])
def test_python_replay_matches_state_js(brief: str) -> None:
    """The builder trusts mazelib.play: replaying its recorded actions through state.js must end the same way."""
    tables = _tables(brief)
    record: list[Any] = []

    def policy(st: dict[str, Any]) -> Any:
        act = PROBE.win_action(st, MOVES, tables)
        record.append(act if isinstance(act, list | tuple) else [act, 6])
        return act

    res = LIB.play(tables, policy, 6, 3, 700)
    state_js = GENRE.template_dir / "src" / "state.js"
    script = f"""import {{ createState, move, tick, snapshot }} from {json.dumps(state_js.as_uri())};
const t = {json.dumps({"theme": tables["theme.json"], "mazes": tables["mazes.json"], "rules": tables["rules.json"]})};
const st = createState(t);
const F = 1000 / 60;
for (let i = 0; i < 3; i++) tick(st, F);
for (const [name, frames] of {json.dumps(record)}) {{
  let n = frames;
  if (name !== 'wait') {{ move(st, name); n += 1; }}
  for (let i = 0; i < n && st.outcome === 'running'; i++) tick(st, F);
  if (st.outcome !== 'running') break;
}}
console.log(JSON.stringify(snapshot(st)));"""
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    snap = json.loads(out.stdout)
    assert (snap["outcome"], snap["lives"]) == (res.outcome, tables["rules.json"]["lives"] - res.hits) == (
        "won", tables["rules.json"]["lives"])
    assert snap["level"] == len(tables["mazes.json"]["mazes"]) - 1


@pytest.mark.skipif(shutil.which("node") is None, reason="node is part of the toolchain")
def test_enemy_cells_match_state_js() -> None:
    paths = [[[1, 1]], [[1, 1], [2, 1]], [[3, 1], [3, 2], [3, 3], [4, 3]]]
    times = [0, 1, 499, 500, 501, 999, 1000, 2500, 3100, 12345.6]
    state_js = GENRE.template_dir / "src" / "state.js"
    script = (f"import {{ enemyCell }} from {json.dumps(state_js.as_uri())};\n"
              f"console.log(JSON.stringify({json.dumps(paths)}.map((p) => {json.dumps(times)}.map((ms) => "
              "{ const c = enemyCell({ path: p }, ms, 500); return [c.x, c.y]; }))));")
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [[list(LIB.enemy_cell(p, ms, 500)) for ms in times] for p in paths]


def test_hostile_tables_neither_hang_nor_crash() -> None:
    huge = ["P" + "." * 2000 + "E"] * 3000
    assert [r["passed"] for r in GENRE.check_tables(_planted(huge))] == [False, False]
    odd = _planted(OPEN, [{"path": [["a", 1], [None]]}, {"path": "x"}, "y"])  # type: ignore[list-item]
    assert any("not [x, y] cells" in f for f in _findings(odd, "maze_fair"))
    for rows in ([1, 2, 3], ["#P#", "#E##"], "rows"):
        assert PROBE.win_action(_state((1, 1), [(7, 1)]), MOVES, _planted(rows)) is None  # type: ignore[arg-type]
        assert PROBE.lose_action(_state((1, 1), []), MOVES, _planted(rows)) == ("wait", PROBE.LONG_WAIT)  # type: ignore[arg-type]
    weird = _planted(OPEN, [{"path": [[1, "z"], 5]}])
    assert PROBE.win_action(_state((1, 1), [(7, 1)], enemies=[(5, 3)]), MOVES, weird) in ("down", "right")
