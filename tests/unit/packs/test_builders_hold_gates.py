"""The offline builders hold their own gates (`tier2.validators.builder_gates`): the tables they return pass the
data gates and, where the genre has a mirror of its rules, the latch split played by the genre probe; tables no
adjustment within bounds can fix are refused, never returned."""

from __future__ import annotations

import copy
import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from tier2.packs import load_pack
from tier2.validators.builder_gates import GatesNotHeld, gate_failures, genre_at, hold, latch_gate, mirror_latches
from tier2.validators.data.pack_checks import genre_data_gates

ROOT = Path(__file__).resolve().parents[3]
PACK = load_pack(ROOT / "capability_packs", "phaser")
SHOP = PACK.genres["shop"]
SHOP_BUILDER: Any = SHOP.module("builder")
SHOP_SIM: Any = importlib.import_module(f"{SHOP.package}.sim")
VILLAGERS = "a potion shop tycoon where I brew potions from herbs and sell them to villagers"


def test_the_villagers_brief_derives_an_economy_the_wasteful_play_cannot_lose() -> None:
    """The issue's case, reproduced on the mirror: the derived start money (35) drained by moonleaf at 6 leaves 5,
    which still buys herbs: never bankrupt, so l1.latch_split fails ('lose play ended running')."""
    derived = SHOP_BUILDER.derive_game(VILLAGERS)
    assert all(g.passed for g in genre_data_gates(SHOP, derived)), "the data gates alone do not see it"
    rep = mirror_latches(SHOP, derived, SHOP_SIM.Play)
    assert (rep.idle_outcome, rep.abandon_outcome, rep.win_outcome) == ("running", "abandoned", "won")
    assert rep.lose_outcome == "running"
    gate = latch_gate(SHOP, derived, SHOP_SIM.Play)
    assert not gate.passed and "lose play ended 'running'" in gate.summary


def test_the_villagers_brief_builds_tables_that_pass_every_gate() -> None:
    built = SHOP.build_tables(VILLAGERS)
    derived = SHOP_BUILDER.derive_game(VILLAGERS)
    assert gate_failures(SHOP, built, SHOP_SIM.Play) == []
    assert SHOP_BUILDER.validate_tables(built) == []
    rep = mirror_latches(SHOP, built, SHOP_SIM.Play)
    assert (rep.win_outcome, rep.lose_outcome) == ("won", "lost")
    # the adjustment is the smallest raise of the start money, nothing else changes
    assert built["economy.json"]["start_money"] > derived["economy.json"]["start_money"]
    assert {k: v for k, v in built.items() if k != "economy.json"} == \
        {k: v for k, v in derived.items() if k != "economy.json"}
    assert json.dumps(SHOP.build_tables(VILLAGERS), sort_keys=True) == json.dumps(built, sort_keys=True)


def test_tables_that_pass_are_returned_as_derived() -> None:
    brief = "a cozy bakery tycoon: bake bread and cakes, fill customer orders, don't go broke"
    assert SHOP.build_tables(brief) == SHOP_BUILDER.derive_game(brief)


def test_no_passing_candidate_raises_with_the_failures() -> None:
    broken = copy.deepcopy(SHOP_BUILDER.derive_game(VILLAGERS))
    broken["economy.json"]["goal_money"] = broken["economy.json"]["start_money"]  # unwinnable: goal not above start
    with pytest.raises(GatesNotHeld) as info:
        hold(SHOP, [broken, broken], SHOP_SIM.Play)
    assert info.value.tried == 2 and info.value.genre == "shop"
    assert any(f.startswith("l1.") for f in info.value.failures)
    with pytest.raises(GatesNotHeld):
        hold(SHOP, [], SHOP_SIM.Play)


def test_the_builders_own_invariants_count_too() -> None:
    tables = SHOP_BUILDER.derive_game("a cozy bakery tycoon")
    with pytest.raises(GatesNotHeld) as info:
        hold(SHOP, [tables], SHOP_SIM.Play, extra=lambda t: ["own: refused"])
    assert info.value.failures == ["own: refused"]


def test_a_mirror_that_crashes_fails_the_tables() -> None:
    class Broken:
        def __init__(self, tables: dict[str, Any]) -> None:
            raise KeyError("economy.json")

    failures = gate_failures(SHOP, SHOP_BUILDER.derive_game("a cozy bakery tycoon"), Broken)  # type: ignore[arg-type]
    assert len(failures) == 1 and failures[0].startswith("l1.latch_split: the mirror could not play")


def test_genre_at_is_the_packs_genre() -> None:
    for gid, genre in PACK.genres.items():
        found = genre_at(genre.root)
        assert found.id == gid and found.package == genre.package and found.spec == genre.spec


@pytest.mark.parametrize("genre", sorted(PACK.genres))
def test_every_builder_refuses_tables_its_gates_fail(genre: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each builder goes through `hold`: with every gate failing, building raises instead of returning."""
    builder: Any = PACK.genres[genre].module("builder")
    monkeypatch.setattr(builder, "hold", _refusing_hold(builder.hold))
    with pytest.raises(GatesNotHeld):
        PACK.genres[genre].build_tables("a hard game about foxes, three lives")


def _refusing_hold(real: Any) -> Any:
    def refuse(genre: Any, candidates: Any, mirror_of: Any = None, extra: Any = None) -> Any:
        return real(genre, candidates, mirror_of, extra=lambda t: ["refused by the test"])
    return refuse
