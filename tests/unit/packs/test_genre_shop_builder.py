"""The shop genre's offline builder: determinism, variety, domain words, economy invariants and `validate_tables`."""

from __future__ import annotations

import copy
import json
import math
import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.markers import fast_first
from tier2.packs import load_pack
from tier2.packs.offline import contrast
from tier2.validators.data.pack_checks import schema_gate

ROOT = Path(__file__).resolve().parents[3]
_GENRE = load_pack(ROOT / "capability_packs", "phaser").genre("shop")
_SHOP = _GENRE.module("builder")
assert _SHOP is not None
ORDER_PACE_MS, TABLE_NAMES = _SHOP.ORDER_PACE_MS, _SHOP.TABLE_NAMES
derive_game, load_lexicon, order_cost, validate_tables = (_SHOP.derive_game, _SHOP.load_lexicon, _SHOP.order_cost,
                                                          _SHOP.validate_tables)
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
BAKERY = "a cozy bakery tycoon: bake bread and cakes, fill customer orders, don't go broke"
HEX = re.compile(r"^#[0-9a-f]{6}$")
ID = re.compile(r"^[a-z][a-z0-9_]*$")

EDGE_BRIEFS = [
    "x" * 8,
    "ab",
    "tycoon!!",
    "🧪🧪🧪🧪🧪🧪🧪🧪🧪",
    "魔法薬の店を経営するゲーム、冒険者に薬を売る",
    "Ünïcödé café tycoon ☕ serving crème brûlée to tourists",
    "a" * 10_000,
    "potion bakery forge farm sushi " * 400,
    "qwrtp sdfgh zxcvb nmlkj",
    "1234567890 !!! ??? ...",
    "\t\n   a   shop   game   \n",
    "Zero-width\u200bjoiner\u200d and RTL \u202etext\u202c in a toy workshop",
    "A", "", "  ",
]


def _generated_briefs(n: int = 200) -> list[str]:
    """A seeded mix of domain words, brief phrasing, nonsense and unicode."""
    rng = random.Random(1234)
    words = ("potion herbs adventurers bakery bread cakes forge swords ore farm crops coffee latte pizza cheese "
             "starship thrusters aliens sushi salmon toys robots kids flowers roses bouquet lanterns crystals "
             "miners dragons tea robots gnomes mushrooms pirates maps candles soap jewelry ice cream").split()
    junk = ["zzq", "blorf", "ψυχή", "ñandú", "🍰", "🚀", "日本", "x", "—", "&", "%", "42"]
    templates = ["a {a} tycoon where I make {b} from {c} and sell them to {d}",
                 "{a} shop: craft {b}, {c} and {d}", "cozy {a} game with {b} {c} {d}",
                 "{a} {b} {c} {d}", "I run a {a} selling {b} to {d} — don't go broke", "{a}"]
    out = []
    for _ in range(n):
        picks = {k: rng.choice(words + junk if rng.random() < 0.2 else words) for k in "abcd"}
        out.append(rng.choice(templates).format(**picks))
    return out


ALL_BRIEFS = [POTION, BAKERY, *EDGE_BRIEFS, *_generated_briefs()]


def _by_id(t):
    return {it["id"]: it for it in t["items.json"]["items"]}


def _direct_cost(t, item, qty):
    """Raw money to craft qty × item with the item's (single-level) recipe, in whole batches."""
    recipe = next(r for r in t["recipes.json"]["recipes"] if r["output"]["item"] == item)
    batches = math.ceil(qty / recipe["output"]["qty"])
    return batches * sum(t["prices.json"]["buy"][i["item"]] * i["qty"] for i in recipe["inputs"])


def _luminance(hex_colour):
    def lin(c):
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def _play_greedy(t):
    """Follow the order queue: buy exactly the missing inputs, craft, deliver. Returns orders delivered to win."""
    eco, buy = t["economy.json"], t["prices.json"]["buy"]
    orders = t["orders.json"]["orders"]
    by_output = {r["output"]["item"]: r for r in t["recipes.json"]["recipes"]}
    money, inv, delivered = eco["start_money"], Counter(), 0
    while money < eco["goal_money"]:
        order = orders[delivered % len(orders)]
        recipe = by_output[order["item"]]
        while inv[order["item"]] < order["qty"]:
            for inp in recipe["inputs"]:
                while inv[inp["item"]] < inp["qty"]:
                    assert money >= buy[inp["item"]], f"soft-lock before {order['id']}: {money} < {buy[inp['item']]}"
                    money -= buy[inp["item"]]
                    inv[inp["item"]] += 1
            for inp in recipe["inputs"]:
                inv[inp["item"]] -= inp["qty"]
            inv[order["item"]] += recipe["output"]["qty"]
        inv[order["item"]] -= order["qty"]
        money += order["reward"]
        delivered += 1
        assert delivered * ORDER_PACE_MS <= eco["day_length_ms"], "goal not reachable within the day"
    return delivered


