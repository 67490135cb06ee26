"""Bankruptcy search for the economy gate: can a careless player end up stuck (broke, nothing useful in stock)?

Rule of tier2's ``src/state.js`` (``isStuck``): money below the cheapest price, nothing craftable, the current order
not deliverable -> lost. A search over purchase counts finds such a state or gives up after NODE_LIMIT nodes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .economy_model import Converter, EconomyModel, Sink

__all__ = ["MAX_DEPTH", "NODE_LIMIT", "bankruptcy_path", "makers_of", "take"]

MAX_DEPTH = 12
NODE_LIMIT = 20_000


def makers_of(converters: Iterable[Converter]) -> dict[str, list[Converter]]:
    """item -> the converters that output it."""
    makers: dict[str, list[Converter]] = {}
    for c in converters:
        for out, n in c.outputs.items():
            if n > 0:
                makers.setdefault(out, []).append(c)
    return makers


def take(stock: dict[str, int], makers: dict[str, list[Converter]], item: str, qty: int, depth: int = 0) -> bool:
    """Take ``qty`` × ``item`` out of ``stock``, crafting whole batches from it as needed; False (stock untouched)
    when impossible. One converter per missing item (conservative)."""
    have = stock.get(item, 0)
    if have >= qty:
        stock[item] = have - qty
        return True
    for conv in makers.get(item, ()) if depth <= MAX_DEPTH else ():
        trial = dict(stock)
        batches = -(-(qty - have) // conv.outputs[item])
        if all(take(trial, makers, i, q * batches, depth + 1) for i, q in conv.inputs.items()):
            for out, n in conv.outputs.items():
                trial[out] = trial.get(out, 0) + n * batches
            if trial.get(item, 0) >= qty:
                trial[item] -= qty
                stock.clear()
                stock.update(trial)
                return True
    return False


def bankruptcy_path(model: EconomyModel, targets: list[Sink], money: float) -> dict[str, Any] | None:
    """A purchase list, from ``money`` and an empty stock, that leaves less than the cheapest price while what was
    bought can never fill a target sink: the player is stuck, i.e. bankrupt. Depth-first over how many of each
    source to buy (dearest first, most first), at most NODE_LIMIT nodes."""
    if not model.sources or len(model.sources) > 64:
        return None
    cheapest = min(s.price for s in model.sources)
    if cheapest <= 0 or money < cheapest:
        return None
    makers = makers_of(model.converters)
    priced = sorted(model.sources, key=lambda s: (-s.price, s.item))
    budget = [NODE_LIMIT]

    def productive(stock: dict[str, int]) -> bool:
        return any(take(dict(stock), makers, t.item, t.qty) for t in targets)

    def dfs(j: int, money: float, stock: dict[str, int]) -> tuple[dict[str, int], float] | None:
        budget[0] -= 1
        if money < cheapest:
            return stock, money
        if j == len(priced) or budget[0] <= 0:
            return None
        item, price = priced[j].item, priced[j].price
        lo, hi = 0, int(money // price)  # the most of this item that still cannot fill a target (monotone)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if not productive({**stock, item: stock.get(item, 0) + mid}) else (lo, mid - 1)
        for k in range(lo, -1, -1):
            found = dfs(j + 1, money - k * price, {**stock, item: stock.get(item, 0) + k} if k else stock)
            if found:
                return found
        return None

    found = None if productive({}) else dfs(0, money, {})
    if not found:
        return None
    bought, left = {k: v for k, v in found[0].items() if v}, found[1]
    return {"kind": "bankruptcy", "money": money, "buy": bought, "money_left": left,
            "detail": f"with {money}, buy {', '.join(f'{n} {i}' for i, n in sorted(bought.items()))}: {left} left, "
                      f"below the cheapest price {cheapest}, and nothing bought can make "
                      f"{' or '.join(sorted({t.item for t in targets}))}: stuck (bankrupt)"}
