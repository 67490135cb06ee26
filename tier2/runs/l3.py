"""The run's L3 scorer: the ``l3_scorer`` route (and its fallbacks) → a scorer agent with the run's layers.

One model-call path for every agent: the scorer's model is built by the same routing (`tier2.models.routing`),
its calls go through the same onion (`build_run_layers` with ``agent="l3_scorer"``: the run's one budget ledger,
breakers, tracing and trajectory) with the same call-id scheme, and its cost is priced by the same table. Only
OpenAI-compatible routes can score images (the offline policy cannot see); without one, L3 uses the heuristic.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tier2.assembly import build_scorer
from tier2.errors import ModelRouteError
from tier2.middleware import RunLayers
from tier2.middleware.recorder import CallRecorder, answered_by
from tier2.models.routing import build_fallback, build_model
from tier2.runs.layers import LayerContext, build_run_layers
from tier2.runs.runtime import Runtime
from tier2.settings.loader import Policy
from tier2.validators.l3 import ModelScorer
from tier2.validators.l3.visual import scorer_message

__all__ = ["l3_scorer"]


def l3_scorer(policy: Policy, *, rt: Runtime | None = None, run_id: str | None = None,
              options: dict[str, Any] | None = None, cancelled: Callable[[], bool] | None = None,
              ) -> ModelScorer | None:
    """The scorer for run ``run_id`` (without ``rt`` and ``run_id``: a standalone validation, no ledger or
    trajectory), or None
    when no image-capable route is configured. Building a model that cannot be configured (a missing API key)
    fails inside the scorer, so L3 falls back to the heuristic and says why."""
    name = policy.l3_route()
    if not name:
        return None
    try:
        chain = [(n, r) for n, r in policy.route_chain(name) if r.kind == "openai"]
    except ModelRouteError:
        return None
    if not chain:
        return None
    (first, route), rest = chain[0], chain[1:]

    async def score(screenshots: list[Path], brief: str) -> tuple[str, str]:
        model = build_model(first, route, policy.l3_timeout_s)
        fallback = build_fallback(rest, policy.l3_timeout_s)
        if rt is not None and run_id is not None:
            layers = build_run_layers(LayerContext(run_id=run_id, agent="l3_scorer", policy=policy, route_name=first,
                                                   route=route, runtime=rt, options=options or {}, durable=False))
        else:  # no run: nothing to meter, but the recorder still names the model that answered
            layers = RunLayers(tracing=[CallRecorder("validate", "l3_scorer", policy.prices, None,
                                                     [r.model for _, r in chain])])
        agent = build_scorer(model=model, fallback_model=fallback, layers=layers, cancelled=cancelled)
        reply = await agent.reply(scorer_message(brief, screenshots))
        return reply.get_text_content() or "", f"{first} ({answered_by(agent) or route.model})"

    return score