def test_tables_are_json_and_complete():
    t = derive_game(POTION)
    assert list(t) == list(TABLE_NAMES)
    assert json.loads(json.dumps(t, ensure_ascii=False)) == t
    theme = t["theme.json"]
    assert set(theme) == {"title", "subtitle", "shop_name", "currency", "customer_noun", "craft_verb", "palette",
                          "texts"}
    assert set(theme["palette"]) == {"background", "panel", "accent", "text", "good", "bad"}
    # only what the template reads: no typed controls hint (built from the action table), no sell prices (no sell
    # action), no max_orders_missed (no rule used it)
    assert set(theme["texts"]) == {"start_hint", "order_prompt", "win", "lose"}
    assert {"{customer}", "{qty}", "{item}"} <= set(re.findall(r"\{\w+\}", theme["texts"]["order_prompt"]))
    assert set(t["economy.json"]) == {"start_money", "goal_money", "day_length_ms"}
    assert set(t["prices.json"]) == {"buy"}


def test_deterministic_in_process_and_across_hash_seeds():
    first = json.dumps(derive_game(POTION), ensure_ascii=False)
    scratch = derive_game(POTION)  # callers may mutate what they get (the faulty model drops keys)
    scratch["economy.json"].clear()
    scratch["items.json"]["items"][0]["name"] = "changed"
    assert json.dumps(derive_game(POTION), ensure_ascii=False) == first
    assert json.dumps(derive_game("  A Potion shop TYCOON where I brew potions from herbs and sell them to "
                                  "adventurers "), ensure_ascii=False) == first  # normalised brief
    code = ("import json,sys; from pathlib import Path; from tier2.packs import load_pack; "
            "g = load_pack(Path('capability_packs'), 'phaser').genre('shop'); "
            f"sys.stdout.write(json.dumps(g.build_tables({POTION!r}), ensure_ascii=True))")
    outs = {subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert outs == {json.dumps(json.loads(first), ensure_ascii=True)}


def test_two_briefs_give_visibly_different_games():
    a, b = derive_game(POTION), derive_game(BAKERY)
    assert a["theme.json"]["title"] != b["theme.json"]["title"]
    assert a["theme.json"]["subtitle"] != b["theme.json"]["subtitle"]
    assert a["theme.json"]["palette"]["background"] != b["theme.json"]["palette"]["background"]
    assert not set(_by_id(a)) & set(_by_id(b))
    assert {o["customer"] for o in a["orders.json"]["orders"]}.isdisjoint(
        o["customer"] for o in b["orders.json"]["orders"])
    assert a["economy.json"] != b["economy.json"]


def test_same_domain_briefs_still_differ():
    games = [derive_game(f"a potion shop tycoon, take {n}") for n in range(12)]
    assert len({g["theme.json"]["title"] for g in games}) >= 6
    assert len({g["theme.json"]["palette"]["accent"] for g in games}) >= 10
    assert len({tuple(sorted(_by_id(g))) for g in games}) >= 8
    assert len({json.dumps(g["economy.json"]) for g in games}) >= 8


def test_potion_brief_uses_potion_words():
    t = derive_game(POTION)
    theme = t["theme.json"]
    assert theme["customer_noun"] == "adventurer"
    assert theme["craft_verb"] == "Brew"
    assert "potion" in theme["shop_name"].lower() or "apothecary" in theme["title"].lower()
    assert theme["subtitle"] == "Brew potions from herbs and sell them to adventurers"
    names = [it["name"] for it in t["items.json"]["items"]]
    assert "Herbs" in names
    assert any("Potion" in n for n in names)
    assert all(r["id"].startswith("brew_") for r in t["recipes.json"]["recipes"])


def test_bakery_brief_uses_bakery_words():
    t = derive_game(BAKERY)
    theme = t["theme.json"]
    assert (theme["craft_verb"], theme["customer_noun"]) == ("Bake", "customer")
    assert theme["subtitle"].startswith("Bake bread and cakes")
    products = [it["name"] for it in t["items.json"]["items"] if it["kind"] == "product"]
    assert any("Bread" in n for n in products) and any("Cake" in n for n in products)


def test_generic_brief_reuses_its_nouns():
    t = derive_game("a tycoon where I collect crystals and craft lanterns for miners")
    names = " ".join(it["name"] for it in t["items.json"]["items"])
    assert "Crystal" in names and "Lantern" in names
    assert t["theme.json"]["customer_noun"] == "miner"


@pytest.mark.parametrize("brief", fast_first(ALL_BRIEFS, 12), ids=lambda b: f"{b[:30]!r}#{len(b)}")
def test_invariants_hold_for_every_brief(brief):
    t = derive_game(brief)
    assert validate_tables(t) == []
    items = t["items.json"]["items"]
    by_id = _by_id(t)
    raws = [it["id"] for it in items if it["kind"] == "raw"]
    products = [it["id"] for it in items if it["kind"] == "product"]
    recipes, orders = t["recipes.json"]["recipes"], t["orders.json"]["orders"]
    prices, eco, theme = t["prices.json"], t["economy.json"], t["theme.json"]

    # Shapes and references.
    assert len(by_id) == len(items) and all(ID.match(i) for i in by_id)
    assert all(HEX.match(it["color"]) for it in items) and all(HEX.match(c) for c in theme["palette"].values())
    assert all(isinstance(v, str) and v.strip() for k, v in theme.items() if k not in ("palette", "texts"))
    assert 3 <= len(raws) <= 5 and 3 <= len(products) <= 4 and len(recipes) == len(products)
    assert len({r["id"] for r in recipes}) == len(recipes) and all(ID.match(r["id"]) for r in recipes)
    assert any(len(r["inputs"]) >= 2 for r in recipes)
    assert all(i["item"] in raws and i["qty"] >= 1 for r in recipes for i in r["inputs"])
    assert sorted(r["output"]["item"] for r in recipes) == sorted(products)
    assert 6 <= len(orders) <= 8 and {o["item"] for o in orders} == set(products)
    assert all(o["qty"] in (1, 2) and o["customer"].strip() for o in orders)
    assert list(prices) == ["buy"] and list(prices["buy"]) == raws

    # Integers only.
    numbers = [*prices["buy"].values(), *eco.values(), *(o["reward"] for o in orders)]
    assert all(type(n) is int for n in numbers)

    # Economy: profitable path, no soft-lock, reachable goal, losing path.
    costs = [_direct_cost(t, o["item"], o["qty"]) for o in orders]
    assert costs == [order_cost(t, o["item"], o["qty"]) for o in orders]
    assert all(o["reward"] > c for o, c in zip(orders, costs, strict=True))
    assert eco["start_money"] >= max(prices["buy"].values())  # any first buy works (the L1 probe presses Digit1)
    assert eco["start_money"] >= min(costs)
    assert eco["goal_money"] > eco["start_money"]
    delivered = _play_greedy(t)
    assert delivered >= len(orders)  # the goal takes at least one full cycle of orders
    assert all(p > 0 for p in prices["buy"].values())
    losing = [r for r in raws if not any({i["item"] for i in rec["inputs"]} <= {r} for rec in recipes)]
    assert losing, "some raw item must be useless on its own"
    money, stock = eco["start_money"], 0
    while money >= prices["buy"][losing[0]]:
        money, stock = money - prices["buy"][losing[0]], stock + 1
    assert money < eco["goal_money"] and stock > 0

    # Palette: dark background, strongly contrasting text.
    bg, fg = _luminance(theme["palette"]["background"]), _luminance(theme["palette"]["text"])
    assert bg < 0.05 and (fg + 0.05) / (bg + 0.05) >= 7
    _assert_readable(theme["palette"])


def _assert_readable(pal: dict[str, str]) -> None:
    """What the template draws as text stays readable (WCAG AA, l1.legible): every ink on the background, the
    accent (panel titles) on the panel too."""
    for ink in ("accent", "text", "good", "bad"):
        assert contrast(pal[ink], pal["background"]) >= 4.5, (ink, pal)
    assert contrast(pal["accent"], pal["panel"]) >= 4.5, pal


def test_palettes_are_readable_over_many_briefs():
    lex = load_lexicon()
    for name, dom in lex["domains"].items():
        words = dom["keywords"] or ["handkerchief", "lantern"]
        for k in range(40):
            game = derive_game(f"a {words[k % len(words)]} shop {k} for {name} fans")
            _assert_readable(game["theme.json"]["palette"])


def test_lexicon_is_well_formed():
    lex = load_lexicon()
    assert len(lex["domains"]) >= 9 and "generic" in lex["domains"]
    for name, dom in lex["domains"].items():
        assert {"genre", "keywords", "hue", "price_scale", "craft_verb", "customer_noun", "currency", "shop",
                "prefixes", "suffixes", "raws", "products", "customers", "win", "lose"} <= set(dom), name
        assert len(dom["raws"]) >= 6 and len(dom["products"]) >= 4 and len(dom["customers"]) >= 8, name
        assert all(HEX.match(c) for *_, c in dom["raws"] + dom["products"]), name
        assert all(kw == kw.lower() and kw.isascii() for kw in dom["keywords"]), name
        assert isinstance(dom["price_scale"], int) and dom["price_scale"] >= 1, name


@pytest.mark.parametrize("domain", [d for d in load_lexicon()["domains"] if d != "generic"])
def test_every_domain_is_detected_and_valid(domain):
    dom = load_lexicon()["domains"][domain]
    for n in range(8):
        t = derive_game(f"a {dom['genre']} tycoon with {' and '.join(dom['keywords'][:3])}, round {n}")
        assert validate_tables(t) == []
        assert t["theme.json"]["currency"] in dom["currency"]
        assert t["theme.json"]["texts"]["lose"] == dom["lose"]


def test_variety_over_many_briefs():
    games = [derive_game(b) for b in _generated_briefs(60)]
    assert len({g["theme.json"]["title"] for g in games}) >= 30
    assert len({g["theme.json"]["palette"]["background"] for g in games}) >= 40
    assert len({g["economy.json"]["goal_money"] for g in games}) >= 15


def test_long_unicode_brief_keeps_texts_short():
    t = derive_game("🧪 " * 5000)
    assert len(t["theme.json"]["subtitle"]) <= 72 and len(t["theme.json"]["title"]) <= 40


def test_validate_catches_dangling_order_item():
    t = copy.deepcopy(derive_game(POTION))
    t["orders.json"]["orders"][2]["item"] = "unicorn_tears"
    problems = validate_tables(t)
    assert any("orders[2].item" in p and "unicorn_tears" in p for p in problems), problems


def test_validate_catches_missing_start_money():
    t = copy.deepcopy(derive_game(BAKERY))
    del t["economy.json"]["start_money"]
    problems = validate_tables(t)
    assert any("economy.json" in p and "start_money" in p for p in problems), problems


@pytest.mark.parametrize("breakage, needle", [
    (lambda t: t.pop("prices.json"), "prices.json: missing"),
    (lambda t: t["recipes.json"]["recipes"][1]["inputs"].append({"item": "ghost", "qty": 1}), "'ghost'"),
    (lambda t: t["recipes.json"]["recipes"][0]["output"].update(item="herbs"), "must be a product"),
    (lambda t: t["prices.json"]["buy"].pop("herbs"), "buy.herbs: missing price"),
    (lambda t: t["prices.json"]["buy"].update(potion_x=3), "buy.potion_x: not a raw item id"),
    (lambda t: t["prices.json"].pop("buy"), "prices.json buy: missing"),
    (lambda t: t["prices.json"]["buy"].update(herbs=0), "buy.herbs: price must be a number > 0"),
    (lambda t: t["theme.json"]["palette"].update(text="white"), "palette.text"),
    (lambda t: t["theme.json"]["texts"].pop("lose"), "texts.lose"),
    (lambda t: t["items.json"]["items"].append(dict(t["items.json"]["items"][0])), "duplicate item id"),
    (lambda t: t["items.json"]["items"][0].update(id="Herbs!"), "snake_case"),
    (lambda t: t["orders.json"]["orders"][0].update(reward=1), "no profit"),
    (lambda t: t["economy.json"].update(goal_money=t["economy.json"]["start_money"]), "greater than start_money"),
    (lambda t: t["economy.json"].update(day_length_ms=3000), "out of reach"),
    (lambda t: t["economy.json"].update(start_money=1), "start_money"),
])
def test_validate_catches_other_faults(breakage, needle):
    t = copy.deepcopy(derive_game(POTION))
    breakage(t)
    problems = validate_tables(t)
    assert any(needle in p for p in problems), problems


def test_validate_never_crashes_on_garbage():
    assert validate_tables("nope") != []  # type: ignore[arg-type]
    assert validate_tables({}) != []
    garbage = {name: {"items": [1, None], "recipes": "x", "orders": [{}], "buy": [], "sell": None,
                      "palette": 3} for name in TABLE_NAMES}
    assert validate_tables(garbage) != []
    t = copy.deepcopy(derive_game(POTION))
    t["items.json"]["items"] += [{"id": ["list"], "kind": "raw"}, {"id": 7, "name": 3, "color": None}, "herbs"]
    t["recipes.json"]["recipes"] += [{"id": {}, "inputs": ["herbs", {"item": None, "qty": "2"}], "output": 5},
                                     {"name": "no id"}, {"name": "no id either", "inputs": {}}]
    t["orders.json"]["orders"] += [{"id": "o99", "item": ["x"], "qty": True, "reward": float("nan")}]
    t["prices.json"]["buy"]["herbs"] = "cheap"
    t["economy.json"].update(start_money="10", day_length_ms=float("inf"))
    problems = validate_tables(t)
    assert len(problems) >= 10 and all(isinstance(p, str) for p in problems)


def _deprecated(schema: dict, at: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Paths of the properties a schema marks ``deprecated`` (accepted from old games, never written)."""
    out: set[tuple[str, ...]] = set()
    for key, sub in schema.get("properties", {}).items():
        out |= {(*at, key)} if sub.get("deprecated") else _deprecated(sub, (*at, key))
    return out


def _has(table: dict, path: tuple[str, ...]) -> bool:
    return len(path) == 1 and path[0] in table or path[0] in table and _has(table[path[0]], path[1:])


def test_tables_match_the_schemas_and_carry_no_legacy_field():
    legacy = {name: _deprecated(_GENRE.schemas[name]) for name in TABLE_NAMES}
    assert legacy == {"theme.json": {("texts", "controls_hint")}, "items.json": set(), "recipes.json": set(),
                      "orders.json": set(), "prices.json": {("sell",)}, "economy.json": {("max_orders_missed",)}}
    data = ROOT / "capability_packs" / "phaser" / "genres" / "shop" / "template" / "data"
    template = {name: json.loads((data / name).read_text(encoding="utf-8")) for name in TABLE_NAMES}
    for t in [template, *(derive_game(b) for b in [POTION, BAKERY, *EDGE_BRIEFS])]:
        gate = schema_gate(_GENRE, t)
        assert gate.passed, [f.message for f in gate.findings]
        assert not [(n, p) for n, paths in legacy.items() for p in paths if _has(t[n], p)]


def test_contract_1_tables_with_the_legacy_fields_still_match_the_schemas():
    """Shop games written before the genre kit carry a typed controls hint, sell prices and max_orders_missed (their
    own state.js requires them): the schemas still accept them, so those games keep validating."""
    t = copy.deepcopy(derive_game(POTION))
    t["theme.json"]["texts"]["controls_hint"] = "1-4 buy  ·  Q W E brew  ·  Space/Enter deliver  ·  Esc close shop"
    t["prices.json"]["sell"] = {p["id"]: 9 for p in t["items.json"]["items"] if p["kind"] == "product"}
    t["economy.json"]["max_orders_missed"] = 3
    assert schema_gate(_GENRE, t).passed
    assert validate_tables(t) == []
    t["economy.json"]["max_orders_missed"] = -1  # still typed: a broken legacy field is a schema problem
    t["prices.json"]["sell"] = {"herbs": "nine"}
    gate = schema_gate(_GENRE, t)
    assert not gate.passed and len(gate.findings) == 2


def test_template_tables_pass():
    data = ROOT / "capability_packs" / "phaser" / "genres" / "shop" / "template" / "data"
    assert data.is_dir(), f"phaser template data missing from the repository: {data}"
    tables = {name: json.loads((data / name).read_text(encoding="utf-8")) for name in TABLE_NAMES}
    assert validate_tables(tables) == []


def test_a_chinese_bakery_brief_gets_a_bakery_and_a_title_from_its_own_nouns() -> None:
    """Issue #23: "一个面包店经营游戏…" was a generic shop ("Northwind Market", clay and resin): its domain is found
    from its Chinese words, its title made of its own nouns (never of words the reader does not understand)."""
    brief = "一个面包店经营游戏：烤面包和蛋糕，完成顾客订单，不要破产"
    t = derive_game(brief)
    bakery = load_lexicon()["domains"]["bakery"]
    pools = {r[0] for r in bakery["raws"]} | {p[0] for p in bakery["products"]}
    names = [i["name"] for i in t["items.json"]["items"]]
    assert all(any(word in name for word in pools) for name in names), names
    title = t["theme.json"]["title"]
    assert not title.isascii() and any(noun in title for noun in ("面包店", "面包", "蛋糕", "顾客")), title
    assert derive_game("一个花店经营游戏：卖鲜花和花束") != derive_game(brief)  # another domain, other tables
