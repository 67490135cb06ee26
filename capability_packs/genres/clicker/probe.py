"""The clicker genre probe: win by clicking and buying the upgrade that pays back fastest; lose by idling.

Reads only the state snapshot, the action vocabulary and the tables (see the pack's docs/genre-kit.md). The same
decision rule (`best_upgrade`) drives checks.py's simulation, so "the probe's strategy reaches the goal at a human
click rate" is computed with the very rule the probe plays.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["PRICE_CAP", "PROBE_CLICKS_PER_S", "WAIT_FRAMES", "best_upgrade", "lose_action", "upgrade_cost",
           "win_action"]

PROBE_CLICKS_PER_S = 5.0  # one click per action held 12 frames at 60 fps (genre.yaml probe.action_frames)
WAIT_FRAMES = 120  # the lose probe lets 2 s of game time pass per action


def _num(v: Any) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) else 0.0


PRICE_CAP = 10**15  # no game of this genre gets near it; a hostile level or growth stops here instead of hanging


def upgrade_cost(upgrade: dict[str, Any], level: int) -> int:
    """Price of the next level, computed exactly as state.js `upgradeCost` (one multiplication per level)."""
    cost = math.ceil(min(_num(upgrade.get("cost")), PRICE_CAP) - 1e-9)
    growth = min(_num(upgrade.get("cost_growth")) or 1.0, 1e6)
    for _ in range(max(0, min(int(level), 10_000))):
        if cost >= PRICE_CAP:
            return PRICE_CAP
        cost = math.ceil(cost * growth - 1e-9)
    return int(min(cost, PRICE_CAP))


def best_upgrade(state: dict[str, Any], tables: dict[str, Any], clicks_per_s: float) -> str | None:
    """The affordable upgrade with the shortest payback time that also brings the goal closer, or None.

    Payback = cost / income gained per second (a per-click gain counts ``clicks_per_s`` times a second). An
    upgrade is worth buying only if, at the new income, the goal is reached sooner than without it.
    """
    currency = _num(state.get("currency"))
    goal = _num(state.get("goal"))
    income = _num(state.get("per_click")) * clicks_per_s + _num(state.get("per_second"))
    raw_levels = state.get("upgrades")
    levels: dict[str, Any] = raw_levels if isinstance(raw_levels, dict) else {}
    upgrades = tables.get("upgrades.json", {}).get("upgrades", [])
    best: tuple[float, str] | None = None
    for up in upgrades if isinstance(upgrades, list) else []:
        if not isinstance(up, dict) or not isinstance(up.get("id"), str):
            continue
        cost = upgrade_cost(up, int(_num(levels.get(up["id"]))))
        gain = _num(up.get("per_click")) * clicks_per_s + _num(up.get("per_second"))
        if cost > currency or gain <= 0:
            continue
        without = (goal - currency) / income if income > 0 else math.inf
        with_it = (goal - currency + cost) / (income + gain)
        payback = cost / gain
        if with_it < without and (best is None or payback < best[0]):
            best = (payback, up["id"])
    return best[1] if best else None


def win_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> str | None:
    choice = best_upgrade(state, tables, PROBE_CLICKS_PER_S)
    if choice is not None and f"buy_{choice}" in actions:
        return f"buy_{choice}"
    return "click" if "click" in actions else None


def lose_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> tuple[str, int]:
    """Idle: income needs clicks (or upgrades bought with clicks), so the clock runs out below the goal."""
    return ("wait", WAIT_FRAMES)
