"""Response models of the routes that browse a tenant's runs and their projects: the run list, a run's design
documents and spec, its validation report, the play token of its game.

Allow-lists like `tier2.service.schemas` (``extra="forbid"``), filled by `tier2.service.views`; free-form parts (a
gate's evidence, the spec) are objects of JSON values with server paths masked.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tier2.store.lifecycle import RunStatus

__all__ = ["DesignDocView", "DesignView", "FindingView", "PlayToken", "ReportGateView", "ReportView", "RunList",
           "RunSummary", "ScreenshotView"]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunSummary(_Out):
    """A run in a list: enough to pick it (status, brief, cost, age), not its attempts or plan."""

    run_id: str
    status: RunStatus
    phase: str
    brief: str
    project_id: str | None = None
    thread_id: str | None = None
    model_route: str | None = None
    policy: str | None = Field(default=None, description="hash of the policy snapshot the run used")
    cost_usd: float | None = Field(default=None, description="model cost so far (usage.cost_usd)")
    cancel_requested: bool = False
    continues_thread: bool = False
    stop_reason: str = ""
    created_at: float | None = None
    updated_at: float | None = None
    finished_at: float | None = None


class RunList(_Out):
    """``GET /v1/runs``: the caller's runs, newest first."""

    runs: list[RunSummary]
    next_cursor: str | None = Field(default=None, description="pass as ?cursor= for the next page; null: no more")
    scanned: int = Field(description="runs examined for this page (a filter that matches rarely may return fewer "
                                     "than limit with a next_cursor)")


class DesignDocView(_Out):
    path: str = Field(description="project-relative, e.g. docs/design/GDD.md")
    text: str = Field(description="Markdown")
    bytes: int
    truncated: bool = False


class DesignView(_Out):
    """``GET /v1/runs/{id}/design``: the design documents and spec as written so far."""

    run_id: str
    docs: list[DesignDocView]
    spec: dict[str, Any] | None = Field(default=None, description="design/spec.json (null: not written yet)")
    spec_error: str | None = Field(default=None, description="why the spec could not be read")


class FindingView(_Out):
    message: str
    severity: Literal["error", "warning", "info"] = "error"


class ReportGateView(_Out):
    id: str
    layer: str | None = None
    mode: str | None = None
    passed: bool
    summary: str | None = None
    findings: list[FindingView] = Field(default_factory=list)
    evidence: Any = None
    duration_ms: float | None = None


class ScreenshotView(_Out):
    name: str
    path: str = Field(description="project-relative")
    url: str = Field(description="artifact URL (needs the API key)")


class ReportView(_Out):
    """``GET /v1/runs/{id}/report``: every gate with its findings and evidence, and the screenshots."""

    run_id: str
    path: str = Field(description="project-relative path of report.json")
    mode: str | None = None
    passed: bool = False
    gates: list[ReportGateView] = Field(default_factory=list)
    screenshots: list[ScreenshotView] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    site: Any = None
    duration_ms: float | None = None


class PlayToken(_Out):
    """``POST /v1/runs/{id}/play-token``: where a sandboxed iframe loads the run's game."""

    token: str
    expires_at: int = Field(description="epoch seconds")
    url: str = Field(description="the game's index.html under the token (relative files resolve under it too)")
