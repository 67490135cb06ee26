"""The run's plan, stored as goal/plan versions of its project (`tier2.store.plans`: append-only, fenced).

`record_plan` appends one entry: after the design (the goal version this run made, its diff, the plan the writer
starts from) and at the end (the statuses, the metrics and how it ended). Entries are bound to plan versions: an
entry for a plan version the store already has (a resumed attempt records again) is stored as the next plan version
— a resumed run continues the version it was on, never a new goal version. A project whose earlier goal versions
predate the store (kept only in ``.tier2/design/state.json``) gets them written first, from the plan's history.
"""

from __future__ import annotations

import time
from typing import Any

from tier2.plan import Plan, plan_metrics
from tier2.runs.loop.context import DesignOutcome
from tier2.store.plans import PlanVersions
from tier2.store.run_store import Fence

__all__ = ["plan_entry", "record_plan"]


def _goals(plan: Plan) -> list[dict[str, Any]]:
    return [{"version": g.version, "text": g.text, "author": g.author} for g in plan.history]


def plan_entry(plan: Plan, design: DesignOutcome, run_id: str, project_id: str,
               end: dict[str, Any] | None = None, metrics: dict[str, Any] | None = None) -> dict[str, Any]:
    """The stored entry of the plan as it is now (``end``: how the run ended; None while it runs)."""
    goal = plan.history[-1] if plan.history else None
    ids = [str(r["id"]) for r in design.spec.get("requirements") or []]
    return {"goal_version": plan.goal_version, "plan_version": plan.plan_version, "run_id": run_id,
            "project_id": project_id, "at": time.time(),
            "goal": {"version": plan.goal_version, "text": goal.text if goal else "", "author": goal.author
                     if goal else "user"},
            "goals": _goals(plan), "diff": dict(goal.diff) if goal and goal.version == plan.goal_version else {},
            "plan": {"nodes": {n.id: n.model_dump(mode="json", exclude={"updated_at"}) for n in plan.nodes.values()},
                     "modifications": [m.model_dump(mode="json") for m in plan.modifications[-50:]]},
            "metrics": metrics if metrics is not None else plan_metrics(plan, design.executed, ids, design.recovered),
            **({"end": end} if end is not None else {})}


async def record_plan(versions: PlanVersions, project_id: str, run_id: str, design: DesignOutcome,
                      fence: Fence | None, end: dict[str, Any] | None = None,
                      metrics: dict[str, Any] | None = None) -> int:
    """Append the plan as it is now; returns the entry's seq."""
    plan = design.plan
    latest = await versions.get(project_id)
    if latest is None or latest.goal_version < plan.goal_version - 1:
        have = latest.goal_version if latest is not None else 0
        for g in plan.history:  # the goal versions the store never saw, oldest first (their plans are gone)
            if have < g.version < plan.goal_version:
                await versions.append(project_id, {
                    "goal_version": g.version, "plan_version": 0, "run_id": g.run_id or run_id,
                    "project_id": project_id, "at": g.at,
                    "goal": {"version": g.version, "text": g.text, "author": g.author}, "goals": _goals(plan),
                    "diff": dict(g.diff), "end": {"kind": "stopped", "reason": "recorded before plan versions were "
                                                  "stored"}}, None if g.run_id != run_id else fence)
    elif latest.goal_version == plan.goal_version and latest.plan_version >= plan.plan_version:
        plan.plan_version = latest.plan_version + 1  # the store is ahead (an earlier attempt recorded it)
    return await versions.append(project_id, plan_entry(plan, design, run_id, project_id, end, metrics), fence)
