"""The shop's rules in Python: a line-by-line mirror of ``template/src/state.js`` (buy, craft, deliver, the day
clock, the won/lost/bankrupt evaluation, the snapshot and the action vocabulary) and of how ``scenes/Play.js``
routes a key press, driven the way the validator's latch play drives the page (`Play`: the genre's mirror for
`tier2.validators.builder_gates`). ``tests/unit/packs/test_genre_shop_sim.py`` plays the same tables and
actions here and in node on the real state.js and compares every snapshot.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BUY_KEYS", "CRAFT_KEYS", "FRAME_MS", "Play", "State", "actions_for"]

BUY_KEYS = ["Digit1", "Digit2", "Digit3", "Digit4", "Digit5", "Digit6", "Digit7", "Digit8", "Digit9"]
CRAFT_KEYS = ["KeyQ", "KeyW", "KeyE", "KeyR", "KeyT", "KeyY", "KeyU", "KeyI", "KeyO"]
START_KEYS = ["Space", "Enter"]
DELIVER_KEYS = ["Space", "Enter"]
ABANDON_KEYS = ["Escape"]
FRAME_MS = 1000 / 60


def _js_round(x: float) -> int:
    """JavaScript's ``Math.round`` (halves up, not to even)."""
    return int((x + 0.5) // 1)


def _t(tables: dict[str, Any], name: str) -> Any:
    return tables[f"{name}.json"]


def _raws(tables: dict[str, Any]) -> list[dict[str, Any]]:
    return [it for it in _t(tables, "items")["items"] if it["kind"] == "raw"]


def actions_for(tables: dict[str, Any]) -> dict[str, Any]:
    """state.js ``actionsFor``: start, deliver, abandon, ``buy_<raw>`` (keys 1..9), ``craft_<recipe>`` (Q..O)."""
    verb = _t(tables, "theme")["craft_verb"].lower()
    out: dict[str, Any] = {"start": {"keys": list(START_KEYS), "label": "start"},
                           "deliver": {"keys": list(DELIVER_KEYS), "label": "deliver"},
                           "abandon": {"keys": list(ABANDON_KEYS), "label": "close the shop"}}
    for i, it in enumerate(_raws(tables)):
        out[f"buy_{it['id']}"] = {"keys": [BUY_KEYS[i]], "label": f"buy {it['name']}"}
    for i, r in enumerate(_t(tables, "recipes")["recipes"]):
        out[f"craft_{r['id']}"] = {"keys": [CRAFT_KEYS[i]], "label": f"{verb} {r['name']}"}
    return out


class State:
    """state.js ``createState`` and the rules that change it."""

    def __init__(self, tables: dict[str, Any]) -> None:
        self.tables = tables
        self.money: float = _t(tables, "economy")["start_money"]
        self.inventory = {it["id"]: 0 for it in _t(tables, "items")["items"]}
        self.order_index = self.orders_done = self.crafted = self.bought = 0
        self.elapsed_ms = 0.0
        self.outcome = "running"
        self.lost_reason: str | None = None

    def current_order(self) -> dict[str, Any] | None:
        orders = _t(self.tables, "orders")["orders"]
        return orders[self.order_index % len(orders)] if orders else None

    def can_craft(self, recipe: dict[str, Any]) -> bool:
        return all(self.inventory.get(i["item"], 0) >= i["qty"] for i in recipe["inputs"])

    def can_deliver(self) -> bool:
        o = self.current_order()
        return o is not None and self.inventory.get(o["item"], 0) >= o["qty"]

    def is_stuck(self) -> bool:
        if self.money >= min(_t(self.tables, "prices")["buy"].values()):
            return False
        if any(self.can_craft(r) for r in _t(self.tables, "recipes")["recipes"]):
            return False
        return not self.can_deliver()

    def evaluate(self) -> None:
        if self.outcome != "running":
            return
        eco = _t(self.tables, "economy")
        if self.money >= eco["goal_money"]:
            self.outcome = "won"
        elif self.elapsed_ms >= eco["day_length_ms"]:
            self.outcome, self.lost_reason = "lost", "day_over"
        elif self.is_stuck():
            self.outcome, self.lost_reason = "lost", "bankrupt"

    def buy(self, item_id: str) -> bool:
        item = next((it for it in _t(self.tables, "items")["items"] if it["id"] == item_id), None)
        price = _t(self.tables, "prices")["buy"].get(item_id)
        if self.outcome != "running" or item is None or item["kind"] != "raw" or price is None or self.money < price:
            return False
        self.money -= price
        self.inventory[item_id] += 1
        self.bought += 1
        self.evaluate()
        return True

    def craft(self, recipe_id: str) -> bool:
        r = next((x for x in _t(self.tables, "recipes")["recipes"] if x["id"] == recipe_id), None)
        if self.outcome != "running" or r is None or not self.can_craft(r):
            return False
        for i in r["inputs"]:
            self.inventory[i["item"]] -= i["qty"]
        self.inventory[r["output"]["item"]] += r["output"]["qty"]
        self.crafted += 1
        self.evaluate()
        return True

    def deliver(self) -> bool:
        order = self.current_order()
        if self.outcome != "running" or order is None or not self.can_deliver():
            return False
        self.inventory[order["item"]] -= order["qty"]
        self.money += order["reward"]
        self.orders_done += 1
        self.order_index += 1
        self.evaluate()
        return True

    def tick(self, dt_ms: float) -> None:
        if self.outcome != "running":
            return
        if dt_ms > 0:
            self.elapsed_ms += dt_ms
        self.evaluate()

    def abandon(self) -> None:
        if self.outcome == "running":
            self.outcome = "abandoned"

    def snapshot(self) -> dict[str, Any]:
        o = self.current_order()
        return {"money": self.money, "inventory": dict(self.inventory),
                "order": {k: o[k] for k in ("id", "item", "qty", "reward")} if o else None,
                "ordersDone": self.orders_done, "crafted": self.crafted, "bought": self.bought,
                "elapsed_ms": _js_round(self.elapsed_ms), "outcome": self.outcome}


class Play:
    """The Play scene driven as the latch play drives the page: a key down is handled on the next frame (Play.js
    ``onKey``: abandon, deliver, buy, craft), the frames it is held and the one after its release tick the clock."""

    def __init__(self, tables: dict[str, Any]) -> None:
        self.tables = tables
        self._actions = actions_for(tables)
        self._by_key: dict[str, str] = {}
        for name, spec in self._actions.items():
            if name != "start":
                self._by_key.setdefault(spec["keys"][0], name)
        self.state = State(tables)

    def actions(self) -> dict[str, Any]:
        return self._actions

    def start(self) -> dict[str, Any]:
        self.state = State(self.tables)
        return self._snap()

    def _snap(self) -> dict[str, Any]:
        scene = "Play" if self.state.outcome == "running" else \
            "Menu" if self.state.outcome == "abandoned" else "GameOver"
        return {"scene": scene, **self.state.snapshot()}

    def _key(self, name: str) -> None:
        st = self.state
        if name == "abandon":
            st.abandon()
        elif name == "deliver":
            st.deliver()
        elif name.startswith("buy_"):
            st.buy(name[len("buy_"):])
        elif name.startswith("craft_"):
            st.craft(name[len("craft_"):])

    def act(self, name: str, frames: int) -> dict[str, Any]:
        if name != "wait":
            self._key(self._by_key.get(self._actions[name]["keys"][0], name))
        for _ in range(frames + (0 if name == "wait" else 1)):
            self.state.tick(FRAME_MS)
        return self._snap()

    def advance(self, ms: float) -> dict[str, Any]:
        for _ in range(_js_round(ms / FRAME_MS)):
            self.state.tick(FRAME_MS)
        return self._snap()

    def abandon(self) -> dict[str, Any]:
        return self.act("abandon", 4)
