"""Request and response models of every HTTP route: what ``/openapi.json`` documents and game-cloud codes against.

Response models are allow-lists (``extra="forbid"``): a view (`tier2.service.views`) fills them from the fields
they declare and nothing else, so a field added to a stored record never reaches a client until it is added
here. Free-form parts (``usage``, ``options``, a gate's ``evidence``) are objects of JSON values; their strings
are masked by the views (no server path, no pid).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationInfo, field_validator

from tier2.errors import ErrorCode
from tier2.service.text import Ident, Line, Text
from tier2.settings.loader import BudgetOverride
from tier2.store.lifecycle import RunStatus

__all__ = [
    "AcceptedLinks", "AttemptView", "BrowserHealth", "BuildView", "CancelAccepted", "DeliveryView", "ErrorBody",
    "ErrorQuota",
    "ErrorField", "ErrorInfo", "GateView", "HealthView", "ModelCallView", "ModelTotals", "ProbeView",
    "ProjectImport", "ProjectLoaded", "ProjectSource", "ProjectView", "PreviewView", "RedisHealth", "ResolvedModel",
    "RunAccepted", "RunBudget", "RunCreate", "RunLinks", "RunView", "SourceFile", "SourceView", "StreamToken",
    "ThreadRunView", "ThreadView", "ToolCallView", "ToolTotals", "ToolchainHealth", "TrajectorySummary",
    "TrajectoryView", "VerificationView",
]


class _Out(BaseModel):
    """A response model: exactly the declared fields."""

    model_config = ConfigDict(extra="forbid")


# -- requests ----------------------------------------------------------------------------------------------------


class RunBudget(BudgetOverride):
    """A run's own limits as the API takes them: JSON numbers only (``true`` or ``"5"`` is a 422, not 1 or 5);
    ``tokens`` a whole number, ``usd`` and ``deadline_s`` any finite number."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    @field_validator("usd", "tokens", "deadline_s", mode="before")
    @classmethod
    def _strict_finite(cls, value: Any, info: ValidationInfo) -> Any:
        """``Infinity``/``NaN``/``1e400`` (Python's JSON parser takes them) are "not a finite number" (a whole one
        for ``tokens``): strict mode would otherwise refuse the text the base model turns them into."""
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("Input should be a finite " + ("integer" if info.field_name == "tokens" else "number"))
        return value


class RunCreate(BaseModel):
    """``POST /v1/runs``: a brief, optionally on a loaded project or as a follow-up in a thread."""

    model_config = ConfigDict(extra="forbid")
    brief: Annotated[Text, StringConstraints(max_length=100_000)] = Field(
        description="The game brief, a sentence or a few paragraphs (valid UTF-8 text, no NUL/control characters)")
    model: Annotated[Line, StringConstraints(max_length=128)] | None = Field(
        default=None, description="Model route from config/policy/models.yaml")
    project_id: Ident | None = Field(default=None,
                                     description="Run on a loaded project (POST /v1/projects) instead of a new one")
    thread_id: Ident | None = Field(default=None,
                                    description="A follow-up in this thread: same project, the conversation continues")
    budget: RunBudget | None = Field(default=None, description="This run's limits (usd, tokens, deadline_s: JSON "
                                                                "numbers); unset ones come from the hot config")
    pause_after: Literal["design"] | None = Field(
        default=None, description="Stop after this phase: the run ends `stopped` (paused after design) with "
        "docs/design/ and design/spec.json written; continue with a follow-up in the thread")
    workspace: Literal["local", "isolated", "docker"] | None = Field(
        default=None, description="Workspace kind; only kinds the security config allows (`[sandbox]`), default "
        "from the hot policy")
    pack: Ident | None = Field(default=None, description="The capability pack (engine) to build with: one of the "
                               "security config's allowed_packs that is installed (default: the project's pack on "
                               "a follow-up or loaded project — another is refused — else the default pack)")


class ProjectImport(BaseModel):
    """``POST /v1/projects`` as JSON: a directory on the server, inside ``TIER2_IMPORT_ROOT``."""

    model_config = ConfigDict(extra="forbid")
    path: Line = Field(min_length=1, description="a directory inside the import root")


# -- errors ------------------------------------------------------------------------------------------------------


class ErrorField(_Out):
    loc: str = Field(description="where in the request, e.g. body.budget.usd (never the value sent)")
    type: str
    message: str


class ErrorQuota(_Out):
    name: str = Field(description="the tenant limit: disk_bytes, snapshot_bytes or snapshot_blob_bytes")
    used: int = Field(description="bytes used (for snapshot_blob_bytes: the file's size)")
    limit: int


class ErrorInfo(_Out):
    code: ErrorCode
    message: str = Field(description="for people: no server path, no exception text")
    fields: list[ErrorField] | None = Field(default=None, description="422: the fields that are wrong")
    quota: ErrorQuota | None = Field(default=None, description="507: the storage quota that is full")


class ErrorBody(_Out):
    """Every 4xx/5xx answer."""

    error: ErrorInfo
    detail: str = Field(description="the message again, for clients of FastAPI's default error shape")


