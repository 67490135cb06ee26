"""The shop genre probe: win by planning buy → craft → deliver from the tables; lose by wasting money.

Reads only the state snapshot, the action vocabulary and the tables (see the pack's docs/genre-kit.md).
"""

from __future__ import annotations

from typing import Any

__all__ = ["actions_from_controls", "lose_action", "next_win_step", "win_action"]


def _recipe_for(tables: dict[str, Any], item: str) -> dict[str, Any] | None:
    recipes: list[dict[str, Any]] = tables.get("recipes.json", {}).get("recipes", [])
    for r in recipes:
        if r.get("output", {}).get("item") == item:
            return r
    return None


def next_win_step(state: dict[str, Any], tables: dict[str, Any]) -> tuple[str, str] | None:
    """Greedy planner: deliver if possible, else craft or buy what the current order needs."""
    order = state.get("order")
    if not order:
        return None
    inv = state.get("inventory", {})
    if inv.get(order["item"], 0) >= order["qty"]:
        return ("deliver", "")

    def need(item: str, qty: int, depth: int = 0) -> tuple[str, str] | None:
        if depth > 8:
            return None
        recipe = _recipe_for(tables, item)
        if recipe is None:
            return ("buy", item)
        for inp in recipe.get("inputs", []):
            if inv.get(inp["item"], 0) < inp["qty"]:
                return need(inp["item"], inp["qty"], depth + 1)
        return ("craft", recipe["id"])

    return need(order["item"], order["qty"] - inv.get(order["item"], 0))


def win_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> str | None:
    step = next_win_step(state, tables)
    if step is None:
        return None
    name = step[0] if step[0] == "deliver" else f"{step[0]}_{step[1]}"
    return name if name in actions else None


def lose_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> str | None:
    """Drain the money on the cheapest raw item that crafts nothing by itself; never craft or deliver."""
    buys = [a[len("buy_"):] for a in actions if a.startswith("buy_")]
    if not buys:
        return None
    prices = tables.get("prices.json", {}).get("buy", {})
    recipes = tables.get("recipes.json", {}).get("recipes", [])
    alone = {r["inputs"][0]["item"] for r in recipes if len(r.get("inputs", [])) == 1}
    useless = [i for i in buys if i not in alone] or buys
    return "buy_" + min(useless, key=lambda i: prices.get(i, 0))


def actions_from_controls(controls: dict[str, Any]) -> dict[str, Any]:
    """The action vocabulary of a contract-1 game (shop-shaped ``controls()``: start, buy, craft, deliver, abandon)."""
    out: dict[str, Any] = {}
    for name in ("start", "deliver", "abandon"):
        keys = controls.get(name)
        if isinstance(keys, list) and keys:
            out[name] = {"keys": [str(k) for k in keys]}
    for kind in ("buy", "craft"):
        table = controls.get(kind)
        if isinstance(table, dict):
            for ident, key in table.items():
                out[f"{kind}_{ident}"] = {"keys": [str(key)]}
    return out
