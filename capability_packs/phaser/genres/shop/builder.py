"""The shop genre's offline builder: a one-line brief into the six data tables of a shop game.

No network, no LLM: the domain comes from keywords in ``lexicon.yaml``, every other choice from a ``random.Random``
seeded with sha256 of the normalised brief (same brief → byte-identical tables). The economy is computed: every order
is profitable, the start money covers the order queue, the goal is reachable within the day at ~2.5 s per order, and
raw items are never free. ``validate_tables`` reports dangling references, missing keys and broken invariants.
The tables hold only what the template reads: no sell prices (there is no sell action: a product's internal value
only sizes its orders' rewards) and no controls hint (the game builds it from its action table).
"""

from __future__ import annotations

import math
import random
import re
import unicodedata
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tier2.packs.offline import brief_tokens as _tokens
from tier2.packs.offline import content_nouns, normalise_brief, seeded, title_from
from tier2.packs.offline import hash_hue as _hash_hue
from tier2.packs.offline import hsl as _hsl
from tier2.packs.offline import palette_for as _palette
from tier2.packs.offline import singular as _singular
from tier2.packs.offline import slug as _slug
from tier2.validators.builder_gates import genre_at, hold

from . import sim

__all__ = ["MAX_START_RAISE", "MIRROR", "ORDER_PACE_MS", "TABLE_NAMES", "build_tables", "derive_game",
           "hold_tables", "load_lexicon", "normalise_brief", "order_cost", "validate_tables"]

TABLE_NAMES = ("theme.json", "items.json", "recipes.json", "orders.json", "prices.json", "economy.json")
ORDER_PACE_MS = 2500  # assumed play time per delivered order when checking that the goal is reachable
_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
_ID = re.compile(r"^[a-z][a-z0-9_]*$")
_THEME_KEYS = ("title", "subtitle", "shop_name", "currency", "customer_noun", "craft_verb")
_PALETTE_KEYS = ("background", "panel", "accent", "text", "good", "bad")
_TEXT_KEYS = ("start_hint", "order_prompt", "win", "lose")
_ECONOMY_KEYS = ("start_money", "goal_money", "day_length_ms")


@cache
def load_lexicon() -> dict[str, Any]:
    """The word lists (parsed once per process)."""
    data: dict[str, Any] = yaml.safe_load((Path(__file__).parent / "lexicon.yaml").read_text(encoding="utf-8"))
    return data


# --- reading the brief -------------------------------------------------------------------------------------------

def _detect_domain(words: set[str], lex: dict[str, Any], text: str = "") -> str:
    """The domain with most keywords in the brief (first listed wins a tie; a Chinese brief's ``keywords_zh`` are
    found inside its text); "generic" when none matches."""
    score = {name: len(words & set(dom["keywords"])) + sum(w in text for w in dom.get("keywords_zh") or [])
             for name, dom in lex["domains"].items()}
    best = max(score, key=score.__getitem__)
    return best if score[best] else "generic"


def _first_match(tokens: list[str], vocab: list[str], forms: tuple[tuple[str, str], ...] = ()) -> str | None:
    """First brief word found in ``vocab`` as is, singular, or with a suffix of ``forms`` replaced."""
    known = set(vocab)
    for tok in tokens:
        for cand in (tok, _singular(tok), *(tok[: -len(f)] + e for f, e in forms if tok.endswith(f))):
            if cand in known:
                return cand
    return None


def _brief_nouns(tokens: list[str], lex: dict[str, Any]) -> list[str]:
    """Content words of the brief (generic fallback): singular, ascii, 4-12 letters, not stop/verb/customer words."""
    skip = set(lex["stopwords"]) | set(lex["craft_verbs"]) | set(lex["customer_nouns"])
    out: list[str] = []
    for tok in tokens:
        word = _singular(tok)
        if 4 <= len(word) <= 12 and re.search(r"[aeiouy]", word) and not {tok, word} & skip and word not in out:
            out.append(word)
    return out[:4]


