"""The clicker's rules in Python: a mirror of ``template/src/state.js`` (click, buy, the per-second income on game
time, the won/lost evaluation, the snapshot and the action vocabulary) and of how ``scenes/Play.js`` routes a key
press, driven the way the validator's latch play drives the page (`Play`: the genre's mirror for
`tier2.validators.builder_gates`). ``tests/unit/packs/test_genre_clicker_sim.py`` plays the same tables and
actions here and in node on the real state.js and compares every snapshot.
"""

from __future__ import annotations

import math
from typing import Any

from .probe import upgrade_cost

__all__ = ["BUY_KEYS", "FRAME_MS", "Play", "actions_for"]

BUY_KEYS = ["Digit1", "Digit2", "Digit3", "Digit4", "Digit5", "Digit6", "Digit7", "Digit8", "Digit9"]
FRAME_MS = 1000 / 60


def _js_round(x: float) -> int:
    """JavaScript's ``Math.round`` (halves up, not to even)."""
    return int((x + 0.5) // 1)


def actions_for(tables: dict[str, Any]) -> dict[str, Any]:
    """state.js ``actionsFor``: start (Enter), click (Space), ``buy_<upgrade>`` (keys 1..9), abandon (Escape)."""
    out: dict[str, Any] = {"start": {"keys": ["Enter"], "label": "start"},
                           "click": {"keys": ["Space"], "label": "click"}}
    for i, u in enumerate(tables["upgrades.json"]["upgrades"]):
        out[f"buy_{u['id']}"] = {"keys": [BUY_KEYS[i]], "label": f"buy {u['name']}"}
    out["abandon"] = {"keys": ["Escape"], "label": "quit"}
    return out


class Play:
    """state.js ``createState`` … ``snapshot``, one key press per action (``onKey`` ignores repeats)."""

    def __init__(self, tables: dict[str, Any]) -> None:
        self.tables = tables
        self._actions = actions_for(tables)
        self._ups = {u["id"]: u for u in tables["upgrades.json"]["upgrades"]}
        self.start()

    def actions(self) -> dict[str, Any]:
        return self._actions

    def start(self) -> dict[str, Any]:
        eco = self.tables["economy.json"]
        self.currency: float = eco["start_currency"]
        self.earned: float = 0
        self.per_click: float = eco["click_value"]
        self.per_second: float = 0
        self.levels = dict.fromkeys(self._ups, 0)
        self.clicks = self.bought = 0
        self.elapsed_ms = 0.0
        self.outcome = "running"
        return self.snapshot()

    def _evaluate(self) -> None:
        eco = self.tables["economy.json"]
        if self.outcome != "running":
            return
        if self.currency >= eco["goal"]:
            self.outcome = "won"
        elif self.elapsed_ms >= eco["time_limit_ms"]:
            self.outcome = "lost"

    def _click(self) -> None:
        if self.outcome != "running":
            return
        self.currency += self.per_click
        self.earned += self.per_click
        self.clicks += 1
        self._evaluate()

    def _buy(self, uid: str) -> None:
        u = self._ups.get(uid)
        if self.outcome != "running" or u is None:
            return
        cost = upgrade_cost(u, self.levels[uid])
        if self.currency < cost:
            return
        self.currency -= cost
        self.levels[uid] += 1
        self.per_click += u["per_click"]
        self.per_second += u["per_second"]
        self.bought += 1
        self._evaluate()

    def _tick(self, dt_ms: float) -> None:
        if self.outcome != "running":
            return
        dt = min(dt_ms, self.tables["economy.json"]["time_limit_ms"] - self.elapsed_ms)
        self.elapsed_ms += dt
        self.currency += self.per_second * dt / 1000
        self.earned += self.per_second * dt / 1000
        self._evaluate()

    def snapshot(self) -> dict[str, Any]:
        limit = self.tables["economy.json"]["time_limit_ms"]
        scene = "Play" if self.outcome == "running" else "Menu" if self.outcome == "abandoned" else "GameOver"
        return {"scene": scene, "currency": math.floor(self.currency + 1e-9), "per_click": self.per_click,
                "per_second": _js_round(self.per_second * 100) / 100, "upgrades": dict(self.levels),
                "clicks": self.clicks, "bought": self.bought, "goal": self.tables["economy.json"]["goal"],
                "time_left_ms": _js_round(max(0.0, limit - self.elapsed_ms)),
                "elapsed_ms": _js_round(self.elapsed_ms),
                "score": math.floor(self.earned), "outcome": self.outcome}

    def act(self, name: str, frames: int) -> dict[str, Any]:
        if name == "abandon":
            if self.outcome == "running":
                self.outcome = "abandoned"
        elif name == "click":
            self._click()
        elif name.startswith("buy_"):
            self._buy(name[len("buy_"):])
        for _ in range(frames + (0 if name == "wait" else 1)):
            self._tick(FRAME_MS)
        return self.snapshot()

    def advance(self, ms: float) -> dict[str, Any]:
        for _ in range(_js_round(ms / FRAME_MS)):
            self._tick(FRAME_MS)
        return self.snapshot()

    def abandon(self) -> dict[str, Any]:
        return self.act("abandon", 4)
