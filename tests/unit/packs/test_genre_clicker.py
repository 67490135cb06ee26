"""The clicker genre: builder determinism and variety, tables valid against the schemas and passing checks.py,
checks.py failing planted unwinnable / idle-winnable economies, the probe's decisions, JS/Python price parity."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import jsonschema
import pytest

from tests.markers import fast_first
from tier2.packs import load_pack

ROOT = Path(__file__).resolve().parents[3]
GENRE = load_pack(ROOT / "capability_packs", "phaser").genre("clicker")


def _module(name: Literal["builder", "probe", "checks"]) -> ModuleType:
    mod = GENRE.module(name)
    assert mod is not None, name
    return mod


BUILDER, CHECKS, PROBE = _module("builder"), _module("checks"), _module("probe")

BRIEFS = [
    "a cookie clicker where grandmas bake cookies for me", "hard idle mining game with pickaxes and dwarves",
    "easy relaxing space tapping game about stardust", "an incremental fishing clicker on a lake",
    "a wizard mana clicker with upgrades", "tap tap tap", "prestige incremental with many upgrades",
    "a coffee shop idle game: brew lattes, hire baristas", "frantic clicker about harvesting pumpkins",
    "cozy garden clicker with carrots", "cookie", "an idle game", "a clicker set in a neon city at night, hard",
    "clicking game about collecting gold nuggets in a cave", "a tapper about alien planets and rockets",
    "Ünïcödé clicker ☕ with crème brûlée", "", "x" * 5000, "🍪🍪🍪 clicker", "a brutal incremental about dragons",
]


def _tables(brief: str) -> dict[str, Any]:
    return GENRE.build_tables(brief)


def _passed(tables: dict[str, Any]) -> dict[str, bool]:
    return {r["id"]: r["passed"] for r in GENRE.check_tables(tables)}


@pytest.mark.parametrize("brief", fast_first(BRIEFS, 6))
def test_built_tables_validate_and_pass_checks(brief: str) -> None:
    tables = _tables(brief)
    assert set(tables) == set(GENRE.spec.data_tables)
    for name, schema in GENRE.schemas.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.validate(tables[name], schema, cls=jsonschema.Draft202012Validator)
    assert _passed(tables) == {"goal_reachable": True, "idle_not_enough": True}
    assert json.dumps(tables, sort_keys=True) == json.dumps(_tables(brief), sort_keys=True)
    eco = tables["economy.json"]
    assert eco["goal"] > eco["start_currency"] and eco["time_limit_ms"] >= 10_000
    pal = tables["theme.json"]["palette"]
    for key in ("accent", "good", "bad", "text"):
        assert BUILDER.contrast(pal[key], pal["panel"]) >= 4.5, key
        assert BUILDER.contrast(pal[key], pal["background"]) >= 4.5, key


def test_different_briefs_make_different_games() -> None:
    built = [_tables(b) for b in BRIEFS]
    assert len({t["theme.json"]["title"] for t in built}) >= 15
    assert len({t["economy.json"]["goal"] for t in built}) >= 12
    assert len({tuple(u["name"] for u in t["upgrades.json"]["upgrades"]) for t in built}) >= 15
    assert len({t["theme.json"]["palette"]["accent"] for t in built}) == len(built)
    assert len({t["theme.json"]["currency"] for t in built}) >= 8


def test_domain_and_difficulty_follow_the_brief() -> None:
    cookie = _tables("a cookie clicker where grandmas bake cookies for me")
    assert cookie["theme.json"]["title"].startswith(("Cookie", "Grandma", "Bake"))
    assert cookie["theme.json"]["currency"] == "cookies"  # the brief's word, not a synonym
    mining = _tables("clicking game about collecting gold nuggets in a cave")
    assert mining["theme.json"]["button_label"] in ("Dig!", "Mine!", "Strike!")
    easy = _tables("an easy relaxing cookie clicker")["economy.json"]
    hard = _tables("a hard brutal cookie clicker")["economy.json"]
    assert easy["time_limit_ms"] > hard["time_limit_ms"]
    easy_run = CHECKS.simulate(_tables("an easy relaxing cookie clicker"), CHECKS.HUMAN_CLICKS_PER_S)
    hard_run = CHECKS.simulate(_tables("a hard brutal cookie clicker"), CHECKS.HUMAN_CLICKS_PER_S)
    assert easy_run.time_ms / easy["time_limit_ms"] < hard_run.time_ms / hard["time_limit_ms"]


def test_checks_fail_an_unreachable_goal() -> None:
    tables = _tables("a cookie clicker")
    tables["economy.json"]["goal"] *= 50
    results = {r["id"]: r for r in GENRE.check_tables(tables)}
    assert results["goal_reachable"]["passed"] is False
    assert "is not reached" in results["goal_reachable"]["findings"][0]
    assert results["idle_not_enough"]["passed"] is True


def test_checks_fail_a_goal_reached_by_idling() -> None:
    tables = _tables("a cookie clicker")
    tables["economy.json"]["start_currency"] = 10 * tables["economy.json"]["goal"] - 1
    tables["economy.json"]["goal"] = 10 * tables["economy.json"]["goal"]
    results = {r["id"]: r for r in GENRE.check_tables(tables)}
    assert results["idle_not_enough"]["passed"] is False
    assert "without a single click" in results["idle_not_enough"]["findings"][0]


def test_checks_fail_a_goal_reached_only_late() -> None:
    tables = _tables("a cookie clicker")
    run = CHECKS.simulate(tables, CHECKS.HUMAN_CLICKS_PER_S)
    tables["economy.json"]["time_limit_ms"] = int(run.time_ms / 0.95)  # reached, but at 95 % of the limit
    assert _passed(tables)["goal_reachable"] is False


def test_checks_report_broken_tables_instead_of_crashing() -> None:
    tables = _tables("a cookie clicker")
    broken = copy.deepcopy(tables)
    broken["upgrades.json"] = {"upgrades": "nope"}
    res = GENRE.check_tables(broken)
    assert [r["passed"] for r in res] == [False, False]
    broken = copy.deepcopy(tables)
    del broken["economy.json"]["goal"]
    assert any("goal" in f for r in GENRE.check_tables(broken) for f in r["findings"])


TABLES = {"upgrades.json": {"upgrades": [
    {"id": "tap", "name": "Tap", "cost": 10, "cost_growth": 1.5, "per_click": 1, "per_second": 0},
    {"id": "auto", "name": "Auto", "cost": 30, "cost_growth": 1.2, "per_click": 0, "per_second": 10},
]}}
ACTIONS: dict[str, Any] = {"start": {}, "click": {}, "buy_tap": {}, "buy_auto": {}, "abandon": {}}


def _state(**kw: Any) -> dict[str, Any]:
    base = {"currency": 0, "goal": 1000, "per_click": 1, "per_second": 0, "upgrades": {"tap": 0, "auto": 0},
            "time_left_ms": 60_000}
    return base | kw


def test_probe_clicks_when_nothing_is_affordable() -> None:
    assert PROBE.win_action(_state(currency=9), ACTIONS, TABLES) == "click"


def test_probe_buys_the_fastest_payback() -> None:
    # tap: 10 for +1/click = +5/s at the probe's rate (payback 2 s); auto: 30 for +10/s (payback 3 s)
    assert PROBE.win_action(_state(currency=40), ACTIONS, TABLES) == "buy_tap"
    # tap at level 3 costs 35 (10 → 15 → 23 → 35): auto is now the faster payback
    assert PROBE.upgrade_cost(TABLES["upgrades.json"]["upgrades"][0], 3) == 35
    st = _state(currency=40, upgrades={"tap": 3, "auto": 0})
    assert PROBE.win_action(st, ACTIONS, TABLES) == "buy_auto"


def test_probe_stops_buying_next_to_the_goal() -> None:
    assert PROBE.win_action(_state(currency=995, goal=1000), ACTIONS, TABLES) == "click"


def test_probe_needs_the_actions() -> None:
    assert PROBE.win_action(_state(currency=40), {"click": {}}, TABLES) == "click"
    assert PROBE.win_action(_state(), {"start": {}}, TABLES) is None


def test_lose_probe_waits() -> None:
    assert PROBE.lose_action(_state(), ACTIONS, TABLES) == ("wait", PROBE.WAIT_FRAMES)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is part of the toolchain")
def test_python_prices_match_state_js() -> None:
    """checks.py simulates with probe.upgrade_cost: it must give the very integers the game charges."""
    ups = [u for b in BRIEFS[:6] for u in _tables(b)["upgrades.json"]["upgrades"]]
    ups += [{"cost": 7.3, "cost_growth": 1.07}, {"cost": 10, "cost_growth": 1.1}, {"cost": 3, "cost_growth": 2.5}]
    state_js = GENRE.template_dir / "src" / "state.js"
    script = (f"import {{ upgradeCost }} from {json.dumps(state_js.as_uri())};\n"
              f"const ups = {json.dumps(ups)};\n"
              "console.log(JSON.stringify(ups.map((u) => Array.from({length: 40}, (_, l) => upgradeCost(u, l)))));")
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    js = json.loads(out.stdout)
    py = [[PROBE.upgrade_cost(u, lv) for lv in range(40)] for u in ups]
    for js_row, py_row in zip(js, py, strict=True):
        for a, b in zip(js_row, py_row, strict=True):
            assert a == b or (b == PROBE.PRICE_CAP and a >= b)  # Python stops counting at a price no game reaches


def test_hostile_numbers_neither_hang_nor_crash() -> None:
    """A project's tables and a game's state are hostile input: absurd levels, growth or time limits fail fast."""
    up = {"cost": 10, "cost_growth": 5, "per_click": 1, "per_second": 0}
    assert PROBE.upgrade_cost(up, 10**12) == PROBE.PRICE_CAP
    assert PROBE.upgrade_cost({"cost": 1e308, "cost_growth": 1e308}, 3) == PROBE.PRICE_CAP
    assert PROBE.win_action(_state(currency=40, upgrades={"tap": 10**15, "auto": "x"}), ACTIONS, TABLES) == "buy_auto"
    tables = _tables("a cookie clicker")
    tables["economy.json"]["time_limit_ms"] = 10**12
    res = GENRE.check_tables(tables)
    assert [r["passed"] for r in res] == [False, False]
    assert "time_limit_ms" in res[0]["findings"][0]


@pytest.mark.parametrize(("brief", "target"), [
    ("an idle clicker about baking cookies: reach a million", 1_000_000), ("a clicker: reach 500 cookies", 500),
    ("tap 10k coins", 10_000), ("reach 1,250,000 gold", 1_200_000), ("a cookie clicker, three lives, 60 s", None),
])
def test_a_goal_the_brief_names_becomes_the_goal(brief: str, target: int | None) -> None:
    assert BUILDER.brief_target(brief) == target
    tables = _tables(brief)
    if target is not None:
        assert tables["economy.json"]["goal"] == target
    assert _passed(tables) == {"goal_reachable": True, "idle_not_enough": True}