def _subtitle(brief: str, genre: str, lex: dict[str, Any]) -> str:
    text = " ".join("".join(c for c in unicodedata.normalize("NFKC", brief) if c.isprintable()).split())
    low = text.lower()
    for sep in lex["subtitle_splits"]:
        at = low.find(sep)
        if at >= 0 and len(text[at + len(sep):].split()) >= 3:
            text = text[at + len(sep):].strip()
            break
    text = re.sub(r"^(?:i|we|you)\s+", "", re.sub(r"^(?:a|an|the)\s+", "", text, flags=re.I), flags=re.I)
    text = re.sub(r"\bI\b", "you", re.sub(r"\bmy\b", "your", text))
    if len(text) > 72:
        text = text[:71].rsplit(" ", 1)[0].rstrip(",;:-—") + "…"
    if len(text) < 3 or not any(c.isalpha() for c in text):
        return f"A tiny {genre} tycoon"
    return text[0].upper() + text[1:]


def _prefer(pool: list[list[Any]], words: set[str], rng: random.Random) -> list[list[Any]]:
    """``pool`` without duplicate ids, shuffled (seeded), entries whose words appear in the brief first."""
    unique = list({_slug(str(e[0])): e for e in reversed(pool)}.values())[::-1]
    rng.shuffle(unique)
    return sorted(unique, key=lambda e: not set(_tokens(str(e[0]))) & words)


# --- building the tables ------------------------------------------------------------------------------------------

def _recipes(raw_ids: list[str], n_products: int, rng: random.Random) -> list[list[tuple[str, int]]]:
    """Inputs per product: product 0 from the first raw alone, every other one from two raws (covering them all).

    Every raw but the first is only used in two-input recipes: buying only one of them never crafts anything.
    """
    plans = [[(raw_ids[0], rng.randint(1, 2))]]
    unused = raw_ids[1:]
    for _ in range(1, n_products):
        picks: list[str] = []
        for _slot in range(2):
            options = [r for r in unused if r not in picks] or [r for r in raw_ids if r not in picks]
            picks.append(rng.choice(options))
            unused = [r for r in unused if r != picks[-1]]
        plans.append([(r, rng.choice((1, 1, 2))) for r in picks])
    return plans


