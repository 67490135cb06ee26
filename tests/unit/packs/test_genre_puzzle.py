"""The puzzle genre: builder determinism and variety, schemas, checks.py (and planted failures), probe behaviour."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import jsonschema
import pytest

from tier2.packs import load_pack

ROOT = Path(__file__).resolve().parents[3]
GENRE = load_pack(ROOT / "capability_packs", "phaser").genre("puzzle")


def _module(name: Literal["builder", "probe"]) -> ModuleType:
    mod = GENRE.module(name)
    assert mod is not None, name
    return mod


BUILDER, PROBE = _module("builder"), _module("probe")
ACTIONS = {a: {"keys": ["x"]} for a in ("start", "up", "down", "left", "right", "rotate", "swap", "abandon")}

BRIEFS = [
    "a relaxing candy match-3 puzzle", "hard jewel swapping game in a mine", "match three fruits on the farm",
    "space puzzle with planets and comets", "a grid of coloured blocks", "Make me a puzzle",
    "An underwater reef puzzle with shells and coral", "a cozy flower garden match-3 for kids",
    "challenging rune matching puzzle for wizards", "gem swap", "match-three sweets at the fair",
    "a difficult galaxy tile puzzle", "easy fruit swapping in an orchard", "treasure vault of jewels",
    "pirate ocean match game", "blocks blocks blocks", "magic potion tiles", "a puzzle about dinosaurs",
    "Ünïcödé crème brûlée candy match-3 ☕", "", "x" * 5000,
]
# 5×5, 4 kinds, no line; swapping (2,2) down makes a line (as in tests/state.test.mjs)
LAYOUT = [[1, 3, 0, 1, 3], [2, 1, 2, 3, 0], [0, 0, 1, 2, 2], [3, 2, 0, 1, 3], [1, 3, 2, 0, 1]]


def _template_tables() -> dict[str, Any]:
    return {t: json.loads((GENRE.template_dir / "data" / t).read_text()) for t in GENRE.spec.data_tables}


def _checks(tables: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in GENRE.check_tables(tables)}


@pytest.fixture(scope="module")
def built() -> dict[str, dict[str, Any]]:
    return {b: GENRE.build_tables(b) for b in BRIEFS}


def test_builder_varies_with_the_brief(built: dict[str, dict[str, Any]]) -> None:
    titles = {t["theme.json"]["title"] for t in built.values()}
    palettes = {t["theme.json"]["palette"]["background"] for t in built.values()}
    seeds = {t["board.json"]["seed"] for t in built.values()}
    numbers = {json.dumps(t["goals.json"], sort_keys=True) for t in built.values()}
    tile_sets = {t["board.json"]["kinds"][0]["name"] for t in built.values()}
    assert len(titles) >= len(BRIEFS) - 3, titles
    assert len(palettes) >= len(BRIEFS) - 2
    assert len(seeds) == len(BRIEFS)
    assert len(numbers) >= len(BRIEFS) - 2
    assert len(tile_sets) >= 6, tile_sets
    assert built["a relaxing candy match-3 puzzle"]["board.json"]["kinds"][0]["name"] == "Cherry Drop"
    assert built["treasure vault of jewels"]["board.json"]["kinds"][0]["name"] == "Ruby"


def test_difficulty_from_the_brief(built: dict[str, dict[str, Any]]) -> None:
    easy = built["easy fruit swapping in an orchard"]
    hard = built["challenging rune matching puzzle for wizards"]
    assert len(easy["board.json"]["kinds"]) == 5 and easy["goals.json"]["moves"] >= 24
    assert len(hard["board.json"]["kinds"]) >= 6 and hard["goals.json"]["moves"] <= 18
    ratio = {}
    for name, t in (("easy", easy), ("hard", hard)):
        full = PROBE.reference_play(t, target=10**9)["score"]
        ratio[name] = t["goals.json"]["target_score"] / full
    assert ratio["easy"] < ratio["hard"]


def test_every_built_table_set_validates_and_passes_the_checks(built: dict[str, dict[str, Any]]) -> None:
    tables_by_source = {"template": _template_tables(), **built}
    for brief, tables in tables_by_source.items():
        assert set(tables) == set(GENRE.spec.data_tables)
        for name in GENRE.spec.data_tables:
            jsonschema.Draft202012Validator(GENRE.schemas[name]).validate(tables[name])
        results = GENRE.check_tables(tables)
        assert [r["id"] for r in results] == ["board_start", "target_reachable", "losable", "tiles_distinct"]
        assert all(r["passed"] for r in results), (brief[:40], [r["summary"] for r in results if not r["passed"]])
        json.dumps(results)


def test_the_probe_wins_and_loses_every_built_game_within_its_bounds(built: dict[str, dict[str, Any]]) -> None:
    bounds = GENRE.spec.probe
    for brief, tables in {"template": _template_tables(), **built}.items():
        win = PROBE.reference_play(tables, matching=True, max_actions=bounds.max_win_actions)
        lose = PROBE.reference_play(tables, matching=False, max_actions=bounds.max_lose_actions)
        assert win["outcome"] == "won", (brief[:40], win["score"], tables["goals.json"])
        assert win["actions"] <= BUILDER.WIN_ACTION_BUDGET
        assert lose["outcome"] == "lost" and lose["score"] == 0, (brief[:40], lose)


def test_checks_fail_on_a_board_with_a_ready_line_or_no_matching_swap() -> None:
    tables = _template_tables()
    tables["board.json"] = {**tables["board.json"], "size": 5, "layout": copy.deepcopy(LAYOUT)}
    assert _checks(tables)["board_start"]["passed"]
    lined = copy.deepcopy(tables)
    lined["board.json"]["layout"][0][:3] = [2, 2, 2]
    res = _checks(lined)["board_start"]
    assert not res["passed"] and "starts with a line of 3" in res["findings"][0]
    stuck = copy.deepcopy(tables)
    stuck["board.json"]["layout"] = [[(x + 2 * y) % 4 for x in range(5)] for y in range(5)]
    res = _checks(stuck)
    assert not res["board_start"]["passed"] and "no swap makes a line" in res["board_start"]["findings"][0]
    assert not res["target_reachable"]["passed"], "no matching swap: moves × 3 × points guarantees nothing"


def test_checks_fail_on_an_unreachable_target() -> None:
    tables = _template_tables()
    goals = tables["goals.json"]
    full = PROBE.reference_play(tables, target=10**9)["score"]
    goals["target_score"] = max(full, goals["moves"] * 3 * goals["points_per_tile"]) + goals["points_per_tile"]
    res = _checks(tables)["target_reachable"]
    assert not res["passed"] and "out of reach" in res["summary"]
    goals["target_score"] = full  # exactly what the reference play scores with every move
    assert _checks(tables)["target_reachable"]["passed"]


def test_checks_fail_when_tiles_look_alike_or_tables_are_malformed() -> None:
    tables = _template_tables()
    kinds = tables["board.json"]["kinds"]
    kinds[1] = {**kinds[1], "shape": kinds[0]["shape"], "color": kinds[0]["color"].upper()}
    res = _checks(tables)["tiles_distinct"]
    assert not res["passed"] and len(res["findings"]) == 2
    for broken in ({**tables["board.json"], "size": 1000}, {**tables["board.json"], "kinds": "many"},
                   {k: v for k, v in tables["board.json"].items() if k != "seed"}):
        results = GENRE.check_tables({**tables, "board.json": broken})
        assert len(results) == 4 and not any(r["passed"] for r in results)
    assert not any(r["passed"] for r in GENRE.check_tables({"theme.json": {}}))


def _state(grid: list[list[int]], cursor: tuple[int, int], facing: str = "right", **extra: Any) -> dict[str, Any]:
    rules = PROBE.rules
    sel = rules.partner(cursor, facing, len(grid))
    return {"scene": "Play", "outcome": "running", "grid": grid, "cursor": {"x": cursor[0], "y": cursor[1]},
            "facing": rules.effective_facing(cursor, facing, len(grid)), "selected": {"x": sel[0], "y": sel[1]},
            **extra}


def test_probe_win_moves_to_the_nearest_matching_swap_turns_and_swaps() -> None:
    # LAYOUT's matching swaps include (2,2)↔(2,3); from the centre, facing right, the probe turns down and swaps
    grid = copy.deepcopy(LAYOUT)
    assert PROBE.rules.valid_swaps(grid)
    assert PROBE.win_action(_state(grid, (2, 2)), ACTIONS, {}) == "rotate"
    assert PROBE.win_action(_state(grid, (2, 2), "down"), ACTIONS, {}) == "swap"
    assert PROBE.win_action(_state(grid, (0, 4)), ACTIONS, {}) in ("right", "up")
    assert grid == LAYOUT, "the probe leaves the snapshot's grid as it found it"
    # walk the model from a far corner: moves only, then turns, then one swap that matches
    steps, pos, facing = [], (4, 4), "right"
    for _ in range(12):
        name = PROBE.win_action(_state(grid, pos, facing), ACTIONS, {})
        steps.append(name)
        if name == "swap":
            break
        if name == "rotate":
            facing = PROBE.rules._rotate(pos, facing, 5)
        else:
            dx, dy = PROBE.rules.STEP[name]
            pos = (pos[0] + dx, pos[1] + dy)
    assert steps[-1] == "swap"
    assert PROBE.rules.swap_matches(grid, pos, PROBE.rules.partner(pos, facing, 5))


def test_probe_lose_swaps_what_matches_nothing() -> None:
    grid = copy.deepcopy(LAYOUT)
    assert not PROBE.rules.swap_matches(grid, (0, 0), (1, 0))
    assert PROBE.lose_action(_state(grid, (0, 0)), ACTIONS, {}) == "swap"
    name = PROBE.lose_action(_state(grid, (2, 2), "down"), ACTIONS, {})
    assert name == "rotate", "(2,2)↔(2,3) matches: the lose probe turns away from it"


def test_probe_gives_up_when_over_or_without_the_actions() -> None:
    grid = copy.deepcopy(LAYOUT)
    assert PROBE.win_action({**_state(grid, (2, 2)), "outcome": "won"}, ACTIONS, {}) is None
    assert PROBE.win_action(_state(grid, (2, 2)), {"start": {}}, {}) is None
    assert PROBE.lose_action({"outcome": "running"}, ACTIONS, {}) is None
    assert PROBE.win_action({**_state(grid, (2, 2)), "grid": "nope"}, ACTIONS, {}) is None
