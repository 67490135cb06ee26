"""The writer's tasks (`tier2.runs.loop.tasks`): seeded from the plan's task nodes that are not verified, reopened
with their ids kept, closed by the evidence (never by the writer's tick alone), rendered for its message."""

from __future__ import annotations

from agentscope.state import AgentState

from tier2.design.planning import declare_design, declare_work
from tier2.plan import Plan
from tier2.runs.loop.tasks import open_tasks, reconcile, render_tasks, reopen_tasks, seed_tasks, task_rows

SPEC = {"requirements": [
    {"id": "R1", "text": "5 lives", "role": "level", "source": "s",
     "predicate": {"kind": "state_value", "key": "lives"}},
    {"id": "R2", "text": "a menu scene", "role": "ui", "source": "s", "predicate": {"kind": "scene_exists",
                                                                                    "scene": "Menu"}},
    {"id": "R3", "text": "the player is a fox", "role": "assets", "source": "s",
     "predicate": {"kind": "asset_role", "role": "player", "asset": "player.fox"}}]}


def _plan() -> Plan:
    plan = Plan(goals=["g"])
    declare_design(plan)
    declare_work(plan, SPEC, ["levels.json", "theme.json"])
    return plan


def test_only_the_tasks_not_verified_are_given_and_the_evidence_closes_them() -> None:
    plan, state = _plan(), AgentState()
    plan.verify("task.ui", {"spec:R2": "x"})  # verified in an earlier goal version, inputs unchanged: reused
    given = seed_tasks(state, plan, SPEC)
    assert given == ["task.assets", "task.tables"]
    rows = task_rows(state)
    assert [(r["id"], r["status"]) for r in rows] == [("1", "pending"), ("2", "pending")]
    assert rows[1]["nodes"] == ["task.tables", "req.R1"]
    block = render_tasks(state)
    assert block.startswith("<tasks>\n- [1] Implement the assets") and "R1: 5 lives" in block
    # a check where R3 passed but R1 did not: only the assets task is done, whatever the writer ticked
    assert reconcile(state, plan, {"R3"}, all_passed=False)
    assert open_tasks(state) == ["task.tables"]
    assert not reconcile(state, plan, {"R3"}, all_passed=False)  # nothing new
    assert reconcile(state, plan, set(), all_passed=True) and open_tasks(state) == []


def test_a_reopened_task_keeps_its_id_and_a_node_without_one_gets_the_next_id() -> None:
    plan, state = _plan(), AgentState()
    plan.verify("task.ui", {"spec:R2": "x"})
    seed_tasks(state, plan, SPEC)  # 1: assets, 2: tables
    reconcile(state, plan, set(), all_passed=True)
    # evidence reopens the tables task (failing l1.economy) and the ui task, which had none this run
    assert reopen_tasks(state, plan, SPEC, ["task.tables", "task.ui", "task.nowhere"]) == ["task.tables", "task.ui"]
    assert [(t.id, t.metadata["plan_node"], t.state) for t in state.tasks_context.tasks] == [
        ("1", "task.assets", "completed"), ("2", "task.tables", "pending"), ("3", "task.ui", "pending")]
    assert render_tasks(state, ["task.tables"]).count("\n- [") == 1
    assert open_tasks(state) == ["task.tables", "task.ui"]
