"""The platformer genre's builder, data checks and physics mirror (capability_packs/phaser/genres/platformer).

Real components: the genre loaded by tier2's own pack loader, jsonschema, and node running the template's
physics.js to prove sim.py computes the very same numbers.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tier2.packs import load_pack

ROOT = Path(__file__).resolve().parents[3]
GENRE = load_pack(ROOT / "capability_packs", "phaser").genre("platformer")
CHECKS = GENRE.module("checks")
BUILDER = GENRE.module("builder")
ROUTES = CHECKS.routes if CHECKS is not None else None
SIM = ROUTES.sim if ROUTES is not None else None

BRIEFS = [
    "a platformer where a fox jumps over spikes in the forest",
    "hard space platformer",
    "easy candy jumping game",
    "a penguin slides across icy platforms collecting snowflakes",
    "ninja runner on neon rooftops, hard",
    "a relaxing jumping game for kids with a bunny",
    "mario style platformer with coins and pits",
    "a knight jumps through the castle avoiding spikes",
    "volcano escape: jump over lava pits and collect embers",
    "pirate treasure island platformer",
    "dwarf miner jumps across cave ledges collecting gems",
    "desert temple runner with scarabs",
    "a challenging platformer with many spikes",
    "a robot hopping between planets",
    "tiny frog leaps across lily pads in the swamp",
    "cozy garden platformer with a squirrel collecting acorns",
    "jump between skyscraper rooftops",
    "a slime blob bouncing through a dungeon with double-jump",
    "brutal hardcore platformer",
    "platform game about a bee collecting honey",
]
EDGE_BRIEFS = ["", "ab", "🧪🧪🧪 jump", "魔法のジャンプゲーム", "a" * 5000, "platform spikes ledge " * 300]


def build(brief: str) -> dict[str, Any]:
    return GENRE.build_tables(brief)


@pytest.fixture(scope="module")
def built() -> dict[str, dict[str, Any]]:
    return {b: build(b) for b in BRIEFS}


def test_builder_is_deterministic() -> None:
    held = BUILDER._held.__wrapped__  # type: ignore[union-attr]  # uncached: the tables made again from the brief
    for brief in BRIEFS[:3]:
        assert json.dumps(held(brief), sort_keys=True) == json.dumps(build(brief), sort_keys=True)


@pytest.mark.slow  # builds the twenty briefs (the latch split played on the mirror for each)
def test_different_briefs_make_different_games(built: dict[str, dict[str, Any]]) -> None:
    titles = Counter(t["theme.json"]["title"] for t in built.values())
    assert len(titles) >= 16, titles
    assert len({json.dumps(t["theme.json"]["palette"]) for t in built.values()}) == len(BRIEFS)
    assert len({json.dumps(t["physics.json"], sort_keys=True) for t in built.values()}) >= 18
    assert len({json.dumps(t["levels.json"]["levels"][0]["platforms"]) for t in built.values()}) == len(BRIEFS)
    settings = {b: t["theme.json"]["coin_name"] for b, t in built.items()}
    assert settings[BRIEFS[3]] in ("snowflakes", "icicles", "mittens")
    assert settings[BRIEFS[10]] in ("gems", "crystals", "nuggets")


@pytest.mark.slow  # builds the twenty briefs (the latch split played on the mirror for each)
def test_difficulty_words_shape_the_game(built: dict[str, dict[str, Any]]) -> None:
    easy, hard = built["easy candy jumping game"], built["brutal hardcore platformer"]
    assert easy["levels.json"]["lives"] > hard["levels.json"]["lives"]
    assert len(easy["levels.json"]["levels"]) < len(hard["levels.json"]["levels"]) == 3
    assert easy["physics.json"]["coyote_ms"] > hard["physics.json"]["coyote_ms"]
    assert built[BRIEFS[17]]["physics.json"]["air_jumps"] == 1
    assert built[BRIEFS[0]]["physics.json"]["air_jumps"] == 0


@pytest.mark.slow  # builds the twenty briefs (the latch split played on the mirror for each)
def test_every_built_table_set_matches_the_schemas_and_passes_the_checks(built: dict[str, dict[str, Any]]) -> None:
    for brief, tables in [*built.items(), *((b, build(b)) for b in EDGE_BRIEFS)]:
        assert sorted(tables) == sorted(GENRE.spec.data_tables)
        for name in GENRE.spec.data_tables:
            jsonschema.Draft202012Validator(GENRE.schema(name)).validate(tables[name])
        results = GENRE.check_tables(tables)
        assert [r["id"] for r in results] == ["solvable", "coins", "time_limits"]
        assert all(r["passed"] for r in results), (brief[:40], [r["findings"] for r in results])
        for lv in tables["levels.json"]["levels"]:
            xs = sorted(lv["platforms"], key=lambda p: p["x"])
            assert any(b["x"] > a["x"] + a["w"] for a, b in zip(xs, xs[1:], strict=False)), "every level has a pit"


def _with_gap(tables: dict[str, Any], level: int, extra: float) -> dict[str, Any]:
    """A copy whose first pit of ``level`` is ``extra`` px wider (everything after it moves right)."""
    out = copy.deepcopy(tables)
    lv = out["levels.json"]["levels"][level]
    ps = sorted(lv["platforms"], key=lambda p: p["x"])
    cut = next(a["x"] + a["w"] for a, b in zip(ps, ps[1:], strict=False) if b["x"] > a["x"] + a["w"])
    for key in ("platforms", "hazards", "coins"):
        for o in lv[key]:
            if o["x"] >= cut:
                o["x"] += extra
    lv["exit"]["x"] += extra
    lv["width"] += extra
    lv["time_limit_ms"] += 60_000
    return out


def _result(tables: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(r for r in GENRE.check_tables(tables) if r["id"] == cid)


def test_a_planted_unjumpable_gap_fails_solvable_and_names_the_numbers() -> None:
    tables = build(BRIEFS[0])
    assert _result(_with_gap(tables, 0, 16), "solvable")["passed"], "a slightly wider pit is still jumpable"
    bad = _result(_with_gap(tables, 0, 260), "solvable")
    assert not bad["passed"]
    msg = bad["findings"][0]
    assert msg.startswith("levels.json levels[0]")
    assert "px gap" in msg and f"gravity {tables['physics.json']['gravity']}" in msg and "clears at most" in msg


def test_solvable_follows_the_physics_numbers() -> None:
    tables = build(BRIEFS[6])
    assert _result(tables, "solvable")["passed"]
    tables["physics.json"]["jump_velocity"] = 200  # a hop: no gap and no step is within reach
    assert not _result(tables, "solvable")["passed"]


def test_a_step_up_too_high_fails() -> None:
    tables = copy.deepcopy(build(BRIEFS[2]))
    lv = tables["levels.json"]["levels"][0]
    first = min(lv["platforms"], key=lambda p: p["x"])
    wall = {"x": first["x"] + first["w"] - 40, "y": first["y"] - 400, "w": 40, "h": 400}
    lv["platforms"].append(wall)  # a 400 px wall at the end of the start ground
    bad = _result(tables, "solvable")
    assert not bad["passed"] and "up" in bad["findings"][0]


def test_start_off_the_ground_short_time_and_malformed_tables_fail() -> None:
    tables = copy.deepcopy(build(BRIEFS[1]))
    tables["levels.json"]["levels"][0]["start"]["y"] -= 100
    assert "not on safe ground" in _result(tables, "solvable")["findings"][0]
    tables = copy.deepcopy(build(BRIEFS[1]))
    tables["levels.json"]["levels"][1]["time_limit_ms"] = 10_000
    timing = _result(tables, "time_limits")
    assert not timing["passed"] and "levels[1]" in timing["findings"][0]
    for broken in ({}, {"levels.json": {"levels": "x"}, "physics.json": {}}, {"levels.json": [], "physics.json": 3}):
        res = GENRE.check_tables(broken)
        assert len(res) == 1 and not res[0]["passed"] and "malformed" in res[0]["summary"]


def test_a_level_too_dense_to_analyse_fails_instead_of_running_for_minutes() -> None:
    tables = copy.deepcopy(build(BRIEFS[1]))
    lv = tables["levels.json"]["levels"][0]
    lv["platforms"] += [{"x": 400 + (i % 19) * 100, "y": 60 + (i // 19) * 50 % 400, "w": 50, "h": 16}
                        for i in range(200 - len(lv["platforms"]))]
    bad = _result(tables, "solvable")
    assert not bad["passed"] and "too dense to verify" in bad["findings"][0]


def test_coins_out_of_reach_fail() -> None:
    tables = build(BRIEFS[4])
    tables["levels.json"]["levels"][0]["coins"].append({"x": 200, "y": 5})
    bad = _result(tables, "coins")
    assert not bad["passed"] and "(200, 5)" in bad["findings"][0]


# --- the Python physics is the game's physics ----------------------------------------------------------------------

_NODE_FLIGHT = """
import { stepBody, bodyAtStart, bodyOutcome } from '%s';
const [phys, level, inputs] = JSON.parse(process.argv[1]);
const b = bodyAtStart(level, phys);
const out = [];
for (const [left, right, jump] of inputs) {
  stepBody(b, { left, right, jump }, level.platforms, level.width, phys);
  out.push([b.x, b.y, b.vx, b.vy, b.on_ground, b.coyote_ms, b.buffer_ms, b.air_jumps, bodyOutcome(b, level, phys)]);
}
console.log(JSON.stringify(out));
"""


@pytest.mark.parametrize("air_jumps", [0, 1])
def test_sim_py_computes_the_same_numbers_as_physics_js(air_jumps: int) -> None:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH"
    tables = build(BRIEFS[8])
    phys = dict(tables["physics.json"], air_jumps=air_jumps)
    level = tables["levels.json"]["levels"][0]
    # run, jump, steer, a walk off a ledge, a double-jump press, a wall, a pit: every branch of the step
    inputs = ([(False, True, False)] * 50 + [(False, True, True)] * 3 + [(False, True, False)] * 20
              + [(False, False, True)] + [(True, False, False)] * 30 + [(False, True, False)] * 400)
    js = GENRE.template_dir / "src" / "physics.js"
    run = subprocess.run([node, "--input-type=module", "-e", _NODE_FLIGHT % js.as_uri(),
                          json.dumps([phys, level, inputs])], capture_output=True, text=True, timeout=60, check=True)
    expected = json.loads(run.stdout)
    ph, lv = SIM.phys_from(phys), SIM.level_from(tables["levels.json"], 0)
    b = SIM.body_at_start(lv, ph)
    got = []
    for left, right, jump in inputs:
        SIM.step(b, left, right, jump, lv.platforms, lv.width, ph)
        got.append([b.x, b.y, b.vx, b.vy, b.on_ground, b.coyote_ms, b.buffer_ms, b.air_jumps, SIM.outcome(b, lv, ph)])
    assert got == expected  # exactly: same float operations in the same order
    assert {row[4] for row in got} == {True, False} and any(row[8] for row in got)
