"""The shop genre's data gates: cross-table linkage and economy of its crafting tables (no browser).

``check_tier2_tables(tables)`` runs both gates on a shop project's parsed ``data/*.json`` (keys ``"items.json"``
or ``"items"``); the adapters also read real-game crafting data (minecraft-data, GRMC, farming-amcolash), which the
tests use to hold the gates to real economies. Genre code: it lives with the genre that owns it (``checks.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tier2.validators.base import Finding, ValidationResult

from .economy import GATE_ID as ECONOMY_GATE_ID
from .economy import Converter, EconomyModel, Sink, Source, check_economy, cost_function
from .economy_adapters import economy_from_farming, economy_from_grmc, economy_from_tier2_tables
from .graph import (
    CraftGraph,
    Demand,
    Recipe,
    from_grmc,
    from_minecraft,
    from_tier2_tables,
    table,
)
from .linkage import GATE_ID as LINKAGE_GATE_ID
from .linkage import check_linkage, reachable_items, self_loops

__all__ = [
    "ECONOMY_GATE_ID", "LINKAGE_GATE_ID", "Converter", "CraftGraph", "Demand", "EconomyModel", "Recipe", "Sink",
    "Source", "check_economy", "check_linkage", "check_tier2_tables", "cost_function", "economy_from_farming",
    "economy_from_grmc", "economy_from_tier2_tables", "from_grmc", "from_minecraft", "from_tier2_tables",
    "reachable_items", "self_loops",
]


def check_tier2_tables(tables: dict[str, Any], strict_acyclic: bool = False) -> list[ValidationResult]:
    """Both data gates on a tier2 game's tables: [l1.data_linkage, l1.economy]. Never raises: unreadable tables
    fail the gate that could not read them."""
    out: list[ValidationResult] = []
    missing = [f"{name}.json" for name in ("items", "recipes", "orders", "prices", "economy")
               if not table(tables, name)]
    gates: tuple[tuple[str, Callable[[], ValidationResult]], ...] = (
        (LINKAGE_GATE_ID, lambda: check_linkage(from_tier2_tables(tables), strict_acyclic)),
        (ECONOMY_GATE_ID, lambda: check_economy(economy_from_tier2_tables(tables))))
    for gate_id, run in gates:
        try:
            out.append(run())
        except Exception as exc:  # a gate reports, it never crashes the runner
            out.append(ValidationResult(id=gate_id, layer="L1", passed=False,
                                        summary=f"failed: tables unreadable ({type(exc).__name__})",
                                        findings=[Finding(message=f"could not read the tables: {exc}")],
                                        evidence={"error": repr(exc)}))
    if missing:
        link = out[0]
        link.findings.insert(0, Finding(message=f"missing, empty or not an object: {', '.join(missing)}"))
        link.evidence["missing_tables"] = missing
        if link.passed:
            link.passed = False
            link.summary = f"failed: missing table(s) {', '.join(missing)}; " + link.summary.removeprefix("ok: ")
    return out
