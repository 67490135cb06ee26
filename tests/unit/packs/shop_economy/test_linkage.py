"""L1 cross-table linkage on real crafting data (Minecraft 1.19 / 1.12, GRMC) and on tier2 tables and mutants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.packs.shop_economy.helpers import error_messages, read_json, shop_economy

ECONOMY = shop_economy()  # the genre's own package, as the pack loads it
self_sourced = ECONOMY.graph.self_sourced
strongly_connected = ECONOMY.graph.strongly_connected
CraftGraph = ECONOMY.CraftGraph
Recipe = ECONOMY.Recipe
check_linkage = ECONOMY.check_linkage
check_tier2_tables = ECONOMY.check_tier2_tables
from_grmc = ECONOMY.from_grmc
from_minecraft = ECONOMY.from_minecraft
from_tier2_tables = ECONOMY.from_tier2_tables
reachable_items = ECONOMY.reachable_items

# --- Minecraft ----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mc119(minecraft_119: tuple[Path, Path]) -> CraftGraph:
    items, recipes = minecraft_119
    return from_minecraft(read_json(items), read_json(recipes))


def test_minecraft_119_has_21_legitimate_cycles_and_passes(mc119: CraftGraph) -> None:
    r = check_linkage(mc119)
    ev = r.evidence
    assert (ev["items"], ev["recipes"]) == (1152, 1405)
    assert (ev["cycles"], ev["dangling"], ev["self_loops"], ev["bootstrap_free_cycles"]) == (21, 0, 0, 0)
    assert ev["cycle_sizes"] == {"2": 18, "3": 3}  # gold, iron and copper cycles have three members
    for pair in (["coal", "coal_block"], ["diamond", "diamond_block"], ["redstone", "redstone_block"]):
        assert pair in ev["examples"]["cycles"]
    assert r.passed and r.id == "l1.data_linkage" and r.layer == "L1" and error_messages(r) == []
    assert r.summary.startswith("ok: ") and "21 cycles" in r.summary
    assert ev["unreachable_items"] == 0


def test_minecraft_119_fails_under_the_strictly_acyclic_policy(mc119: CraftGraph) -> None:
    r = check_linkage(mc119, strict_acyclic=True)
    assert not r.passed and r.blocking
    assert "(21 error(s))" in r.summary
    errors = error_messages(r)
    assert len(errors) == 21  # 20 examples + "... and 1 more cycles"
    assert errors[-1] == "... and 1 more cycles"


def test_minecraft_raw_items_include_world_items_only_made_from_their_own_cycle(mc119: CraftGraph) -> None:
    made = {out for r in mc119.recipes for out in r.outputs}
    assert {"coal", "coal_block", "wheat", "copper_ingot"} <= mc119.raw  # mined/found, also craftable in a cycle
    assert "stick" not in mc119.raw and "stick" in made
    assert len(mc119.items - made) == 485 and len(mc119.raw) == 518


def test_minecraft_112_from_the_installed_package_has_one_dangling_reference(minecraft_data_dir: Path) -> None:
    paths = read_json(minecraft_data_dir / "dataPaths.json")["pc"]["1.12"]
    base = minecraft_data_dir
    items = read_json(base / paths["items"] / "items.json")
    recipes = read_json(base / paths["recipes"] / "recipes.json")
    blocks = read_json(base / paths["blocks"] / "blocks.json")
    r = check_linkage(from_minecraft(items, recipes, blocks))
    ev = r.evidence
    assert ev["dangling"] == 1
    assert ev["examples"]["dangling"] == [{"where": "recipes[157][0] (activator_rail).inShape",
                                           "item": "unlit_redstone_torch#75"}]
    assert ev["self_loops"] == 64 and ev["self_loop_recipes"] == 121  # repairs, dyeing: allowed
    assert ev["bootstrap_free_cycles"] == 0 and ev["unreachable_demands"] == 0
    assert not r.passed
    assert error_messages(r) == ["recipes[157][0] (activator_rail).inShape: unknown item 'unlit_redstone_torch#75' "
                          "(dangling reference)"]
    plain = check_linkage(from_minecraft(items, recipes))  # without block names the id alone is shown
    assert plain.evidence["examples"]["dangling"][0]["item"] == "#75"


# --- GRMC ---------------------------------------------------------------------------------------------------------

def test_grmc_is_a_clean_one_level_dag(corpus: Path) -> None:
    g = from_grmc(read_json(corpus / "grmc" / "tables.json"))
    r = check_linkage(g)
    assert r.passed, r.findings
    ev = r.evidence
    assert (ev["items"], ev["raw"], ev["recipes"], ev["dangling"], ev["cycles"]) == (14, 8, 6, 0, 0)
    assert ev["demands"] == 3 + 6 + 6  # level 1 scripted orders, levels 2-3 any dish
    assert ev["unreachable_demands"] == 0


def test_grmc_mutant_with_an_unknown_ingredient_is_dangling(corpus: Path) -> None:
    data = read_json(corpus / "grmc" / "tables.json")
    data["RECIPES"][0]["ingredients"].append("truffle")
    r = check_linkage(from_grmc(data))
    assert not r.passed
    assert r.evidence["examples"]["dangling"] == [{"where": "RECIPES[0] (farmers-dawn-fry).ingredients[2]",
                                                   "item": "truffle"}]


# --- tier2 tables -------------------------------------------------------------------------------------------------

def _add_product(tables: dict, pid: str) -> None:
    tables["items.json"]["items"].append({"id": pid, "name": pid.title(), "kind": "product", "color": "#123456"})


def _add_recipe(tables: dict, rid: str, inputs: dict[str, int], out: str) -> None:
    tables["recipes.json"]["recipes"].append({"id": rid, "name": rid, "output": {"item": out, "qty": 1},
                                              "inputs": [{"item": i, "qty": q} for i, q in inputs.items()]})


def _add_order(tables: dict, item: str) -> None:
    tables["orders.json"]["orders"].append({"id": "ox", "customer": "X", "item": item, "qty": 1, "reward": 99})


def test_template_tables_pass_both_gates(tables: dict) -> None:
    link, eco = check_tier2_tables(tables)
    assert (link.id, eco.id) == ("l1.data_linkage", "l1.economy")
    assert link.passed and eco.passed, (link.findings, eco.findings)
    assert link.evidence["items"] == 7 and link.evidence["raw"] == 4 and link.evidence["demands"] == 6


def test_order_for_an_unknown_item_is_dangling(tables: dict) -> None:
    tables["orders.json"]["orders"][2]["item"] = "unicorn"
    r = check_linkage(from_tier2_tables(tables))
    assert not r.passed
    assert r.evidence["examples"]["dangling"] == [{"where": "orders.json orders[2] (o3).item", "item": "unicorn"}]


def test_order_for_an_item_no_recipe_makes_from_raws_is_unreachable(tables: dict) -> None:
    _add_product(tables, "frosting")  # no recipe makes it
    _add_product(tables, "cake")
    _add_recipe(tables, "bake_cake", {"flour": 2, "frosting": 1}, "cake")
    _add_order(tables, "cake")
    r = check_linkage(from_tier2_tables(tables))
    assert not r.passed
    assert (r.evidence["dangling"], r.evidence["unreachable_demands"]) == (0, 1)
    assert r.evidence["examples"]["unreachable_demands"] == [{"id": "ox", "item": "cake"}]


def test_bootstrap_free_cycle_fails_but_a_bootstrapped_one_passes(tables: dict) -> None:
    good = json.loads(json.dumps(tables))
    _add_product(good, "crumbs")  # bread -> crumbs -> bread: a storage round-trip, bread comes from flour
    _add_recipe(good, "crumble", {"bread": 1}, "crumbs")
    _add_recipe(good, "press", {"crumbs": 2}, "bread")
    r = check_linkage(from_tier2_tables(good))
    assert r.passed and r.evidence["cycles"] == 1 and r.evidence["bootstrap_free_cycles"] == 0
    assert not check_linkage(from_tier2_tables(good), strict_acyclic=True).passed

    for pid in ("gem", "dust"):
        _add_product(tables, pid)
    _add_recipe(tables, "grind", {"gem": 1}, "dust")
    _add_recipe(tables, "fuse", {"dust": 3}, "gem")
    _add_order(tables, "gem")
    r = check_linkage(from_tier2_tables(tables))
    assert not r.passed
    assert r.evidence["examples"]["bootstrap_free_cycles"] == [["dust", "gem"]]
    assert any(m.startswith("bootstrap-free cycle {dust, gem}") for m in error_messages(r))


def test_self_loop_recipe_is_allowed(tables: dict) -> None:
    _add_recipe(tables, "sourdough", {"bread": 1, "flour": 2}, "bread")
    r = check_linkage(from_tier2_tables(tables))
    assert r.passed and r.evidence["self_loops"] == 1 and r.evidence["cycles"] == 0


def test_price_for_an_unknown_item_is_dangling(tables: dict) -> None:
    tables["prices.json"]["buy"]["pie"] = 3
    r = check_linkage(from_tier2_tables(tables))
    assert r.evidence["examples"]["dangling"] == [{"where": "prices.json buy.pie", "item": "pie"}]


def test_sell_prices_of_older_games_are_still_read(tables: dict) -> None:
    """The template has no sell prices any more; older tier2 games (and real-game data) may: their items are
    references all the same."""
    assert "sell" not in tables["prices.json"] and check_linkage(from_tier2_tables(tables)).passed
    tables["prices.json"]["sell"] = {"bread": 9, "pie": 3}
    r = check_linkage(from_tier2_tables(tables))
    assert r.evidence["examples"]["dangling"] == [{"where": "prices.json sell.pie", "item": "pie"}]


def test_malformed_tables_fail_without_raising() -> None:
    for bad in (None, {}, {"items.json": {"items": "x"}, "orders.json": {"orders": [1, {"item": 5}]},
                           "recipes.json": {"recipes": [{"inputs": "x", "output": 3}]}}):
        link, eco = check_tier2_tables(bad)  # type: ignore[arg-type]
        assert not link.passed and not eco.passed


# --- algorithms ---------------------------------------------------------------------------------------------------

def test_reachability_is_a_fixpoint() -> None:
    g = CraftGraph(items={"a", "b", "c", "d", "e"}, raw={"a"},
                   recipes=[Recipe("r1", {"a": 1}, {"b": 1}), Recipe("r2", {"b": 1, "a": 1}, {"c": 1}),
                            Recipe("r3", {"c": 1, "e": 1}, {"d": 1})])
    assert reachable_items(g) == {"a", "b", "c"}


def test_tarjan_is_iterative_on_long_chains_and_cycles() -> None:
    n = 5_000  # five times the default recursion limit
    chain = {f"n{i}": {f"n{i + 1}"} for i in range(n)}
    assert len(strongly_connected(chain, chain)) == n + 1
    ring = chain | {f"n{n}": {"n0"}}
    assert [len(c) for c in strongly_connected(ring, ring)] == [n + 1]
    recipes = [Recipe(f"r{i}", {f"n{i}": 1}, {f"n{(i + 1) % n}": 1}) for i in range(n)]
    assert len(self_sourced({f"n{i}" for i in range(n)}, recipes)) == n  # one ring nothing enters
