"""The plan as revisable state (`tier2.plan`): invalidation along the dependency edges with reasons, state versions
deciding reuse, results bound to plan versions (a late result never lands), static checks with the goal–node
coverage matrix, stable requirement ids and the requirement diff, and the metrics."""

from __future__ import annotations

import asyncio
from typing import Any

from tier2.plan import (
    NodeInput,
    Plan,
    PlanNode,
    check_plan,
    coverage,
    plan_metrics,
    requirement_diff,
    sha_json,
    spec_versions,
    stable_ids,
)

TESTABLE = {"answer_schema", "spec_schema", "requirements_verified", "build_ok", "gates_pass", "state_value"}


def _plan() -> Plan:
    p = Plan(goals=["a bakery"])
    p.add("design.brief", "design", inputs=[NodeInput(name="goal", source="user")], predicate={"kind": "answer_schema"})
    for role in ("economy", "assets"):
        p.add(f"design.{role}", "design", inputs=[NodeInput(name="split", source="design.brief")],
              predicate={"kind": "answer_schema"})
    p.add("design.spec", "design", inputs=[NodeInput(name=f"answer:{r}", source=f"design.{r}")
                                           for r in ("economy", "assets")], predicate={"kind": "spec_schema"})
    p.add("task.economy", "task", inputs=[NodeInput(name="spec:R1", source="design.spec")],
          predicate={"kind": "requirements_verified", "ids": ["R1"]}, on_fail=["design.economy"])
    p.add("task.assets", "task", inputs=[NodeInput(name="spec:R2", source="design.spec")],
          predicate={"kind": "requirements_verified", "ids": ["R2"]}, on_fail=["design.assets"])
    p.add("phase.implement", "build", ["task.economy", "task.assets"], predicate={"kind": "build_ok"})
    p.add("phase.validate", "validation", ["phase.implement"], predicate={"kind": "gates_pass"})
    p.add("req.R1", "requirement", ["task.economy", "phase.validate"], predicate={"kind": "state_value"})
    p.add("req.R2", "requirement", ["task.assets", "phase.validate"], predicate={"kind": "state_value"})
    for n in p.nodes:
        p.verify(n, {"spec:R1": "a", "spec:R2": "b"} if n.startswith("task.") else {})
    return p


def test_invalidation_follows_the_edges_with_a_reason_per_node_and_one_modification() -> None:
    p = _plan()
    hit = p.invalidate({"design.assets": "goal v2: snowy theme"}, author="user")
    assert list(hit)[0] == "design.assets" and hit["design.assets"] == "goal v2: snowy theme"
    assert set(hit) == {"design.assets", "design.spec", "task.economy", "task.assets", "phase.implement",
                        "phase.validate", "req.R1", "req.R2"}
    assert hit["design.spec"] == "depends on design.assets"
    assert p.nodes["design.economy"].status == "verified" and p.nodes["design.brief"].status == "verified"
    assert p.nodes["req.R2"].evidence["was"] == "verified" and p.nodes["req.R2"].versions == {}
    assert [m.author for m in p.modifications] == ["user"] and p.plan_version == 1
    assert p.invalidate({"nowhere": "x"}) == {} and p.plan_version == 1  # nothing to do: no new version


def test_a_verified_node_is_reused_only_while_its_input_versions_hold() -> None:
    p = _plan()
    assert p.stale("task.economy", {"spec:R1": "a", "spec:R2": "b"}) == []
    assert p.stale("task.economy", {"spec:R1": "CHANGED", "spec:R2": "b"}) == ["spec:R1"]
    assert p.stale("task.economy", {}) == ["spec:R1", "spec:R2"]  # a version that is gone counts as changed
    hit = p.revalidate({"spec:R1": "a", "spec:R2": "new"}, author="person")
    assert hit["task.economy"] == "input changed: spec:R2" and hit["task.assets"] == "input changed: spec:R2"
    assert "design.economy" not in hit and p.modifications[-1].author == "person"


async def test_a_late_result_of_an_invalidated_node_never_changes_state() -> None:
    p = _plan()
    p.set("design.assets", "pending")
    ticket = p.start("design.assets")
    result: list[bool] = []

    async def slow_designer() -> None:  # its tool result arrives after the plan moved on
        await asyncio.sleep(0.05)
        result.append(p.finish(ticket, "verified", {"split": "x"}, source="late answer"))

    task = asyncio.create_task(slow_designer())
    p.invalidate({"design.assets": "goal v3 superseded the answer being made"})
    await task
    assert result == [False]
    assert p.nodes["design.assets"].status == "invalidated" and "source" not in p.nodes["design.assets"].evidence
    fresh = p.start("design.assets")  # the node's new execution lands
    assert p.finish(fresh, "verified", {"split": "y"}) and p.nodes["design.assets"].versions == {"split": "y"}
    assert p.nodes["design.assets"].runs == 2
    assert not p.finish(fresh, "failed")  # a second result of one execution is late too


