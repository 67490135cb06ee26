"""Build one run's governance and durability layers (`tier2.middleware.RunLayers`) from its context.

Each layer is constructed here, per run, from the run's hot-policy snapshot and request options; the order in
which they wrap the agent is declared once in `tier2.middleware.order`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tier2.middleware import RunLayers
from tier2.settings.loader import ModelRoute, Policy

__all__ = ["LayerContext", "build_run_layers"]


@dataclass
class LayerContext:
    """What a layer may need to know about its run."""

    run_id: str
    agent: str
    policy: Policy
    route_name: str
    route: ModelRoute
    runtime: Any  # tier2.runs.runtime.Runtime (Any: avoids an import cycle with generate)
    options: dict[str, Any] = field(default_factory=dict)  # per-run request options (budget, ...)


def build_run_layers(ctx: LayerContext) -> RunLayers:
    layers = RunLayers()
    return layers
