"""The run's L3 scorer: the ``l3_scorer`` route (and its fallbacks) → a scorer agent with the run's layers.

One model-call path for every agent: the scorer's models come from the same routing (`tier2.models.routing
.agent_models`, only routes that can see images: kind ``openai``), its layers from `RunContext.agent` (the run's one
budget ledger, breakers, tracing and trajectory) with the same call-id scheme, and its cost is priced by the same
recorder. Without an image-capable route, L3 uses the heuristic.
"""

from __future__ import annotations

from pathlib import Path

from tier2.assembly import build_scorer
from tier2.errors import ModelRouteError
from tier2.middleware import RunLayers
from tier2.middleware.recorder import CallRecorder, answered_by
from tier2.models.routing import AgentModels, agent_models
from tier2.runs.loop.context import RunContext
from tier2.settings.loader import Policy
from tier2.validators.l3 import ModelScorer
from tier2.validators.l3.visual import scorer_message

__all__ = ["l3_scorer"]

_SEES_IMAGES = frozenset({"openai"})


def l3_scorer(policy: Policy, ctx: RunContext | None = None) -> ModelScorer | None:
    """The scorer of run ``ctx`` (None: a standalone validation, no ledger or trajectory), or None when no
    image-capable route is configured. Building a model that cannot be configured (a missing API key) fails
    inside the scorer, so L3 falls back to the heuristic and says why."""
    name = policy.l3_route()
    if not name:
        return None
    try:
        chain = [r.model for _, r in policy.route_chain(name) if r.kind in _SEES_IMAGES]
    except ModelRouteError:
        return None
    if not chain:
        return None

    def models() -> AgentModels:
        if ctx is not None:
            return ctx.models("l3_scorer", kinds=_SEES_IMAGES, override=name, timeout_s=policy.l3_timeout_s)
        return agent_models(policy, "l3_scorer", name, kinds=_SEES_IMAGES, timeout_s=policy.l3_timeout_s)

    async def score(screenshots: list[Path], brief: str) -> tuple[str, str]:
        m = models()
        if ctx is not None:
            layers = ctx.agent("l3_scorer", models=m).layers
        else:  # no run: nothing to meter, but the recorder still names the model that answered
            layers = RunLayers(tracing=[CallRecorder("validate", "l3_scorer", policy.prices, None, chain)])
        agent = build_scorer(model=m.model, fallback_model=m.fallback, layers=layers,
                             cancelled=ctx.cancelled if ctx is not None else None)
        reply = await agent.reply(scorer_message(brief, screenshots))
        return reply.get_text_content() or "", f"{m.route_name} ({answered_by(agent) or m.route.model})"

    return score
