"""Build one agent's governance and durability layers (`tier2.middleware.RunLayers`) for its run.

Each layer is constructed here, per run and agent, from the run's hot-policy snapshot and request options, with
the run add-ons' contributions (`Additions`) in their slots — complete at construction, never patched after. The
order in which the slots wrap the agent is declared once in `tier2.middleware.order`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentscope.middleware import MiddlewareBase, TracingMiddleware
from agentscope.tool import ToolBase

from tier2.context import ContextMiddleware, PinsProvider
from tier2.events import Tier2Event
from tier2.middleware import RunLayers
from tier2.middleware.breakers import BreakersMiddleware
from tier2.middleware.budget import build_budget_layer, spend_guard_of
from tier2.middleware.checkpoint import CheckpointMiddleware
from tier2.middleware.operations import EffectHook, OperationsMiddleware
from tier2.middleware.recorder import CallRecorder
from tier2.runs.process.runtime import Runtime
from tier2.runs.tenancy import check_run_route
from tier2.settings.loader import ModelRoute, Policy
from tier2.store.checkpoints import CheckpointStore, RunPosition
from tier2.store.operations import OperationStore
from tier2.store.run_store import Fence
from tier2.store.trajectory import TrajectoryStore

__all__ = ["Additions", "LayerContext", "add_layers", "build_run_layers"]


@dataclass(frozen=True)
class Additions:
    """What a run add-on (case library, docs hints, companions, the workspace) adds to an agent: middlewares for
    its slots (appended after the run's own layers of that slot, add-ons in the order the run lists them) and
    tools."""

    checkpoint: tuple[MiddlewareBase, ...] = ()
    breakers: tuple[MiddlewareBase, ...] = ()
    learning: tuple[MiddlewareBase, ...] = ()
    tools: tuple[ToolBase, ...] = ()
    #: hooks the operation ledger calls after a side effect and before committing it (the workspace's snapshot)
    effects: tuple[EffectHook, ...] = ()


@dataclass(frozen=True)
class LayerContext:
    """What a layer may need to know about its run."""

    run_id: str
    agent: str
    policy: Policy
    route_name: str
    route: ModelRoute
    runtime: Runtime
    #: how the agent's events are published: the run's one event path (`tier2.runs.loop.context.RunContext.emit`)
    emit: Callable[[Tier2Event], Awaitable[None]]
    options: dict[str, Any] = field(default_factory=dict)  # per-run request options (budget, ...)
    fence: Fence | None = None  # the attempt's fencing token (worker runs): checkpoints and operations check it
    progress: Callable[[], RunPosition] = RunPosition  # the run's position (round, usage, step) stored with checkpoints
    #: checkpoints and the operation ledger: only for the agent whose state is the run's resume point (the
    #: writer); a one-shot agent (the L3 scorer) is metered, traced and bounded but never checkpointed
    durable: bool = True
    #: the agent's project (tool outputs cut by the context layer are saved under its ``.tier2/artifacts``)
    project: Path | None = None
    #: what the context layer pins in the agent's context at each compression (the run's goal, requirements...)
    pins: PinsProvider | None = None


def build_run_layers(ctx: LayerContext, additions: Sequence[Additions] = ()) -> RunLayers:
    check_run_route(ctx.policy, ctx.route_name, ctx.options)  # the tenant's allowed routes, at run time too
    layers = RunLayers()
    # tracing: AgentScope's agent/chat/execute_tool spans, then tier2's call recorder (trajectory + cost on the span)
    chain = [r.model for _, r in ctx.policy.route_chain(ctx.route_name)]
    layers.tracing = [TracingMiddleware(), CallRecorder(ctx.run_id, ctx.agent, ctx.policy.prices, TrajectoryStore(
        ctx.runtime.store.r, ctx.runtime.store.keys), chain, redactor=ctx.runtime.redactor)]
    store = ctx.runtime.store  # budget: one ledger per run in Redis, shared by every agent of the run
    layers.budget = build_budget_layer(store.r, store.keys, ctx.run_id, ctx.policy.budget, ctx.policy.prices,
                                       ctx.route.model, ctx.options.get("budget"),
                                       ceiling=ctx.options.get("budget_ceiling"))
    layers.breakers = [BreakersMiddleware(ctx.run_id, ctx.policy.breakers, deadline_at=_run_deadline(layers))]
    if ctx.policy.context.enabled:  # the agent's context budget (its role's entry in config/policy/context.yaml)
        layers.context = [ContextMiddleware(ctx.policy.context.for_agent(ctx.agent), role=ctx.agent,
                                            run_id=ctx.run_id, project_root=ctx.project, pins=ctx.pins,
                                            emit=ctx.emit)]
    # durability: the resume point after every step; side effects recorded by operation id
    if ctx.durable:
        layers.checkpoint = [CheckpointMiddleware(CheckpointStore(store.r, store.keys, ctx.run_id), ctx.fence,
                                                  ctx.progress)]
        layers.operations = [OperationsMiddleware(OperationStore(store.r, store.keys, ctx.run_id), ctx.fence,
                                                  frozenset(ctx.policy.durability.side_effect_tools),
                                                  effects=[h for a in additions for h in a.effects])]
    return add_layers(layers, additions)


def add_layers(layers: RunLayers, additions: Sequence[Additions]) -> RunLayers:
    """``layers`` with the add-ons' middlewares after the run's own in each slot, in the order given."""
    return dataclasses.replace(
        layers, checkpoint=[*layers.checkpoint, *(m for a in additions for m in a.checkpoint)],
        breakers=[*layers.breakers, *(m for a in additions for m in a.breakers)],
        learning=[*layers.learning, *(m for a in additions for m in a.learning)])


def _run_deadline(layers: RunLayers) -> Callable[[], float | None] | None:
    """The budget ledger's wall-clock deadline (UNIX time): the breakers' outer bound on every model and tool call
    (the ledger itself refuses a call that would *start* past it)."""
    guard = spend_guard_of(layers.budget)
    if guard is None or guard.ledger.caps.deadline_s is None:
        return None
    return guard.ledger.deadline_at  # as recorded in Redis: a resumed attempt keeps the first attempt's start