def derive_game(brief: str) -> dict[str, dict[str, Any]]:
    """The six data tables (``{"theme.json": {...}, ...}``) for ``brief``; deterministic, no I/O but the lexicon."""
    lex = load_lexicon()
    norm = normalise_brief(brief)
    rng = seeded(norm)
    tokens = _tokens(norm)
    words = set(tokens) | {_singular(t) for t in tokens}
    domain_name = _detect_domain(words, lex, norm)
    dom = lex["domains"][domain_name]
    raws_pool, products_pool, prefixes = dom["raws"], dom["products"], list(dom["prefixes"])
    if domain_name == "generic":
        nouns = [n.title() for n in _brief_nouns(tokens, lex)]
        raws_pool = [[n, n, _hsl(_hash_hue(n), 0.55, 0.6)] for n in nouns[0::2]] + raws_pool
        products_pool = [[n, _hsl(_hash_hue(n), 0.55, 0.6)] for n in nouns[1::2]] + products_pool
        prefixes = nouns[:1] or prefixes
    scale = int(dom["price_scale"])

    # Theme words (a brief in Chinese gets its title from its own nouns, never from the English pools).
    prefix, suffix = rng.choice(prefixes), rng.choice(dom["suffixes"])
    title = f"{prefix} {suffix}"[:40]
    shop_name = f"{prefix} {dom['shop']}"[:40] if suffix != dom["shop"] else f"The {title}"[:40]
    native = content_nouns(brief)
    if native and not native[0].isascii():
        title = shop_name = title_from(brief, list(dom["suffixes"]), rng)
    verb = (_first_match(tokens, lex["craft_verbs"], (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e")))
            or dom["craft_verb"]).capitalize()
    customer_noun = _first_match(tokens[::-1], lex["customer_nouns"]) or dom["customer_noun"]  # buyers come last
    hue = dom["hue"] if dom["hue"] is not None else _hash_hue(norm)

    # Items and recipes.
    raw_entries = _prefer(raws_pool, words, rng)[: rng.randint(3, min(5, len(raws_pool)))]
    product_entries = _prefer(products_pool, words, rng)[: rng.randint(3, 4)]
    items: list[dict[str, Any]] = []
    for name, _mod, colour in raw_entries:
        items.append({"id": _slug(name) or f"raw_{len(items) + 1}", "name": name, "kind": "raw", "color": colour})
    raw_ids = [it["id"] for it in items]
    mods = {it["id"]: entry[1] for it, entry in zip(items, raw_entries, strict=True)}
    prices_buy = {rid: rng.randint(1, 5) * scale + rng.randint(0, scale - 1) for rid in raw_ids}
    recipes: list[dict[str, Any]] = []
    value: dict[str, int] = {}  # a product's worth per unit: sizes its orders' rewards (never emitted)
    used_mods: set[str] = set()
    for (base, colour), plan in zip(product_entries, _recipes(raw_ids, len(product_entries), rng), strict=True):
        mod = next((mods[r] for r, _ in reversed(plan) if mods[r] not in used_mods), mods[plan[-1][0]])
        used_mods.add(mod)
        name = base if mod.lower() in base.lower().split() else f"{mod} {base}"
        pid = _slug(name) or f"product_{len(recipes) + 1}"
        while any(it["id"] == pid for it in items):
            pid += "_x"
        items.append({"id": pid, "name": name, "kind": "product", "color": colour})
        out_qty = 2 if len(plan) > 1 and rng.random() < 0.25 else 1
        recipes.append({"id": f"{_slug(verb) or 'craft'}_{pid}", "name": name,
                        "inputs": [{"item": r, "qty": q} for r, q in plan], "output": {"item": pid, "qty": out_qty}})
        batch = sum(prices_buy[r] * q for r, q in plan)
        value[pid] = math.ceil(batch * rng.randint(170, 250) / (100 * out_qty)) + 1

    # Orders: every product at least once, the single-input starter product first.
    tables: dict[str, dict[str, Any]] = {"items.json": {"items": items}, "recipes.json": {"recipes": recipes},
              "prices.json": {"buy": prices_buy}}
    product_ids = [r["output"]["item"] for r in recipes]
    picks = product_ids[1:] + rng.choices(product_ids, k=rng.randint(6, 8) - len(product_ids))
    rng.shuffle(picks)
    customers = list(dom["customers"])
    rng.shuffle(customers)
    orders, costs = [], []
    for i, pid in enumerate([product_ids[0], *picks]):
        qty = rng.randint(1, 2)
        cost = order_cost(tables, pid, qty) or 0
        reward = max(value[pid] * qty + rng.randint(0, 3) * scale, cost + 2 * scale)
        orders.append({"id": f"o{i + 1}", "customer": customers[i % len(customers)], "item": pid, "qty": qty,
                       "reward": reward})
        costs.append(cost)

    # Economy: start covers the order queue and a few spare buys, goal takes 1.5-2.8 cycles, the day allows ~8-11 s
    # per order (so the 2.5 s-per-order reachability check passes with a wide margin).
    profits = [o["reward"] - c for o, c in zip(orders, costs, strict=True)]
    need = max(c - sum(profits[:k]) for k, c in enumerate(costs))
    start = 5 * math.ceil((max(need, 3 * max(prices_buy.values())) + rng.randint(0, 3) * scale) / 5)
    goal = 10 * math.ceil((start + sum(profits) * rng.randint(150, 280) / 100) / 10)
    n_needed, gained = 0, 0
    while gained < goal - start:
        gained += profits[n_needed % len(profits)]
        n_needed += 1
    day_ms = max(90_000, 15_000 * math.ceil(n_needed * rng.randint(8000, 11_000) / 15_000))
    economy = {"start_money": start, "goal_money": goal, "day_length_ms": day_ms}

    theme: dict[str, Any] = {
        "title": title, "subtitle": _subtitle(brief, dom["genre"], lex), "shop_name": shop_name,
        "currency": rng.choice(dom["currency"]), "customer_noun": customer_noun, "craft_verb": verb,
        "palette": _palette(hue + rng.randint(-18, 18), rng),
    }
    fill = {"shop_name": shop_name, "win": dom["win"], "lose": dom["lose"]}
    theme["texts"] = {k: rng.choice(lex["order_prompts"]) if k == "order_prompt" else lex["texts"][k].format(**fill)
                      for k in _TEXT_KEYS}
    tables |= {"theme.json": theme, "orders.json": {"orders": orders}, "economy.json": economy}
    return {name: tables[name] for name in TABLE_NAMES}


# --- checking tables ----------------------------------------------------------------------------------------------

def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


_CHECKS: dict[str, tuple[Any, str]] = {
    "str": (lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty string"),
    "hex": (lambda v: isinstance(v, str) and bool(_HEX.match(v)), "a #rrggbb colour"),
    "id": (lambda v: isinstance(v, str) and bool(_ID.match(v)), "a lowercase snake_case ascii id"),
    "kind": (lambda v: v in ("raw", "product"), '"raw" or "product"'),
    "num": (_num, "a number"),
    "obj": (lambda v: isinstance(v, dict), "an object"),
    "qty": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0, "a positive integer"),
}


def _need(obj: Any, at: str, spec: dict[str, str]) -> list[str]:
    obj = obj if isinstance(obj, dict) else {}
    return [f"{at}{k}: missing or not {_CHECKS[c][1]}" for k, c in spec.items() if not _CHECKS[c][0](obj.get(k))]


def _rows(tables: dict[str, Any], file: str, key: str, problems: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """(index, row) of the object rows of ``tables[file][key]``; other rows and a missing list are problems."""
    rows = tables[file].get(key)
    if not isinstance(rows, list):
        problems.append(f"{file} {key}: missing or not a list")
        return []
    problems += [f"{file} {key}[{i}]: not an object" for i, r in enumerate(rows) if not isinstance(r, dict)]
    return [(i, r) for i, r in enumerate(rows) if isinstance(r, dict)]


def _ref(obj: Any, at: str, by_id: dict[str, Any], kind: str | None = None) -> list[str]:
    if not isinstance(obj, dict):
        return [f"{at}: missing or not an object"]
    item, out = obj.get("item"), _need(obj, f"{at}.", {"qty": "qty"})
    if not isinstance(item, str) or item not in by_id:
        return [f"{at}.item: unknown item {item!r} (not in items.json)", *out]
    return out + ([f"{at}.item: {item!r} must be a {kind}"] if kind and by_id[item].get("kind") != kind else [])


def order_cost(tables: dict[str, Any], item: str, qty: int, _depth: int = 0) -> int | float | None:
    """Least money spent on raw items to obtain ``qty`` × ``item`` (whole recipe batches); None if not craftable."""
    buy = tables["prices.json"]["buy"]
    kind = next((it.get("kind") for it in tables["items.json"]["items"] if it.get("id") == item), None)
    if kind == "raw":
        return buy[item] * qty if _num(buy.get(item)) else None
    best = None
    for recipe in tables["recipes.json"]["recipes"] if kind == "product" and _depth <= 5 else []:
        out = recipe["output"]
        if out["item"] == item:
            parts = [order_cost(tables, i["item"], i["qty"] * -(-qty // out["qty"]), _depth + 1)
                     for i in recipe["inputs"]]
            priced = [c for c in parts if c is not None]
            if len(priced) == len(parts):
                best = sum(priced) if best is None else min(best, sum(priced))
    return best


def _economy_problems(tables: dict[str, Any]) -> list[str]:
    eco, buy, orders = tables["economy.json"], tables["prices.json"]["buy"], tables["orders.json"]["orders"]
    start, goal, day = eco["start_money"], eco["goal_money"], eco["day_length_ms"]
    costs = [order_cost(tables, o["item"], o["qty"]) for o in orders]
    p = [f"orders.json {o['id']}: {o['item']!r} cannot be crafted from raw items" if c is None else
         f"orders.json {o['id']}: reward {o['reward']} does not exceed its input cost {c} (no profit)"
         for o, c in zip(orders, costs, strict=True) if c is None or o["reward"] <= c]
    p += [msg for bad, msg in (
        (start < 0, "economy.json start_money: must be >= 0"),
        (goal <= start, f"economy.json goal_money: {goal} must be greater than start_money {start}"),
        (day <= 0, "economy.json day_length_ms: must be > 0"),
        (start < min(buy.values()), f"economy.json start_money: {start} cannot buy the cheapest raw item"),
    ) if bad]
    if p:
        return p
    cheapest = min(c for c in costs if c is not None)  # every order is craftable by now
    if start < cheapest:
        p.append(f"economy.json start_money: {start} cannot pay the inputs of the cheapest order ({cheapest})")
    profits, money = [o["reward"] - c for o, c in zip(orders, costs, strict=True)], start
    for o, c, profit in zip(orders, costs, profits, strict=True):
        if money < c:
            p.append(f"economy.json start_money: soft-lock: {money} in hand when order {o['id']} comes up, "
                     f"its inputs cost {c}")
            break
        money += profit
    full, rest = divmod(int(day // ORDER_PACE_MS), len(profits))
    if full * sum(profits) + sum(profits[:rest]) < goal - start:
        p.append(f"economy.json goal_money: {goal} out of reach: the orders deliverable in {day} ms "
                 f"({ORDER_PACE_MS} ms each) earn {full * sum(profits) + sum(profits[:rest])}, {goal - start} needed")
    return p


def validate_tables(tables: dict[str, dict[str, Any]]) -> list[str]:
    """Human-readable problems of the six tables (missing keys, dangling references, economy invariants); [] if ok."""
    if not isinstance(tables, dict):
        return ["tables: not a mapping of file name to table"]
    p = [f"{f}: missing or not an object" for f in TABLE_NAMES if not isinstance(tables.get(f), dict)]
    if p:
        return p
    theme = tables["theme.json"]
    p += _need(theme, "theme.json ", dict.fromkeys(_THEME_KEYS, "str") | {"palette": "obj", "texts": "obj"})
    p += _need(theme.get("palette"), "theme.json palette.", dict.fromkeys(_PALETTE_KEYS, "hex"))
    p += _need(theme.get("texts"), "theme.json texts.", dict.fromkeys(_TEXT_KEYS, "str"))
    by_id: dict[str, dict[str, Any]] = {}
    for i, it in _rows(tables, "items.json", "items", p):
        p += _need(it, f"items.json items[{i}].", {"id": "id", "name": "str", "kind": "kind", "color": "hex"})
        iid = it["id"] if isinstance(it.get("id"), str) else None
        p += [f"items.json items[{i}].id: duplicate item id {iid!r}"] * (iid in by_id)
        if iid:
            by_id.setdefault(iid, it)
    raws = [k for k, it in by_id.items() if it.get("kind") == "raw"]
    p += [f"items.json items: needs 1-9 raw items (keys 1..9), has {len(raws)}"] * (not 1 <= len(raws) <= 9)
    recipes = _rows(tables, "recipes.json", "recipes", p)
    p += ["recipes.json recipes: at most 9 recipes (keys Q..O)"] * (len(recipes) > 9)
    for n, (i, r) in enumerate(recipes):
        at = f"recipes.json recipes[{i}]"
        p += _need(r, at + ".", {"id": "str", "name": "str"})
        p += [f"{at}.id: duplicate recipe id {r.get('id')!r}"] * any(x.get("id") == r.get("id") for _, x in recipes[:n])
        inputs = r.get("inputs") if isinstance(r.get("inputs"), list) and r.get("inputs") else None
        p += [f"{at}.inputs: missing or empty list"] * (inputs is None)
        p += [e for j, inp in enumerate(inputs or []) for e in _ref(inp, f"{at}.inputs[{j}]", by_id)]
        p += _ref(r.get("output"), f"{at}.output", by_id, kind="product")
    orders = _rows(tables, "orders.json", "orders", p)
    p += ["orders.json orders: must list at least one order"] * (not orders)
    for i, o in orders:
        p += _need(o, f"orders.json orders[{i}].", {"id": "str", "customer": "str", "reward": "num"})
        p += _ref(o, f"orders.json orders[{i}]", by_id, kind="product")
    buy = tables["prices.json"].get("buy")
    if isinstance(buy, dict):
        p += [f"prices.json buy.{k}: not a raw item id" for k in buy if k not in raws]
        p += [f"prices.json buy.{k}: missing price" for k in raws if k not in buy]
        p += [f"prices.json buy.{k}: price must be a number > 0 (free items leave no way to go broke)"
              for k, v in buy.items() if not _num(v) or v <= 0]
    else:
        p.append("prices.json buy: missing or not an object")
    p += _need(tables["economy.json"], "economy.json ", dict.fromkeys(_ECONOMY_KEYS, "num"))
    p += [f"orders.json orders[{i}].reward: must be >= 0" for i, o in orders if _num(o.get("reward"))
          and o["reward"] < 0]
    return p or _economy_problems(tables)


#: the shop's rules in Python, on which `hold` plays the latch split (docs/genre-kit.md, "builder.py")
MIRROR = sim.Play
#: how far the start money may be raised to hold the gates (the derived start, then +1, +2 … up to this)
MAX_START_RAISE = 60


def _candidates(tables: dict[str, dict[str, Any]]) -> Iterator[dict[str, dict[str, Any]]]:
    """The derived tables, then the same game with more start money (a bounded series: same brief, same tables).

    Raising the start keeps every order profitable, the queue unblocked and the goal reachable; what it changes is
    where the probe's wasteful play ends: buying the cheapest raw that crafts nothing alone drains the money to the
    start modulo that price, and the game is lost (bankrupt) only when that remainder cannot buy any raw item —
    the villagers brief's derived 35 with moonleaf at 6 and herbs at 5 left 5 in hand, and no loss."""
    yield tables
    eco = tables["economy.json"]
    for raise_by in range(1, MAX_START_RAISE + 1):
        start = eco["start_money"] + raise_by
        if start < eco["goal_money"]:
            yield {**tables, "economy.json": {**eco, "start_money": start}}


def build_tables(brief: str) -> dict[str, Any]:
    """The genre kit's builder entry (see the pack's docs/genre-kit.md): the derived tables, or the first of their
    bounded adjustments, that pass the shop's own invariants (`validate_tables`), the data gates and the latch
    split played on the rules' mirror (`sim.Play`) by the genre probe; `GatesNotHeld` when none does."""
    return dict(hold(genre_at(Path(__file__).parent), _candidates(derive_game(brief)), MIRROR,
                     extra=validate_tables))


def hold_tables(tables: dict[str, Any]) -> dict[str, Any]:
    """``tables`` as they are (a follow-up's changed numbers: no other candidate is tried, so nothing the change asked
    for is undone) if they pass the gates `build_tables` holds; `GatesNotHeld` otherwise (`tier2.packs.knobs`)."""
    return dict(hold(genre_at(Path(__file__).parent), [tables], MIRROR, extra=validate_tables))
