"""L1 economy gate: farming-amcolash crops, GRMC (no money), tier2 tables and mutants, generated games."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.packs.shop_economy.helpers import error_messages, read_json, shop_economy
from tier2.packs import load_pack

ECONOMY = shop_economy()  # the genre's own package, as the pack loads it
Converter = ECONOMY.Converter
EconomyModel = ECONOMY.EconomyModel
Sink = ECONOMY.Sink
Source = ECONOMY.Source
check_economy = ECONOMY.check_economy
check_tier2_tables = ECONOMY.check_tier2_tables
cost_function = ECONOMY.cost_function
economy_from_farming = ECONOMY.economy_from_farming
economy_from_grmc = ECONOMY.economy_from_grmc
economy_from_tier2_tables = ECONOMY.economy_from_tier2_tables


@pytest.fixture(scope="module")
def crops(corpus: Path) -> dict:
    return read_json(corpus / "farming-amcolash" / "crops.json")


# --- farming-amcolash ---------------------------------------------------------------------------------------------

def test_farming_has_a_profit_path_and_a_losing_path(crops: dict) -> None:
    r = check_economy(economy_from_farming(crops))
    ev = r.evidence
    assert r.passed and r.id == "l1.economy" and r.layer == "L1", r.findings
    assert ev["applicable"] is True and ev["start_money"] == 300
    assert ev["profitable"] and ev["best_strategy"]["profit"] == 48  # eggplant: 78 - 30
    assert all(o["profit"] > 0 for o in ev["sink_costs"])  # every crop: revenue > cost
    assert ev["loss_path_kinds"] == {"perish": 6}  # a crop dies timeToDeath s after ripening
    assert ev["cheapest_useful_input"] == {"item": "tomato_seed", "price": 10}
    assert ev["soft_lock"] is None


@pytest.mark.parametrize(("start", "passed"), [(0, False), (9, False), (10, True)])
def test_farming_start_below_the_cheapest_seed_is_a_soft_lock(crops: dict, start: int, passed: bool) -> None:
    r = check_economy(economy_from_farming(crops, start_money=start))
    assert r.passed is passed
    lock = f"soft-lock: start money {start} is below the cheapest useful input (tomato_seed at 10)"
    assert (lock in error_messages(r)) is not passed


def test_farming_mutant_where_no_crop_pays_has_no_profit_path(crops: dict) -> None:
    mutant = json.loads(json.dumps(crops))
    for crop in mutant["crops"]:
        crop["revenue"] = crop["cost"] - 1
    r = check_economy(economy_from_farming(mutant))
    assert not r.passed and not r.evidence["profitable"]
    assert any(m.startswith("no profitable strategy") for m in error_messages(r))
    assert r.evidence["loss_path_kinds"] == {"losing_trade": 6, "perish": 6}


# --- GRMC ---------------------------------------------------------------------------------------------------------

def test_grmc_points_only_is_not_applicable(corpus: Path) -> None:
    r = check_economy(economy_from_grmc(read_json(corpus / "grmc" / "tables.json")))
    assert r.passed and r.evidence["applicable"] is False
    assert r.summary == "not applicable: no money in this game"
    assert r.findings == []


# --- tier2 tables -------------------------------------------------------------------------------------------------

def test_template_economy_profit_loss_and_start(tables: dict) -> None:
    r = check_economy(economy_from_tier2_tables(tables))
    ev = r.evidence
    assert r.passed, r.findings
    assert ev["sequential"] and ev["cycle_profit"] == 85 and ev["sinks_to_goal"] == 11
    assert [o["cost"] for o in ev["sink_costs"]] == [4, 4, 10, 8, 8, 20]  # whole batches: 2 cookies per bake
    assert ev["cheapest_useful_input"] == {"item": "sugar", "price": 1}
    broke = ev["loss_paths"][0]
    assert broke["kind"] == "bankruptcy" and broke["money_left"] < 1 and broke["at"] == "o1"
    assert "flour" not in broke["buy"]  # flour alone makes the bread of order o1


def test_sell_prices_are_not_income(tables: dict) -> None:
    """No sell action: only order rewards pay, so huge sell prices (the template no longer has them; older tier2
    games carry them) cannot rescue losing orders."""
    assert "sell" not in tables["prices.json"]
    for o in tables["orders.json"]["orders"]:
        o["reward"] = 1
    tables["prices.json"]["sell"] = {it["id"]: 1000 for it in tables["items.json"]["items"] if it["kind"] == "product"}
    r = check_economy(economy_from_tier2_tables(tables))
    assert not r.passed
    assert any(m.startswith("no profitable strategy") for m in error_messages(r))


def test_rewards_below_input_costs_have_no_profitable_strategy(tables: dict) -> None:
    model = economy_from_tier2_tables(tables)
    cost = cost_function(model)
    for o in tables["orders.json"]["orders"]:
        o["reward"] = cost(o["item"], o["qty"]) - 1
    tables["economy.json"]["start_money"] = 100  # plenty of money: the failure is the margin, not a lock
    r = check_economy(economy_from_tier2_tables(tables))
    assert not r.passed and not r.evidence["profitable"]
    assert r.evidence["cycle_profit"] == -6
    assert error_messages(r) == ["no profitable strategy: serving the 6 orders in turn from 100 nets -6 per cycle"]
    assert r.evidence["loss_path_kinds"]["losing_trade"] == 6


def test_start_money_zero_is_a_soft_lock(tables: dict) -> None:
    tables["economy.json"]["start_money"] = 0
    r = check_economy(economy_from_tier2_tables(tables))
    assert not r.passed
    assert "soft-lock: start money 0 is below the cheapest useful input (sugar at 1)" in error_messages(r)


def test_start_money_below_the_first_order_is_a_soft_lock(tables: dict) -> None:
    tables["economy.json"]["start_money"] = 3  # o1 needs 2 flour at 2 = 4
    r = check_economy(economy_from_tier2_tables(tables))
    assert not r.passed
    assert "soft-lock: 3 in hand when o1 comes up, its inputs cost 4" in error_messages(r)


def test_free_inputs_leave_no_way_to_lose() -> None:
    model = EconomyModel(start_money=5, sources=[Source("ore", 0)], converters=[Converter("smelt", {"ore": 1},
                         {"bar": 1})], sinks=[Sink("sell", "bar", 1, 3)])
    r = check_economy(model)
    assert not r.passed and r.evidence["profitable"] and r.evidence["loss_paths"] == []
    assert any(m.startswith("no loss path") for m in error_messages(r))


@pytest.mark.parametrize(("start", "kinds"), [(5, {"dead_purchase"}), (4, {"dead_purchase", "bankruptcy"})])
def test_a_purchase_nothing_uses_is_a_loss_path(start: int, kinds: set[str]) -> None:
    """With 5: 2 junk leave 1, enough for the ore that pays back, so no bankruptcy; with 4: 2 junk leave 0."""
    model = EconomyModel(start_money=start, sources=[Source("ore", 1), Source("junk", 2)],
                         converters=[Converter("smelt", {"ore": 1}, {"bar": 1})], sinks=[Sink("sell", "bar", 1, 3)])
    r = check_economy(model)
    assert r.passed
    assert {p["kind"] for p in r.evidence["loss_paths"]} == kinds


# --- generated games ----------------------------------------------------------------------------------------------

_ROOT = Path(__file__).resolve().parents[4]
_SHOP = load_pack(_ROOT / "capability_packs", "phaser").genre("shop")
BRIEFS = [f"{what} {n}" for n in range(10) for what in (
    "a cozy bakery where I bake bread and cakes for villagers",
    "a potion shop where wizards buy elixirs brewed from herbs",
    "a blacksmith forging swords and armour for knights",
    "a sushi bar tycoon serving rolls to hungry sailors",
    "a robot workshop assembling gadgets from scrap",
)]


def test_fifty_generated_games_pass_both_gates() -> None:
    assert len(BRIEFS) == 50
    for brief in BRIEFS:
        link, eco = check_tier2_tables(_SHOP.build_tables(brief))
        assert link.passed, (brief, link.findings)
        assert eco.passed, (brief, eco.findings)
        assert eco.evidence["profitable"] and eco.evidence["loss_path_kinds"].get("bankruptcy") == 1
