"""Latch split (contract mode): scripted plays must end the game the right way, and the report tells
won / lost / abandoned apart.

In one page session, after the basic probes: an idle stretch must not end the game (an empty shell that just
ends fails); Escape must abandon; a planned play that buys, crafts and delivers (driven by the game's own tables
and controls, through real key presses) must reach ``won``; a wasteful play must reach ``lost``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tier2.browser import GameSession

__all__ = ["LatchReport", "play_latches", "next_win_action"]

_HOOK = "window.__TIER2__"
_STEP = f"(ms) => {{ window.__tier2Clock.advance(ms); return JSON.parse(JSON.stringify({_HOOK}.state())); }}"
IDLE_MS = 2000
MAX_WIN_ACTIONS = 400
MAX_LOSE_ACTIONS = 120


@dataclass
class LatchReport:
    idle_outcome: str | None = None
    abandon_outcome: str | None = None
    win_outcome: str | None = None
    win_actions: int = 0
    lose_outcome: str | None = None
    lose_actions: int = 0
    notes: list[str] = field(default_factory=list)


def _recipe_for(tables: dict[str, Any], item: str) -> dict[str, Any] | None:
    for r in tables.get("recipes.json", {}).get("recipes", []):
        if r.get("output", {}).get("item") == item:
            return r
    return None


def next_win_action(state: dict[str, Any], tables: dict[str, Any]) -> tuple[str, str] | None:
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


async def _press(s: GameSession, key: str, frames: int = 2) -> dict[str, Any]:
    await s.p.keyboard.press(key)
    return await s.evaluate(_STEP, frames * 1000 / 60)


async def _to_play(s: GameSession, start: str) -> dict[str, Any]:
    state = await s.evaluate(_STEP, 100)
    for _ in range(6):
        if state.get("scene") == "Play" and state.get("outcome") == "running":
            return state
        state = await _press(s, start, frames=6)
    return state


async def play_latches(s: GameSession, controls: dict[str, Any], tables: dict[str, Any] | None) -> LatchReport:
    rep = LatchReport()
    start = (controls.get("start") or ["Space"])[0]
    abandon = (controls.get("abandon") or ["Escape"])[0]
    deliver = (controls.get("deliver") or ["Enter"])[0]
    buy_keys: dict[str, str] = controls.get("buy") or {}
    craft_keys: dict[str, str] = controls.get("craft") or {}

    state = await _to_play(s, start)
    rep.idle_outcome = (await s.evaluate(_STEP, IDLE_MS)).get("outcome")
    rep.abandon_outcome = (await _press(s, abandon, frames=4)).get("outcome")

    state = await _to_play(s, start)
    if tables is None:
        rep.notes.append("win play skipped: no tables to plan with")
    else:
        for rep.win_actions in range(1, MAX_WIN_ACTIONS + 1):
            if state.get("outcome") != "running":
                break
            action = next_win_action(state, tables)
            key = None if action is None else {"deliver": deliver, "buy": buy_keys.get(action[1]),
                                                "craft": craft_keys.get(action[1])}[action[0]]
            if key is None:
                rep.notes.append(f"win play: no control for {action}")
                break
            state = await _press(s, key, frames=1)
        rep.win_outcome = state.get("outcome")

    state = await _to_play(s, start)
    if buy_keys:
        prices = (tables or {}).get("prices.json", {}).get("buy", {})
        recipes = (tables or {}).get("recipes.json", {}).get("recipes", [])
        alone = {r["inputs"][0]["item"] for r in recipes if len(r.get("inputs", [])) == 1}
        useless = [i for i in buy_keys if i not in alone] or list(buy_keys)
        # drain the money on the cheapest item that crafts nothing by itself, never craft or deliver
        waste = min(useless, key=lambda i: prices.get(i, 0))
        for rep.lose_actions in range(1, MAX_LOSE_ACTIONS + 1):
            if state.get("outcome") != "running":
                break
            state = await _press(s, buy_keys[waste], frames=1)
        rep.lose_outcome = state.get("outcome")
    return rep
