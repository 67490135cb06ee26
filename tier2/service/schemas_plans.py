"""Response models of a thread's goal and plan versions (``GET /v1/threads/{id}/plans``, ``.../plan?version=N``).

Allow-lists like `tier2.service.schemas` (``extra="forbid"``), filled by `tier2.service.views.public_plan_version`
and ``public_plan_list`` from the stored records (`tier2.store.plans`); the plan's nodes and the metrics are
objects of JSON values with server paths masked.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["GoalView", "PlanDiffView", "PlanEndView", "PlanList", "PlanSummaryView", "PlanVersionView",
           "RequirementChangeView", "RequirementsDiffView"]

Author = Literal["user", "leader", "person", "evidence"]
EndKind = Literal["delivered", "blocked", "unverified", "failed", "stopped"]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GoalView(_Out):
    version: int
    text: str
    author: Author = Field(description="who made this goal version: the user's follow-up, the leader, a person "
                                       "editing the design, or evidence (a failing gate)")


class RequirementChangeView(_Out):
    id: str
    text: str = ""
    was: str | None = Field(default=None, description="a changed requirement: its text before")
    fields: list[str] = Field(default_factory=list, description="a changed requirement: the fields that changed "
                              "(``text``, ``predicate``...)")


class RequirementsDiffView(_Out):
    added: list[RequirementChangeView] = Field(default_factory=list)
    changed: list[RequirementChangeView] = Field(default_factory=list)
    removed: list[RequirementChangeView] = Field(default_factory=list)


class PlanDiffView(_Out):
    """What this goal version changed against the one before."""

    requirements: RequirementsDiffView = Field(default_factory=RequirementsDiffView)
    invalidated: dict[str, str] = Field(default_factory=dict, description="plan node id → why it was invalidated")
    reused: list[str] = Field(default_factory=list, description="verified plan nodes kept with no re-run")


class PlanEndView(_Out):
    kind: EndKind
    reason: str = ""
    options: list[str] = Field(default_factory=list, description="a blocked change: what could be done instead")


class PlanVersionView(_Out):
    """One goal version of the thread's project: the goal, every goal so far, the plan diff, the plan's nodes, the
    plan metrics and how the version's run ended."""

    thread_id: str
    project_id: str
    goal_version: int
    plan_version: int = Field(description="the plan revision of this goal version (the newest one stored)")
    run_id: str = Field(description="the run that made this plan version")
    at: float
    goal: GoalView
    goals: list[GoalView] = Field(default_factory=list)
    diff: PlanDiffView = Field(default_factory=PlanDiffView)
    plan: dict[str, Any] = Field(default_factory=dict, description="the plan: ``nodes`` by id, each with kind, "
                                 "status, deps, inputs, the state versions it used, evidence")
    metrics: dict[str, Any] = Field(default_factory=dict, description="modifications and their reasons, "
                                    "invalidation_rate, local_replan_ratio, recovery_distance, goal_coverage")
    end: PlanEndView | None = Field(default=None, description="null while the version's run has not ended")


class PlanSummaryView(_Out):
    """A goal version in the list."""

    goal_version: int
    plan_version: int
    entries: int = Field(description="plan revisions stored for this goal version")
    author: Author
    text: str
    at: float
    run_id: str
    added: int = 0
    changed: int = 0
    removed: int = 0
    invalidated: int = 0
    reused: int = 0
    end: EndKind | None = None


class PlanList(_Out):
    """The goal versions of the thread's project, oldest first."""

    thread_id: str
    project_id: str
    versions: list[PlanSummaryView]
