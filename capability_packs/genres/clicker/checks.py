"""The clicker genre's data checks: the goal is reachable by playing, and not by idling.

`simulate` replays the rules of state.js frame by frame (60 fps; per-second income accrues on game time, a click
adds `per_click`, a purchase multiplies the next price by `cost_growth`) with a player who acts
``clicks_per_s`` times a second and chooses as the genre probe does (`probe.best_upgrade`).

The human click rate: a relaxed player sustains 4 clicks a second for a minute (fast players 6-8, records above
10), so the goal must be reached at 4 clicks/s with the probe's rule within `REACH_FRACTION` of the time limit.
Idling — never clicking, buying whatever the start money affords — must stay below the goal when time runs out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from . import probe

__all__ = ["HUMAN_CLICKS_PER_S", "REACH_FRACTION", "SimResult", "check_tables", "simulate"]

HUMAN_CLICKS_PER_S = 4.0
REACH_FRACTION = 0.9  # the goal must fall at most this far into the time limit (a margin for slower players)
FPS = 60
MAX_UPGRADES = 9
MAX_TIME_MS = 600_000  # as the schema: the simulation runs frame by frame


@dataclass(frozen=True)
class SimResult:
    won: bool
    time_ms: float  # when the goal was reached (or the time limit)
    currency: float
    earned: float
    clicks: int
    bought: int
    levels: dict[str, int]


def simulate(tables: dict[str, Any], clicks_per_s: float, clicking: bool = True) -> SimResult:
    """One play of the tables by a player acting ``clicks_per_s`` times a second (see the module docstring)."""
    eco = tables["economy.json"]
    ups = {u["id"]: u for u in tables["upgrades.json"]["upgrades"]}
    limit, goal = float(eco["time_limit_ms"]), float(eco["goal"])
    currency, per_click, per_second = float(eco["start_currency"]), float(eco["click_value"]), 0.0
    levels = dict.fromkeys(ups, 0)
    clicks = bought = 0
    earned = 0.0
    dt = 1000.0 / FPS
    period = 1000.0 / clicks_per_s
    elapsed, next_act = 0.0, 0.0
    while elapsed < limit:
        if elapsed >= next_act:
            next_act += period
            snap = {"currency": math.floor(currency + 1e-9), "goal": goal, "per_click": per_click,
                    "per_second": per_second, "upgrades": levels, "time_left_ms": limit - elapsed}
            choice = probe.best_upgrade(snap, tables, clicks_per_s if clicking else 0.0)
            if choice is not None:
                currency -= probe.upgrade_cost(ups[choice], levels[choice])
                levels[choice] += 1
                per_click += float(ups[choice]["per_click"])
                per_second += float(ups[choice]["per_second"])
                bought += 1
            elif clicking:
                currency += per_click
                earned += per_click
                clicks += 1
            if currency >= goal:
                return SimResult(True, elapsed, currency, earned, clicks, bought, levels)
        step = min(dt, limit - elapsed)
        elapsed += step
        currency += per_second * step / 1000.0
        earned += per_second * step / 1000.0
        if currency >= goal:
            return SimResult(True, elapsed, currency, earned, clicks, bought, levels)
    return SimResult(False, limit, currency, earned, clicks, bought, levels)


def _shape_problems(tables: dict[str, Any]) -> list[str]:
    """What would stop the simulation from running (schemas validate the rest)."""
    eco = tables.get("economy.json")
    ups = tables.get("upgrades.json", {}).get("upgrades") if isinstance(tables.get("upgrades.json"), dict) else None
    if not isinstance(eco, dict):
        return ["economy.json: missing or not an object"]
    keys = ("start_currency", "goal", "time_limit_ms", "click_value")
    p = [f"economy.json {k}: missing or not a number" for k in keys
         if not isinstance(eco.get(k), int | float) or isinstance(eco.get(k), bool) or not math.isfinite(eco[k])]
    if not isinstance(ups, list) or not ups:
        return [*p, "upgrades.json upgrades: missing or empty"]
    if len(ups) > MAX_UPGRADES:
        p.append(f"upgrades.json upgrades: {len(ups)} upgrades, at most {MAX_UPGRADES} (keys 1..9)")
    for i, u in enumerate(ups):
        if not isinstance(u, dict) or not isinstance(u.get("id"), str):
            p.append(f"upgrades.json upgrades[{i}]: not an object with an id")
            continue
        bad = [k for k in ("cost", "cost_growth", "per_click", "per_second")
               if not isinstance(u.get(k), int | float) or isinstance(u.get(k), bool) or u[k] < 0]
        p += [f"upgrades.json upgrades[{i}].{k}: missing or negative" for k in bad]
        if not bad and (u["cost"] <= 0 or u["cost_growth"] < 1):
            p.append(f"upgrades.json upgrades[{i}]: cost must be > 0 and cost_growth >= 1")
    if not p and (eco["goal"] <= eco["start_currency"] or eco["click_value"] <= 0
                  or not 0 < eco["time_limit_ms"] <= MAX_TIME_MS):
        p.append(f"economy.json: needs goal > start_currency, click_value > 0 and 0 < time_limit_ms <= {MAX_TIME_MS}")
    return p


def _result(cid: str, passed: bool, summary: str, findings: list[str]) -> dict[str, Any]:
    return {"id": cid, "passed": passed, "summary": summary, "findings": findings}


def check_tables(tables: dict[str, Any], options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    problems = _shape_problems(tables)
    if problems:
        return [_result("goal_reachable", False, "the economy tables cannot be played", problems),
                _result("idle_not_enough", False, "the economy tables cannot be played", problems)]
    eco = tables["economy.json"]
    limit, goal = eco["time_limit_ms"], eco["goal"]
    play = simulate(tables, HUMAN_CLICKS_PER_S)
    in_time = play.won and play.time_ms <= REACH_FRACTION * limit
    how = (f"at {HUMAN_CLICKS_PER_S:g} clicks/s, buying by payback, {goal:g} is reached at {play.time_ms / 1000:.1f} s "
           f"of {limit / 1000:.0f} s ({play.clicks} clicks, {play.bought} upgrades)" if play.won else
           f"at {HUMAN_CLICKS_PER_S:g} clicks/s, buying by payback, only {play.currency:.0f} of {goal:g} by "
           f"{limit / 1000:.0f} s")
    reach = _result("goal_reachable", in_time, how, [] if in_time else [
        f"economy.json goal: {goal:g} is not reached within {REACH_FRACTION:.0%} of time_limit_ms {limit} by a "
        f"player clicking {HUMAN_CLICKS_PER_S:g} times a second ({how})"])
    idle = simulate(tables, HUMAN_CLICKS_PER_S, clicking=False)
    idle_res = _result("idle_not_enough", not idle.won,
                       f"idling (no clicks) ends with {idle.currency:.0f} of {goal:g}" if not idle.won else
                       f"idling reaches the goal at {idle.time_ms / 1000:.1f} s", [] if not idle.won else [
                           f"economy.json goal: {goal:g} is reached without a single click at "
                           f"{idle.time_ms / 1000:.1f} s (start_currency buys enough per-second income)"])
    return [reach, idle_res]
