"""L1 economy gate: a headless simulation of a game's money tables (docs/architecture.md §3).

The gate passes when (a) a profitable strategy exists and is reachable from the start money, (b) a path to loss
exists (a game nobody can lose is not a game), and (c) the start is not soft-locked. A game without money (points
only) is "not applicable" and passes.

The model is generic: ``sources`` (buyable items and their prices), ``converters`` (recipes, crops: inputs to
outputs, optional duration and perish time), ``sinks`` (orders, sales: an item quantity for a reward), either
open (any sink, any time: a market) or ``sequential`` (a queue served in order, cycling: tier2 orders).
Costs use whole converter batches (2 cookies per batch: an order for 3 pays for 2 batches); leftovers are not
carried over, so every cost is an upper bound and a pass never depends on a lucky leftover.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, TypedDict

from tier2.validators.base import Finding, ValidationResult

from .bankruptcy import MAX_DEPTH, bankruptcy_path, makers_of
from .economy_model import Converter, EconomyModel, Sink, Source

__all__ = ["GATE_ID", "Converter", "EconomyModel", "Sink", "Source", "check_economy", "cost_function"]

GATE_ID = "l1.economy"
EXAMPLES = 20
# ``cost(item, qty)``: the least money that obtains ``qty`` × ``item``; None when it never can be
Cost = Callable[[str, int], float | None]


class _Cheapest(TypedDict):
    item: str
    price: float


def cost_function(model: EconomyModel) -> Cost:
    """``cost(item, qty)``: least money that obtains ``qty`` × ``item`` (buy or craft, whole batches); None if never.

    Depth-first with memo; an item met again on its own path counts as unobtainable (cycles only raise costs).
    """
    price: dict[str, float] = {}
    for s in model.sources:
        price[s.item] = min(price.get(s.item, math.inf), s.price)
    makers = makers_of(model.converters)
    memo: dict[tuple[str, int], float | None] = {}
    active: set[str] = set()

    def cost(item: str, qty: int) -> float | None:
        if (item, qty) in memo:
            return memo[(item, qty)]
        if item in active or len(active) > MAX_DEPTH:
            return None
        active.add(item)
        best = price[item] * qty if item in price else None
        for conv in makers.get(item, ()):
            batches = -(-qty // conv.outputs[item])
            parts = [cost(i, q * batches) for i, q in conv.inputs.items()]
            if None not in parts:
                total = sum(p for p in parts if p is not None)
                best = total if best is None else min(best, total)
        active.discard(item)
        memo[(item, qty)] = best
        return best

    return cost


def _useful_items(model: EconomyModel) -> set[str]:
    """Items that can end up in a sink: sink items and, transitively, the inputs of converters that make them."""
    useful = {s.item for s in model.sinks}
    grew = True
    while grew:
        grew = False
        for c in model.converters:
            if useful.intersection(c.outputs) and not useful.issuperset(c.inputs):
                useful.update(c.inputs)
                grew = True
    return useful


def _first_bankruptcy(model: EconomyModel, cost: Cost) -> dict[str, Any] | None:
    """Open market: go broke from the start. Queue: serve the orders at least cost, then go broke at one of them."""
    if not model.sequential:
        return bankruptcy_path(model, model.sinks, model.start_money)
    money = model.start_money
    for k, sink in enumerate(model.sinks):
        path = bankruptcy_path(model, [sink], money)
        if path:
            return path | {"after_serving": [s.id for s in model.sinks[:k]], "at": sink.id}
        c = cost(sink.item, sink.qty)
        if c is None or money < c:
            return None
        money += sink.reward - c
    return None


def _loss_paths(model: EconomyModel, cost: Cost, useful: set[str]) -> list[dict[str, Any]]:
    paths: list[dict[str, Any]] = []
    for c in model.converters:
        spent = [cost(i, q) for i, q in c.inputs.items()]
        paid = None if None in spent else sum(x or 0 for x in spent)
        if c.perish_s is not None and paid:
            paths.append({"kind": "perish", "converter": c.id,
                          "detail": f"{c.id}: pay {paid}, then leave the output uncollected {c.perish_s} s after "
                                    f"it is ready: it perishes, the money is lost"})
    for s in model.sinks:
        spend = cost(s.item, s.qty)
        if spend is not None and spend > s.reward:
            paths.append({"kind": "losing_trade", "sink": s.id,
                          "detail": f"{s.id}: inputs cost {spend}, reward {s.reward}"})
    for src in model.sources:
        if src.price > 0 and src.item not in useful:
            paths.append({"kind": "dead_purchase", "item": src.item,
                          "detail": f"{src.item} costs {src.price} and can never be sold or used"})
    broke = _first_bankruptcy(model, cost)
    return paths + ([broke] if broke else [])


def _sequential_run(model: EconomyModel, cost: Cost) -> dict[str, Any]:
    """Serve the queue once from the start money; one cycle decides (a later cycle starts richer or poorer)."""
    money = model.start_money
    rows: list[dict[str, Any]] = []
    lock: dict[str, Any] | None = None
    for s in model.sinks:
        c = cost(s.item, s.qty)
        rows.append({"id": s.id, "item": s.item, "qty": s.qty, "cost": c, "reward": s.reward,
                     "profit": None if c is None else s.reward - c})
        if lock is None and (c is None or money < c):
            lock = {"sink": s.id, "money": money, "cost": c}
        if c is not None:
            money += s.reward - c
    profit = money - model.start_money
    run: dict[str, Any] = {"cycle_profit": profit, "sinks": rows, "lock": lock}
    if model.goal_money is not None and profit > 0 and lock is None:  # whole cycles, then order by order
        n = max(0, math.ceil((model.goal_money - model.start_money) / profit) - 1) * len(rows)
        gained = n // len(rows) * profit
        while model.start_money + gained < model.goal_money:
            gained += rows[n % len(rows)]["profit"]
            n += 1
        run["sinks_to_goal"] = n
    return run


def check_economy(model: EconomyModel) -> ValidationResult:
    """(a) profitable strategy reachable from the start, (b) a loss path, (c) no soft-locked start."""
    started = time.perf_counter()

    def result(passed: bool, summary: str, findings: list[Finding], evidence: dict[str, Any]) -> ValidationResult:
        return ValidationResult(id=GATE_ID, layer="L1", passed=passed, summary=summary, findings=findings,
                                evidence=evidence, duration_ms=int((time.perf_counter() - started) * 1000))

    if not model.has_money:
        return result(True, "not applicable: no money in this game", [], {"applicable": False, "game": model.name})
    cost = cost_function(model)
    useful = _useful_items(model)
    findings: list[Finding] = []
    start = model.start_money
    useful_prices = sorted((s.price, s.item) for s in model.sources if s.item in useful)
    cheapest = _Cheapest(item=useful_prices[0][1], price=useful_prices[0][0]) if useful_prices else None
    evidence: dict[str, Any] = {"applicable": True, "game": model.name, "start_money": start,
                                "goal_money": model.goal_money, "sequential": model.sequential,
                                "sources": len(model.sources), "sinks": len(model.sinks),
                                "converters": len(model.converters), "cheapest_useful_input": cheapest}

    # (a) a profitable strategy, reachable from the start money
    run: dict[str, Any] = {}
    options: list[dict[str, Any]] = []
    if model.sequential:
        run = _sequential_run(model, cost)
        profitable = run["cycle_profit"] > 0 and run["lock"] is None
        evidence |= {"cycle_profit": run["cycle_profit"], "sink_costs": run["sinks"][:EXAMPLES],
                     "sinks_to_goal": run.get("sinks_to_goal")}
        best = {"strategy": "serve the queue", "cycle_profit": run["cycle_profit"]} if profitable else None
        if not profitable:
            findings.append(Finding(message=f"no profitable strategy: serving the {len(model.sinks)} orders in turn "
                                            f"from {start} nets {run['cycle_profit']} per cycle"
                                            + (" and gets stuck" if run["lock"] else "")))
    else:
        for s in model.sinks:
            c = cost(s.item, s.qty)
            if c is not None:
                options.append({"id": s.id, "item": s.item, "qty": s.qty, "cost": c, "reward": s.reward,
                                "profit": s.reward - c})
        evidence["sink_costs"] = options[:EXAMPLES]
        winners = sorted((o for o in options if o["profit"] > 0 and o["cost"] <= start),
                         key=lambda o: (-o["profit"], o["id"]))
        best = winners[0] if winners else None
        if best is None:
            findings.append(Finding(message=f"no profitable strategy: no buy-craft-sell cycle earns more than it "
                                            f"costs with {start} to start"))
    evidence["profitable"] = best is not None
    evidence["best_strategy"] = best

    # (b) a path to loss
    losses = _loss_paths(model, cost, useful)
    evidence["loss_paths"] = losses[:EXAMPLES]
    evidence["loss_path_kinds"] = {k: sum(p["kind"] == k for p in losses) for k in sorted({p["kind"] for p in losses})}
    if not losses:
        findings.append(Finding(message="no loss path: no purchase can be wasted, nothing perishes and no trade loses "
                                        "money, so the player can never go broke"))

    # (c) the start is not soft-locked
    lock = None
    if cheapest is None:
        lock = "no buyable input leads to a sale or an order"
    elif start < cheapest["price"]:
        lock = f"start money {start} is below the cheapest useful input ({cheapest['item']} at {cheapest['price']})"
    elif model.sequential and run["lock"] is not None:
        at = run["lock"]
        lock = (f"{at['money']} in hand when {at['sink']} comes up, its inputs cost {at['cost']}" if at["cost"]
                is not None else f"{at['sink']} cannot be fulfilled from bought items")
    elif not model.sequential and not any(o["cost"] <= start for o in options):
        lock = f"start money {start} cannot pay the inputs of any sale or order"
    evidence["soft_lock"] = lock
    if lock:
        findings.append(Finding(message=f"soft-lock: {lock}"))

    passed = not findings
    facts = (f"profit path {'yes' if best else 'no'}, loss paths {len(losses)}, "
             f"start {start} vs cheapest useful input {cheapest['price'] if cheapest else None}")
    return result(passed, ("ok: " if passed else f"failed ({len(findings)} error(s)): ") + facts, findings, evidence)