# -- runs ----------------------------------------------------------------------------------------------------------


class AcceptedLinks(_Out):
    self: str
    events: str
    delivery: str
    cancel: str


class RunLinks(AcceptedLinks):
    game: str = Field(description="the built game's page as a file (artifacts/dist/index.html): a sandboxed "
                                  "download, not playable from there; play it through `play`")
    play: str = Field(description="POST: a play token and the URL that plays the game in a sandboxed iframe")


class RunAccepted(_Out):
    """``202``: the run is durable (a retry with the same Idempotency-Key and body gets this again)."""

    run_id: str
    project_id: str
    thread_id: str
    status: Literal["queued"] = "queued"
    links: AcceptedLinks


class AttemptView(_Out):
    attempt: int
    worker: str | None = Field(default=None, description="its --name, or worker-<hex>: never host or pid")
    started_at: float | None = None
    ended_at: float | None = None
    outcome: str | None = None
    detail: str | None = None
    resumed_from: int | str | None = Field(default=None, description="the checkpoint it resumed after")
    stage: str | None = None


class ResolvedModel(_Out):
    route: str | None = None
    kind: str | None = None
    model: str | None = None


class RunView(_Out):
    """A run: status, phase, attempt, cost so far (``usage``), stop reason, and every attempt."""

    schema_version: int
    run_id: str
    status: RunStatus
    phase: str
    brief: str
    tenant: str | None = None
    project_id: str | None = None
    thread_id: str | None = None
    model_route: str | None = None
    model: ResolvedModel | None = Field(default=None, description="the writer's route as resolved at start")
    policy: str | None = Field(default=None, description="the run's hot-policy snapshot hash (= policy_hash)")
    policy_hash: str | None = Field(default=None, description="hash of the hot-policy snapshot the run took when it "
                                    "started; every attempt of the run, resumed ones included, works under it")
    security_hash: str | None = Field(default=None, description="hash of the versioned security/build config "
                                      "(config/security, the pack's pins) of the process running it")
    attempt: int | None = None
    cancel_requested: bool = False
    continues_thread: bool = False
    options: dict[str, Any] = Field(default_factory=dict)
    usage: dict[str, Any] | None = Field(default=None, description="model calls, tokens, cost, the budget ledger")
    stop_reason: str = ""
    timings_ms: dict[str, int] | None = None
    created_at: float | None = None
    updated_at: float | None = None
    finished_at: float | None = None
    expires_at: float | None = Field(default=None, description="when the run is deleted from the store (its "
                                     "retention after the end); `tier2 runs export` keeps a copy")
    pause_after: Literal["design"] | None = None
    plan: dict[str, Any] | None = Field(default=None, description="the run's plan nodes (phases, design steps, "
                                        "requirements) with status and evidence")
    completion: dict[str, Any] | None = Field(default=None, description="N of M requirements verified, the genre, "
                                              "what the brief asks that cannot be built")
    attempts: list[AttemptView] = Field(default_factory=list)
    links: RunLinks


class ThreadRunView(_Out):
    run_id: str
    status: RunStatus
    brief: str
    stop_reason: str = ""
    created_at: float | None = None


class ThreadView(_Out):
    """A thread: one project, one conversation, its runs oldest first."""

    thread_id: str
    tenant: str | None = None
    project_id: str | None = None
    created_at: float | None = None
    runs: list[ThreadRunView]


class CancelAccepted(_Out):
    run_id: str
    status: Literal["cancel_requested"] = "cancel_requested"


class StreamToken(_Out):
    token: str
    expires_at: int = Field(description="epoch seconds")
    events: str = Field(description="the events URL with the token")


# -- delivery ------------------------------------------------------------------------------------------------------


class SourceFile(_Out):
    path: str
    sha256: str
    bytes: int | None = None


class SourceView(_Out):
    files: list[SourceFile] = Field(default_factory=list)
    sha256: str | None = None


class BuildView(_Out):
    ok: bool = False
    bundle_path: str | None = Field(default=None, description="project-relative")
    bundle_sha256: str | None = None
    bundle_bytes: int | None = None


class PreviewView(_Out):
    path: str | None = Field(default=None, description="project-relative")
    url: str | None = Field(default=None, description="the artifact URL of the game")


class GateView(_Out):
    id: str
    layer: str | None = None
    mode: str | None = None
    passed: bool
    summary: str | None = None
    evidence: Any = None


class VerificationView(_Out):
    passed: bool = False
    gates: list[GateView] = Field(default_factory=list)
    report: str | None = Field(default=None, description="project-relative")


