"""Typed tier2 run events (frozen, discriminated by ``type``).

Events are persisted per run in a Redis stream with a monotonic integer id (`store.run_store`) and
streamed to clients (CLI progress, SSE). Build them only through these models, never as ad-hoc dicts.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "Phase",
    "RunStatus",
    "RunStarted",
    "PhaseChanged",
    "ModelCalled",
    "ToolStarted",
    "ToolFinished",
    "GateResult",
    "AttemptStarted",
    "CancelRequested",
    "RunFinished",
    "PlanChanged",
    "CaseHit",
    "CaseRecorded",
    "PolicyRefused",
    "ContextCompressed",
    "CompanionCalled",
    "DocsHint",
    "GoalVersioned",
    "WriterTask",
    "WriterTasks",
    "Tier2Event",
    "EVENT_ADAPTER",
    "TERMINAL_STATUSES",
]

Phase = Literal["setup", "design", "implement", "validate", "deliver"]
RunStatus = Literal["queued", "running", "delivered", "failed", "stopped"]
TERMINAL_STATUSES: frozenset[str] = frozenset({"delivered", "failed", "stopped"})


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    run_id: str
    at: float = Field(default_factory=time.time)


class RunStarted(_Event):
    type: Literal["run_started"] = "run_started"
    brief: str
    project_id: str
    project_dir: str
    model_route: str
    model: str
    pack: str


class PhaseChanged(_Event):
    type: Literal["phase_changed"] = "phase_changed"
    phase: Phase
    detail: str = ""


class ModelCalled(_Event):
    type: Literal["model_called"] = "model_called"
    step: int
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None  # None when the model has no price in the table


class ToolStarted(_Event):
    type: Literal["tool_started"] = "tool_started"
    step: int
    tool: str
    call_id: str
    summary: str = ""


class ToolFinished(_Event):
    type: Literal["tool_finished"] = "tool_finished"
    step: int
    tool: str
    call_id: str
    state: str
    summary: str = ""


class GateResult(_Event):
    type: Literal["gate_result"] = "gate_result"
    gate_id: str
    layer: Literal["L1", "L2", "L3"]
    passed: bool
    summary: str = ""


class AttemptStarted(_Event):
    """A worker took the run under a new lease; ``attempt`` is also its fencing token."""

    type: Literal["attempt_started"] = "attempt_started"
    attempt: int
    worker: str
    resumed_from: int | None = None  # checkpoint number the attempt continues after (None: from the start)
    stage: str = ""


class CancelRequested(_Event):
    type: Literal["cancel_requested"] = "cancel_requested"
    by: str = ""


class RunFinished(_Event):
    type: Literal["run_finished"] = "run_finished"
    status: Literal["delivered", "failed", "stopped"]
    stop_reason: str
    delivery_path: str | None = None


class PlanChanged(_Event):
    """A plan node (design work, a writer task, the build, the validation, a spec requirement, the delivery) changed
    status, with the evidence of the change (`tier2.plan`)."""

    type: Literal["plan_changed"] = "plan_changed"
    node: str
    kind: str
    status: Literal["pending", "ready", "running", "verified", "failed", "blocked", "invalidated", "skipped"]
    goal_version: int = 1
    plan_version: int = 0
    evidence: dict[str, Any] = Field(default_factory=dict)


class CaseHit(_Event):
    """The debug case library matched a failure (`tier2.learning`): a fixer applied with no model call
    (``applied``, ``fixed`` once the gates re-validated), a verified fix offered to the writer (``offered``), a
    near match recalled through mem0 (``recalled``) or a taxonomy rule given as advice (``advised``)."""

    type: Literal["case_hit"] = "case_hit"
    signature: str
    gate: str
    shape: str
    action: Literal["applied", "offered", "recalled", "advised"]
    scope: str = ""  # engine | tenant (never the tenant's id)
    fixer: str | None = None
    fixed: bool | None = None  # applied: did the gates pass the failing gate afterwards
    files: list[str] = Field(default_factory=list)
    score: float | None = None  # recalled: similarity
    #: model calls and tokens the fix replaced: what the case's fix took when it was found (``estimate``
    #: "recorded"), else the one model call that would have had to read the failure ("minimum")
    replaced_model_calls: int = 0
    replaced_tokens: int = 0
    estimate: Literal["recorded", "minimum", "none"] = "none"


class CaseRecorded(_Event):
    """A fix verified by the gates became a case (signature → diff, files, rule, fixer)."""

    type: Literal["case_recorded"] = "case_recorded"
    signature: str
    gate: str
    shape: str
    scope: str  # engine | tenant
    fixer: str | None = None
    files: list[str] = Field(default_factory=list)
    verified: int = 1


class PolicyRefused(_Event):
    """The hot-policy files on disk hold an edit that was refused (it does not validate, or it raises a ceiling of
    the security config) when this run took its snapshot: the run works under ``policy``, the snapshot still in
    effect, not under the edit (``refused``: the refused files' hash)."""

    type: Literal["policy_refused"] = "policy_refused"
    policy: str
    refused: str
    reason: str


class ContextCompressed(_Event):
    """An agent's older conversation was folded into its summary (`tier2.context`): ``covered_through`` names the last
    block the summary covers (``<message id>#<block index>``; ``covered_blocks``: all compressions together)."""

    type: Literal["context_compressed"] = "context_compressed"
    agent: str
    seq: int
    covered_through: str
    covered_blocks: int
    tokens_before: int
    tokens_after: int
    budget_tokens: int
    pinned: int


class CompanionCalled(_Event):
    """A call of a read-only companion of the writer (`tier2.companions`): the explorer answering an ``Explore``
    question, or the reviewer reviewing a writer turn. Its model calls are on the run's ledger and in the trajectory
    under ``agent``; it never writes files and never decides the run."""

    type: Literal["companion_called"] = "companion_called"
    agent: Literal["explorer", "reviewer"]
    trigger: str  # the explorer's question, or why the reviewer ran (failed_check, failed_validation, every_turn)
    state: Literal["answered", "refused", "failed", "stopped"]
    duration_ms: int = 0
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    findings: int = 0  # the reviewer's findings
    summary: str = ""  # the first line of the answer, or why it was refused/stopped


class DocsHint(_Event):
    """A failing Build/RunGame result named an engine API: the docs sections for it were appended to the result
    the writer reads (`tier2.learning.docs_hints`)."""

    type: Literal["docs_hint"] = "docs_hint"
    tool: str
    mentions: list[str] = Field(default_factory=list)  # the API expressions the failure names
    sections: list[str] = Field(default_factory=list)  # the section ids appended


class GoalVersioned(_Event):
    """A follow-up (or the leader, a person editing the design, evidence from a gate) made goal version
    ``goal_version`` of the thread's project, with its plan diff; the version is stored append-only
    (`tier2.store.plans`, ``GET /v1/threads/{id}/plan?version=N``). ``diff``: ``requirements`` (``added``,
    ``changed`` (with ``was``), ``removed``: ``[{id, text}]``), ``invalidated`` (node id → why), ``reused``
    (node ids kept with no re-run)."""

    type: Literal["goal_versioned"] = "goal_versioned"
    goal_version: int
    author: Literal["user", "leader", "person", "evidence"]
    text: str
    diff: dict[str, Any] = Field(default_factory=dict)


class WriterTask(BaseModel):
    """One task of the writer's task list (an AgentScope task: ``status`` is its state), linked to plan nodes."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    subject: str
    status: Literal["pending", "in_progress", "completed"]
    nodes: list[str] = Field(default_factory=list)  # plan node ids (``req.R3``, ``design.assets``)


class WriterTasks(_Event):
    """The writer's whole task list, each time it changes (the latest event is the current list)."""

    type: Literal["writer_tasks"] = "writer_tasks"
    tasks: list[WriterTask] = Field(default_factory=list)


Tier2Event = Annotated[
    RunStarted | PhaseChanged | ModelCalled | ToolStarted | ToolFinished | GateResult | AttemptStarted | CancelRequested
    | RunFinished | PlanChanged | PolicyRefused | CaseHit | CaseRecorded | ContextCompressed | CompanionCalled
    | DocsHint | GoalVersioned | WriterTasks,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Tier2Event] = TypeAdapter(Tier2Event)