def test_static_checks_catch_cycles_sourceless_inputs_untestable_predicates_and_uncovered_goals() -> None:
    p = _plan()
    assert check_plan(p, ["R1", "R2"], TESTABLE) == []
    assert coverage(p, ["R1", "R2", "R9"]) == {"R1": ["req.R1", "task.economy"], "R2": ["req.R2", "task.assets"],
                                                "R9": []}
    p.nodes["design.brief"].deps.append("req.R1")  # the brief depending on a requirement's verdict: a loop
    p.add("task.ui", "task", inputs=[NodeInput(name="spec:R3", source="design.nowhere")],
          predicate={"kind": "vibes"}, on_fail=["design.ui"])
    problems = check_plan(p, ["R1", "R2", "R9"], TESTABLE)
    assert any(x.startswith("dependency cycle: ") and "design.brief" in x for x in problems), problems
    assert "task.ui: input spec:R3 has no source ('design.nowhere')" in problems
    assert "task.ui: predicate kind 'vibes' is not one a check can test" in problems
    assert "task.ui: failure successor design.ui is not in the plan" in problems
    assert "requirement R9 is covered by no node" in problems


def _req(rid: str, text: str, role: str, **pred: Any) -> dict[str, Any]:
    pred = {k.removesuffix("_"): v for k, v in pred.items()}  # ``text_=``: the predicate's own text field
    return {"id": rid, "text": text, "source": "s", "role": role, "predicate": pred, "kind": "structural"}


def test_requirement_ids_stay_stable_and_the_diff_names_what_changed() -> None:
    old = {"requirements": [_req("R1", "5 lives", "level", kind="state_value", key="lives", min=5, max=5),
                            _req("R2", "a menu scene", "ui", kind="scene_exists", scene="Menu"),
                            _req("R3", "title Bakery", "ui", kind="ui_label", text_="Bakery")]}
    # the leader numbered its new answer from R1 again, with a new requirement in front
    new = {"requirements": [_req("R1", "snowy backdrop", "assets", kind="asset_role", role_="backdrop"),
                            _req("R2", "3 lives", "level", kind="state_value", key="lives", min=3, max=3),
                            _req("R3", "a menu scene", "ui", kind="scene_exists", scene="Menu")]}
    kept = stable_ids(old, new)
    ids = {r["text"]: r["id"] for r in kept["requirements"]}
    assert ids == {"3 lives": "R1", "a menu scene": "R2", "snowy backdrop": "R4"}  # never R3 again: it was used
    diff = requirement_diff(old, kept)
    assert diff["added"] == [{"id": "R4", "text": "snowy backdrop"}]
    assert diff["changed"] == [{"id": "R1", "text": "3 lives", "was": "5 lives", "fields": ["predicate", "text"]}]
    assert diff["removed"] == [{"id": "R3", "text": "title Bakery"}]
    assert stable_ids(None, new) is new and requirement_diff(None, new)["added"][0]["id"] == "R1"
    versions = spec_versions(kept)
    assert versions["spec:R2"] == spec_versions({"requirements": [{**old["requirements"][1], "source": "s"}]})[
        "spec:R2"]  # an unchanged requirement keeps its version
    assert versions["spec:genre"] == sha_json(None)


def test_metrics_count_modifications_reuse_recovery_and_coverage() -> None:
    p = _plan()
    p.begin_goal("same game, snowy theme", "user")
    p.invalidate({"design.assets": "theme"}, author="user")
    p.invalidate({"task.economy": "l1.economy failed"}, author="evidence")
    executed = ["design.assets", "design.spec", "task.assets", "task.economy", "phase.implement", "phase.validate",
                "req.R1", "req.R2"]
    m = plan_metrics(p, executed, ["R1", "R2"], recovered=["task.economy"])
    assert m["nodes"] == 10 and m["executed"] == 8 and m["reused"] == 2
    assert m["reasons"] == {"user": 1, "evidence": 1} and m["modifications"] == 2
    assert m["local_replan_ratio"] == 0.2 and m["recovery_distance"] == 1
    assert m["goal_coverage"] == 1.0 and m["invalidation_rate"] == 0.8
    assert p.goal_version == 2 and p.history[-1].text == "same game, snowy theme"


def test_plans_stored_before_the_node_kinds_split_still_load() -> None:
    old = {"goal_version": 1, "goals": ["g"], "nodes": {
        "phase.implement": {"id": "phase.implement", "kind": "phase", "status": "verified"},
        "phase.validate": {"id": "phase.validate", "kind": "phase", "status": "failed"}}}
    p = Plan.model_validate(old)
    assert p.nodes["phase.implement"].kind == "build" and p.nodes["phase.validate"].kind == "validation"
    assert PlanNode.model_validate({"id": "x", "kind": "task"}).status == "pending"