class DeliveryView(_Out):
    """``delivery.json`` for the API: project-relative paths and artifact URLs, no host details."""

    schema_version: int | None = None
    run_id: str
    project_id: str | None = None
    status: RunStatus
    stop_reason: str = ""
    brief: str | None = None
    pack: str | None = None
    model: ResolvedModel | None = None
    source: SourceView = Field(default_factory=SourceView)
    build: BuildView = Field(default_factory=BuildView)
    preview: PreviewView = Field(default_factory=PreviewView)
    verification: VerificationView = Field(default_factory=VerificationView)
    screenshot: str | None = None
    screenshot_url: str | None = None
    usage: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, Any] = Field(default_factory=dict)
    policy_hash: str | None = Field(default=None, description="the run's hot-policy snapshot")
    security_hash: str | None = Field(default=None, description="the security/build config it was delivered under")
    created_at: float | None = None
    design: dict[str, Any] | None = Field(default=None, description="spec and GDD paths, genre, scope, goal version")
    completion: dict[str, Any] | None = Field(default=None, description="every requirement → the gates that "
                                              "verified it, or unverified with the reason")
    plan: dict[str, Any] | None = None


# -- trajectory ------------------------------------------------------------------------------------------------------


class _CallView(_Out):
    schema_version: int
    call_id: str
    agent: str
    state: str = Field(description="success | error | denied | interrupted | refused")
    started_at: float
    duration_ms: float
    reply_id: str = ""
    iteration: int = 0
    error: str = ""
    step: int | None = None


class ModelCallView(_CallView):
    kind: Literal["model"] = "model"
    model: str = Field(description="the model that answered")
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    fallback: int = Field(default=0, description="0: the route's primary model; n: its n-th fallback")


class ToolCallView(_CallView):
    kind: Literal["tool"] = "tool"
    tool: str
    args_summary: str = ""
    args_sha256: str = ""
    result_sha256: str = ""
    result_chars: int = 0


class CaseCallView(_CallView):
    kind: Literal["case"] = "case"
    signature: str = Field(description="the failure signature the debug case library matched")
    gate: str
    action: str = Field(description="applied (a fixer, no model call) | offered | recalled | advised")
    fixer: str | None = None
    fixed: bool | None = None
    replaced_model_calls: int = 0
    replaced_tokens: int = 0


class LibraryTotals(_Out):
    hits: int
    applied: int = 0
    fixed: int = 0
    offered: int = 0
    recalled: int = 0
    advised: int = 0
    model_calls_replaced: int = 0
    tokens_replaced: int = 0


class ModelTotals(_Out):
    calls: int
    failed: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    priced: bool
    ms: float


class ToolTotals(_Out):
    calls: int
    errors: int
    ms: float


class AgentTotals(_Out):
    model_calls: int
    tool_calls: int
    tokens: int
    cost_usd: float


class TrajectorySummary(_Out):
    model_calls: int
    tool_calls: int
    models: dict[str, ModelTotals]
    tools: dict[str, ToolTotals]
    library: LibraryTotals | None = Field(default=None, description="debug case library hits (none: no hit)")
    agents: dict[str, AgentTotals] = Field(default_factory=dict, description=(
        "per agent (writer, leader, designer.*, explorer, reviewer, l3_scorer): its calls, tokens and cost"))
    plan: dict[str, Any] | None = Field(default=None, description=(
        "the run's plan metrics (docs/iteration.md): modifications and reasons, invalidation rate, local-replan "
        "ratio, recovery distance, goal coverage; none before the run ended"))


class TrajectoryView(_Out):
    run_id: str
    total: int = Field(description="calls of the selected kind")
    offset: int
    limit: int
    summary: TrajectorySummary
    calls: list[Annotated[ModelCallView | ToolCallView | CaseCallView, Field(discriminator="kind")]]


# -- projects ---------------------------------------------------------------------------------------------------


class ProjectLoaded(_Out):
    """``201``: the project is registered to the caller's tenant."""

    project_id: str
    files: int
    pack: str
    stripped: list[str] = Field(description="reserved top-level names dropped from the input")


class ProjectSource(_Out):
    kind: Literal["archive", "directory"]
    bytes: int | None = None
    path: str | None = Field(default=None, description="the directory named in the request")


class ProjectView(_Out):
    project_id: str
    tenant: str | None = None
    pack: str | None = None
    source: ProjectSource | None = None
    files: int | None = None
    stripped: list[str] = Field(default_factory=list)
    created_at: float | None = None


# -- health ------------------------------------------------------------------------------------------------------


class ProbeView(_Out):
    status: Literal["ok", "degraded"]


class RedisHealth(_Out):
    ok: bool
    version: str | None = None
    ping_ms: float | None = None
    error: str | None = None


class BrowserHealth(_Out):
    ok: bool
    executable: str | None = Field(default=None, description="file name only")
    version: str | None = None
    error: str | None = None


class ToolchainHealth(_Out):
    ok: bool
    pack: str | None = Field(default=None, description="the default pack (`id@version`)")
    packs: list[str] = Field(default_factory=list, description="every pack served (`id@version`), the default first")
    engine: dict[str, Any] | None = None
    esbuild: str | None = Field(default=None, description="file name only")
    error: str | None = None


class HealthView(_Out):
    ok: bool
    redis: RedisHealth
    browser: BrowserHealth
    toolchain: ToolchainHealth
