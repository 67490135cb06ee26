"""The writer's work as AgentScope tasks (seed 004 §2): one task per plan task node the run must do, in the
writer's own state (`AgentState.tasks_context`), each linked to its plan nodes (``metadata.nodes``). The writer
marks its progress with ``TaskUpdate``; the verdict is the gates': after each check tier2 reconciles the tasks with
the evidence (`reconcile`: a task whose requirements all passed is completed, whatever the writer said; one the
evidence reopened is pending again), so a ticked task never verifies anything.
"""

from __future__ import annotations

from typing import Any

from agentscope.state import AgentState, Task, TaskContext

from tier2.plan import Plan

__all__ = ["open_tasks", "reconcile", "render_tasks", "reopen_tasks", "seed_tasks", "task_rows"]


def _task(node_id: str, plan: Plan, texts: dict[str, str], task_id: str) -> Task:
    node = plan.nodes[node_id]
    ids = [str(x) for x in node.predicate.get("ids") or []]
    return Task(id=task_id, subject=node.goal or node_id,
                description="; ".join(f"{x}: {texts.get(x, '')}" for x in ids)[:2000],
                metadata={"plan_node": node_id, "nodes": [node_id, *(f"req.{x}" for x in ids)],
                          "goal_version": plan.goal_version})


def _texts(spec: dict[str, Any]) -> dict[str, str]:
    return {str(r["id"]): str(r.get("text", "")) for r in spec.get("requirements") or []}


def seed_tasks(state: AgentState, plan: Plan, spec: dict[str, Any]) -> list[str]:
    """The writer's tasks for this run: one per plan task node that is not verified (on a follow-up, only what the
    change invalidated); the tasks of an earlier run are replaced. Returns the plan task ids given."""
    wanted = sorted(n.id for n in plan.nodes.values() if n.kind == "task" and n.status != "verified")
    texts = _texts(spec)
    state.tasks_context = TaskContext(tasks=[_task(n, plan, texts, str(i)) for i, n in enumerate(wanted, start=1)])
    return wanted


def reopen_tasks(state: AgentState, plan: Plan, spec: dict[str, Any], nodes: list[str]) -> list[str]:
    """Reopen the writer's tasks of ``nodes`` (pending again; a node that had none gets a new task, numbered after
    the others — ids are never reused). Returns the plan task ids reopened."""
    tasks = state.tasks_context.tasks
    have = {str(t.metadata.get("plan_node")): t for t in tasks}
    texts = _texts(spec)
    next_id = max((int(t.id) for t in tasks if str(t.id).isdigit()), default=0) + 1
    out: list[str] = []
    for node in sorted(nodes):
        if node not in plan.nodes:
            continue
        if node in have:
            have[node].state = "pending"
        else:
            tasks.append(_task(node, plan, texts, str(next_id)))
            next_id += 1
        out.append(node)
    return out


def reconcile(state: AgentState, plan: Plan, passed_ids: set[str], all_passed: bool) -> bool:
    """Close the tasks the evidence completed: every requirement of the task passed on the last check (or the
    whole check passed). Returns whether a task changed."""
    changed = False
    for t in state.tasks_context.tasks:
        node = plan.nodes.get(str(t.metadata.get("plan_node")))
        ids = [str(x) for x in (node.predicate.get("ids") or [])] if node is not None else []
        done = all_passed or (bool(ids) and all(i in passed_ids for i in ids))
        if done and t.state != "completed":
            t.state = "completed"
            changed = True
    return changed


def open_tasks(state: AgentState) -> list[str]:
    """The plan task ids whose writer task is not completed."""
    return [str(t.metadata.get("plan_node") or t.subject) for t in state.tasks_context.tasks
            if t.state != "completed"]


def task_rows(state: AgentState) -> list[dict[str, Any]]:
    """The tasks as the events and the Studio show them."""
    return [{"id": t.id, "subject": t.subject, "status": t.state, "nodes": list(t.metadata.get("nodes") or [])}
            for t in state.tasks_context.tasks]


def render_tasks(state: AgentState, only: list[str] | None = None) -> str:
    """The ``<tasks>`` block of a writer message: one line per open task (``- [id] subject — requirements``)."""
    lines = [f"- [{t.id}] {t.subject} — {t.description}"[:400] for t in state.tasks_context.tasks
             if t.state != "completed" and (only is None or t.metadata.get("plan_node") in only)]
    return "<tasks>\n" + "\n".join(lines) + "\n</tasks>" if lines else ""
