"""What a follow-up's reading does to the plan (`tier2.runs.loop.phases.replan`), which nodes a failing gate points
at (`tier2.design.planning.producers`), and the ``table_value`` predicate follow-up requirements are checked with."""

from __future__ import annotations

from tier2.design.planning import TESTABLE, declare_design, declare_work, producers
from tier2.design.roles import FollowUpAnswer, FollowUpChange, FollowUpProblem
from tier2.plan import Plan, check_plan
from tier2.runs.loop.phases.replan import follow_up_requirements, invalidations, person_edit, stop_for
from tier2.validators.l2.conformance import _table_value

SPEC = {"requirements": [
    {"id": "R1", "text": "lives", "role": "level", "source": "s", "predicate": {"kind": "state_value", "key": "lives"}},
    {"id": "R2", "text": "Menu", "role": "ui", "source": "s", "predicate": {"kind": "scene_exists", "scene": "Menu"}}]}


def test_changes_invalidate_their_designers_and_a_genre_change_the_whole_design() -> None:
    theme = FollowUpChange(text="snowy theme", kind="theme", roles=["assets", "vfx", "ui", "audio"])
    lives = FollowUpChange(text="5 lives", kind="knob", roles=["level"], target="lives", direction="set", value=5)
    hit = invalidations(FollowUpAnswer(changes=[theme, lives]), 2)
    assert set(hit) == {"design.assets", "design.vfx", "design.ui", "design.audio", "design.level"}
    assert hit["design.level"] == "goal v2: knob — 5 lives"
    everything = invalidations(FollowUpAnswer(changes=[FollowUpChange(text="a shooter", kind="genre", roles=[])]), 3)
    assert "design.brief" in everything and len(everything) == 8
    assert invalidations(FollowUpAnswer(changes=[FollowUpChange(text="x", kind="theme", roles=["nobody"])]), 2) == {}


def test_what_cannot_become_a_change_is_kept_as_a_requirement_and_decides_the_end() -> None:
    answer = FollowUpAnswer(
        unbuildable=[FollowUpProblem(text="hire an assistant", reason="no hiring", options=["a longer day"])],
        uninterpreted=[FollowUpProblem(text="make it more fun")])
    reqs = follow_up_requirements(answer, 4, first_id=9)
    assert [r["id"] for r in reqs] == ["R9", "R10"] and all(r["mode"] == "enforce" for r in reqs)
    assert reqs[1]["text"] == "unverified: the offline model cannot interpret this change: “make it more fun”"
    assert reqs[0]["predicate"] == {"kind": "gate_passes", "gate": "l2.follow_up.unbuildable"}
    reason, options = stop_for(answer) or ("", [])
    assert reason.startswith("blocked: the pack cannot build “hire an assistant”: no hiring") and options == [
        "a longer day"]
    only_unread = stop_for(FollowUpAnswer(uninterpreted=[FollowUpProblem(text="more fun")]))
    assert only_unread == ("not delivered: the offline model cannot interpret this change: “more fun”", [])
    contra = stop_for(FollowUpAnswer(contradictions=[FollowUpProblem(text="harder / easier", reason="both ways")]))
    assert contra is not None and contra[0].startswith("blocked: the follow-up contradicts itself")
    assert stop_for(FollowUpAnswer(changes=[FollowUpChange(text="5 lives", kind="knob", roles=["level"])])) is None


def test_a_person_edit_is_a_spec_on_disk_that_is_not_the_one_tier2_wrote() -> None:
    assert person_edit("a", "b") and not person_edit("a", "a") and not person_edit(None, "b")


def test_a_failing_gate_points_at_what_produced_it() -> None:
    plan = Plan(goals=["g"])
    declare_design(plan)
    declare_work(plan, SPEC, ["levels.json", "theme.json"])
    assert check_plan(plan, ["R1", "R2"], TESTABLE) == []
    assert producers("l1.economy", plan, SPEC) == {"design.economy": "l1.economy failed",
                                                   "design.level": "l1.economy failed",
                                                   "task.tables": "l1.economy failed"}
    assert producers("l2.req.R2", plan, SPEC) == {"task.ui": "l2.req.R2 failed"}
    assert producers("l2.req.R99", plan, SPEC) == {}
    assert producers("l1.boots", plan, SPEC) == {"phase.implement": "l1.boots failed"}  # no gameplay task here
    assert producers("l1.assets", plan, SPEC) == {"phase.implement": "l1.assets failed"}
    assert producers("l2.genre", plan, SPEC) == {"design.brief": "l2.genre failed"}
    # the tables task reads the tables (not theme.json), the look would read theme.json: state versions
    assert [i.name for i in plan.nodes["task.tables"].inputs] == ["spec:R1", "file:data/levels.json"]


def test_table_value_checks_the_built_number_everywhere_the_path_names() -> None:
    tables = {"levels.json": {"lives": 5, "levels": [{"time_limit_ms": 60000}, {"time_limit_ms": 45000}]}}
    ok, why, _ = _table_value({"table": "levels.json", "path": "lives", "equals": 5}, tables)
    assert ok and why == "data/levels.json lives is 5 (want = 5)"
    ok, why, _ = _table_value({"table": "levels.json", "path": "levels[*].time_limit_ms", "min": 50000}, tables)
    assert not ok and "60000, 45000" in why
    assert _table_value({"table": "levels.json", "path": "levels[*].time_limit_ms", "min": 40000}, tables)[0]
    ok, why, _ = _table_value({"table": "rules.json", "path": "lives", "equals": 5}, tables)
    assert not ok and why == "data/rules.json lives is not in the built tables"
    assert not _table_value({"table": "levels.json", "path": "lives", "min": 6}, tables)[0]


def test_the_goal_is_every_version_in_order_and_splits_back() -> None:
    from tier2.design.goal import compose_goal, split_goal
    goal = compose_goal(["a bakery\nwith cakes", "snowy theme", "给我五条命"])
    assert goal == ('a bakery\nwith cakes\n<follow-up v="2">snowy theme</follow-up>\n'
                    '<follow-up v="3">给我五条命</follow-up>')
    assert split_goal(goal) == ["a bakery\nwith cakes", "snowy theme", "给我五条命"]
    assert split_goal("a plain\nbrief") == ["a plain\nbrief"] and compose_goal([]) == ""
