"""Adapters from real game data to the generic EconomyModel (tier2 tables, farming-amcolash crops, GRMC)."""

from __future__ import annotations

import math
from typing import Any

from .economy import Converter, EconomyModel, Sink, Source
from .graph import from_tier2_tables, rows, table

__all__ = ["economy_from_farming", "economy_from_grmc", "economy_from_tier2_tables"]


def _num(v: Any) -> float | None:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    return v if ok else None


def economy_from_tier2_tables(tables: dict[str, Any]) -> EconomyModel:
    """A tier2 game (docs/game-contract.md): raws bought at ``prices.buy``, recipes convert, orders are a queue.

    ``prices.sell`` (older tier2 games carry it; today's template has none) is left out on purpose: there is no
    sell action (the price was only shown), so the only income is order rewards, served in order and cycling.
    """
    graph = from_tier2_tables(tables)
    buy = table(tables, "prices").get("buy")
    sources = [Source(item, p) for item, p in (buy.items() if isinstance(buy, dict) else [])
               if item in graph.raw and _num(p) is not None]
    rewards = [_num(o.get("reward")) or 0 for _, o in rows(table(tables, "orders"), "orders")]  # one per demand
    eco = table(tables, "economy")
    day_ms = _num(eco.get("day_length_ms"))
    return EconomyModel(
        has_money=True, start_money=_num(eco.get("start_money")) or 0,
        sources=sources,
        sinks=[Sink(d.id, d.item, d.qty, r) for d, r in zip(graph.demands, rewards, strict=True)],
        converters=[Converter(r.id, dict(r.inputs), dict(r.outputs)) for r in graph.recipes],
        sequential=True, goal_money=_num(eco.get("goal_money")),
        time_limit_s=day_ms / 1000 if day_ms else None, name=str(table(tables, "theme").get("title", "tier2")),
    )


def economy_from_farming(crops_json: dict[str, Any], start_money: float | None = None) -> EconomyModel:
    """farming-amcolash: plant a crop for ``cost``, it ripens after ``timeToRipe`` s and sells for ``revenue``;
    left ``timeToDeath`` s after ripening it dies. Start money: ``startingMoney`` (300) unless given."""
    sources, converters, sinks = [], [], []
    for crop in crops_json.get("crops") or []:
        if not isinstance(crop, dict) or not isinstance(crop.get("name"), str):
            continue
        name, cost, revenue = crop["name"], _num(crop.get("cost")), _num(crop.get("revenue"))
        if cost is None or revenue is None:
            continue
        sources.append(Source(f"{name}_seed", cost))
        converters.append(Converter(f"grow_{name}", {f"{name}_seed": 1}, {name: 1},
                                    duration_s=_num(crop.get("timeToRipe")) or 0.0,
                                    perish_s=_num(crop.get("timeToDeath"))))
        sinks.append(Sink(f"harvest_{name}", name, 1, revenue))
    start = start_money if start_money is not None else _num(crops_json.get("startingMoney")) or 0
    return EconomyModel(has_money=True, start_money=start, sources=sources, sinks=sinks, converters=converters,
                        sequential=False, name="farming-amcolash")


def economy_from_grmc(tables: dict[str, Any]) -> EconomyModel:
    """GRMC kitchen: dishes score points against a level's target, nothing costs money -> not applicable."""
    return EconomyModel(has_money=False, name="grmc")
