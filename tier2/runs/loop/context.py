"""What the parts of one run see of it. They never import the session (`tier2.runs.loop.session`).

* `RunContext` — frozen for the whole run: runtime, request, brief, id, its pack, policy snapshot, the run's one
  event path (``emit``: the event stream, then the caller's sink) and the request's scripted models (the one test
  seam).
  `RunContext.agent` gives any agent role — writer, designers, companions, the L3 scorer — its models and its
  layers from the policy: the one way a run builds an agent's parts.
* `RunView` — the run's mutable state, read-only. The session is the only writer of that state; add-ons read it
  when they are called (the pins at a compression, the reviewer after a turn).
* The step records the session hands out: `Opened`, `Turn`, `Check`, `WriterSetup`, `DesignOutcome`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentscope.message import Msg

from tier2.assembly.writer import WriterHandle
from tier2.context import PinsProvider
from tier2.events import Tier2Event
from tier2.middleware import RunLayers
from tier2.models.routing import AgentModels, agent_models
from tier2.packs import Pack
from tier2.plan import Plan
from tier2.runs.loop.layers import Additions, LayerContext, build_run_layers
from tier2.runs.loop.usage import Usage
from tier2.runs.process.policy import RunPolicy
from tier2.runs.process.runtime import Runtime
from tier2.runs.request import RunRequest
from tier2.settings.loader import Policy
from tier2.store.checkpoints import RunPosition
from tier2.store.run_store import Fence
from tier2.tools import ToolResults
from tier2.validators import ValidationReport, ValidationRunner
from tier2.validators.l2 import completion_map

__all__ = ["Check", "DesignOutcome", "Emit", "Opened", "RoleParts", "RunContext", "RunView", "Turn", "WriterSetup"]

#: the run's one event path: appended to the run's stream (fenced), then given to the caller's sink
Emit = Callable[[Tier2Event], Awaitable[None]]


@dataclass(frozen=True)
class Opened:
    """`RunSession.open`: the project the run works on, its record written and its start announced."""

    project: Path
    project_id: str
    model_info: dict[str, Any]
    #: the run's tenant as recorded (None: a run with no recorded tenant)
    tenant: str | None = None


@dataclass(frozen=True)
class Turn:
    """One agent turn: its final message and whether it hit ``max_iters``."""

    final: Msg | None
    exceeded: bool


@dataclass(frozen=True)
class Check:
    """`RunSession.validate`: the final L1 report of the project as it is now."""

    report: ValidationReport
    report_path: Path


@dataclass(frozen=True)
class WriterSetup:
    """`RunSession.setup`: the writer agent with its layers, the validation runner and the tools' results log."""

    handle: WriterHandle
    runner: ValidationRunner
    results: ToolResults


@dataclass
class DesignOutcome:
    """What the design phase leaves for validation and delivery."""

    spec: dict[str, Any]
    plan: Plan
    goal: str
    reused: list[str] = field(default_factory=list)
    rerun: list[str] = field(default_factory=list)
    #: a person edited the design files since tier2 wrote them (never set by a re-converged spec)
    edited: bool = False
    #: the spec of the previous goal version (None: the first)
    previous_spec: dict[str, Any] | None = None
    #: the plan nodes this run executed (the rest were reused): the plan metrics
    executed: set[str] = field(default_factory=set)
    #: the nodes re-executed after a failure (evidence): the recovery distance
    recovered: set[str] = field(default_factory=set)
    #: how the plan ends when the design decides it (``{"kind": "blocked"|"unverified", "reason", "options"}``)
    end: dict[str, Any] = field(default_factory=dict)

    def completion(self, report: ValidationReport | None, why: str = "") -> dict[str, Any]:
        gates = [g for g in report.gates if g.layer == "L2"] if report is not None else None
        kept = None if report is not None else {  # no build this run: what the last build verified still holds
            n.removeprefix("req."): list(node.evidence.get("gates") or []) for n, node in self.plan.nodes.items()
            if n.startswith("req.") and node.status == "verified"}
        return completion_map(self.spec, gates, why, kept)


@dataclass(frozen=True)
class RoleParts:
    """What the policy gives one agent role in this run: its models (route + fallbacks) and its layers."""

    models: AgentModels
    layers: RunLayers


@dataclass(frozen=True)
class RunContext:
    """One run, as every part of it sees it (frozen: nothing here changes while the run lives)."""

    rt: Runtime
    req: RunRequest
    brief: str
    run_id: str
    run_policy: RunPolicy
    emit: Emit
    #: the writer's models (its route, or the run's ``--model``), built once when the run starts
    writer: AgentModels
    #: the run's capability pack, resolved once when the run starts (`tier2.runs.projects.run_pack_of`): every
    #: part of the run builds, validates and prompts with it, never with the runtime's default
    pack: Pack

    @property
    def policy(self) -> Policy:
        return self.run_policy.policy

    @property
    def fence(self) -> Fence | None:
        return self.req.fence

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.req.options)

    @property
    def cancelled(self) -> Callable[[], bool] | None:
        cancel = self.req.cancel
        return (lambda: cancel.is_set()) if cancel is not None else None

    def models(self, role: str, *, kinds: frozenset[str] | None = None, override: str | None = None,
               timeout_s: float | None = None) -> AgentModels:
        """The role's models: its route (the run's ``--model`` for the writer), or the request's scripted model."""
        return agent_models(self.policy, role, override or (self.req.model if role == "writer" else None),
                            self.req.scripted_models, kinds=kinds, timeout_s=timeout_s)

    def agent(self, role: str, *, durable: bool = False, project: Path | None = None,
              progress: Callable[[], RunPosition] = RunPosition, pins: PinsProvider | None = None,
              additions: Sequence[Additions] = (), models: AgentModels | None = None) -> RoleParts:
        """The role's models and its layers on this run's ledger, breakers, tracing and trajectory (``durable``:
        checkpoints and the operation ledger too — the writer, whose state is the run's resume point)."""
        m = models or self.models(role)
        layers = build_run_layers(LayerContext(
            run_id=self.run_id, agent=role, policy=self.policy, route_name=m.route_name, route=m.route,
            runtime=self.rt, emit=self.emit, options=self.options, fence=self.fence, progress=progress,
            durable=durable, project=project, pins=pins), additions)
        return RoleParts(m, layers)


class RunView(Protocol):
    """The run's mutable state, read-only (the session writes it)."""

    @property
    def opened(self) -> Opened | None: ...

    @property
    def writer(self) -> WriterSetup | None: ...

    @property
    def design(self) -> DesignOutcome | None: ...

    @property
    def last_check(self) -> Check | None: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def task_text(self) -> str:
        """The writer's task message of this run (the run request), verbatim: pinned through compressions."""
        ...

    @property
    def current_phase(self) -> str: ...
