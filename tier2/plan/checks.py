"""Static checks of a plan before it runs (seed 002 §3.1) and its metrics (§3.2, §5.2).

`check_plan`: no dependency cycle, every input has a source (a node of the plan or a known outside source), every
predicate is of a kind a check here can test, every node's failure successors exist, and every goal predicate (a
requirement of the spec) is covered by a node — the goal–node coverage matrix (`coverage`), where an uncovered
goal is an error. `plan_metrics`: modification count and reasons, invalidation rate, local-replan ratio (nodes
reused / nodes total), recovery distance (nodes re-executed after a failure) and goal coverage.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from tier2.plan.model import Plan

__all__ = ["OUTSIDE_SOURCES", "PlanCheckError", "check_plan", "coverage", "plan_metrics"]

#: where an input may come from when no node produces it
OUTSIDE_SOURCES = frozenset({"user", "pack", "project", "engine"})


class PlanCheckError(ValueError):
    """The plan failed a static check; ``problems`` says which."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems[:8]))
        self.problems = problems


def _cycle(plan: Plan) -> list[str]:
    """One dependency cycle (node ids, in order), [] when the graph is acyclic."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str]:
        state[n] = 1
        stack.append(n)
        for d in plan.nodes[n].deps:
            if d not in plan.nodes:
                continue
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state and (found := visit(d)):
                return found
        stack.pop()
        state[n] = 2
        return []

    for n in sorted(plan.nodes):
        if n not in state and (found := visit(n)):
            return found
    return []


def coverage(plan: Plan, goal_ids: Iterable[str]) -> dict[str, list[str]]:
    """The goal–node matrix as rows: requirement id -> the nodes that verify or implement it (its requirement node,
    the tasks whose predicate names it). An empty row is a goal no node covers."""
    rows: dict[str, list[str]] = {g: [] for g in goal_ids}
    for node in plan.nodes.values():
        pred = node.predicate
        named = {str(i) for i in pred.get("ids") or []} if isinstance(pred.get("ids"), list) else set()
        if node.kind == "requirement" and node.id.startswith("req."):
            named.add(node.id.removeprefix("req."))
        for g in named & rows.keys():
            rows[g].append(node.id)
    return {g: sorted(v) for g, v in rows.items()}


def check_plan(plan: Plan, goal_ids: Iterable[str], testable: Collection[str]) -> list[str]:
    """Every static problem of the plan (empty: it may run). ``goal_ids``: the requirements of the current goal
    version; ``testable``: the predicate kinds a check here evaluates."""
    problems: list[str] = []
    cycle = _cycle(plan)
    if cycle:
        problems.append("dependency cycle: " + " -> ".join(cycle))
    for node in plan.nodes.values():
        for dep in node.deps:
            if dep not in plan.nodes:
                problems.append(f"{node.id} depends on {dep}, which is not in the plan")
        for inp in node.inputs:
            if inp.source not in plan.nodes and inp.source not in OUTSIDE_SOURCES:
                problems.append(f"{node.id}: input {inp.name} has no source ({inp.source!r})")
        kind = node.predicate.get("kind")
        if not kind:
            problems.append(f"{node.id} has no completion predicate")
        elif kind not in testable:
            problems.append(f"{node.id}: predicate kind {kind!r} is not one a check can test")
        for succ in node.on_fail:
            if succ not in plan.nodes:
                problems.append(f"{node.id}: failure successor {succ} is not in the plan")
    for goal, nodes in coverage(plan, goal_ids).items():
        if not nodes:
            problems.append(f"requirement {goal} is covered by no node")
    return problems


def plan_metrics(plan: Plan, executed: Collection[str], goal_ids: Iterable[str],
                 recovered: Collection[str] = ()) -> dict[str, Any]:
    """The plan's structural and execution figures for one run. ``executed``: the nodes this run executed (the
    rest of the plan's nodes were reused); ``recovered``: the nodes re-executed after a failure (evidence)."""
    total = len(plan.nodes) or 1
    reasons: dict[str, int] = {}
    for m in plan.modifications:
        reasons[m.author] = reasons.get(m.author, 0) + 1
    version = plan.goal_version
    invalidated = {n for m in plan.modifications if m.goal_version == version for n in m.nodes
                   if n in plan.nodes and not plan.nodes[n].evidence.get("reused")}  # (a re-checked node was kept)
    rows = coverage(plan, goal_ids)
    covered = sum(1 for v in rows.values() if v)
    run_now = [n for n in executed if n in plan.nodes]
    return {"nodes": len(plan.nodes), "executed": len(run_now), "reused": len(plan.nodes) - len(run_now),
            "modifications": len(plan.modifications), "reasons": reasons,
            "modification_reasons": [{"plan_version": m.plan_version, "goal_version": m.goal_version,
                                      "author": m.author, "reason": m.reason, "nodes": len(m.nodes)}
                                     for m in plan.modifications[-20:]],
            "invalidation_rate": round(len(invalidated) / total, 4),
            "local_replan_ratio": round((len(plan.nodes) - len(run_now)) / total, 4),
            "recovery_distance": len([n for n in recovered if n in plan.nodes]),
            "goal_coverage": round(covered / len(rows), 4) if rows else 1.0}


def statuses_of(plan: Plan, ids: Iterable[str]) -> Mapping[str, str]:
    return {i: plan.nodes[i].status for i in ids if i in plan.nodes}
