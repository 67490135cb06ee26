"""The plan as revisable state (seed 002): the model (`Plan`, `PlanNode`, goal versions, tickets), state versions
and the requirement diff, and the static checks and metrics. Pure: no Redis, no run."""

from tier2.plan.checks import OUTSIDE_SOURCES, PlanCheckError, check_plan, coverage, plan_metrics
from tier2.plan.model import (
    AUTHORS,
    STATUSES,
    Author,
    GoalVersion,
    Modification,
    NodeInput,
    NodeKind,
    NodeStatus,
    Plan,
    PlanNode,
    Ticket,
)
from tier2.plan.versions import (
    file_versions,
    game_version,
    requirement_diff,
    sha_json,
    sha_text,
    slot,
    spec_versions,
    stable_ids,
)

__all__ = ["AUTHORS", "Author", "GoalVersion", "Modification", "NodeInput", "NodeKind", "NodeStatus",
           "OUTSIDE_SOURCES", "Plan", "PlanCheckError", "PlanNode", "STATUSES", "Ticket", "check_plan", "coverage",
           "file_versions", "game_version", "plan_metrics", "requirement_diff", "sha_json", "sha_text", "slot",
           "spec_versions", "stable_ids"]
