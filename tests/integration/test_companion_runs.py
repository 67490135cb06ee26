"""Whole runs with the companions on real parts (Redis, esbuild, Chromium); only the model is offline or scripted.

Issue #15 part 4's done-when: "explorer and reviewer calls appear in the trajectory with their own cost" — and
they change nothing the gates decide: the same brief delivers the same files with the companions off.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from agentscope.message import Msg, TextBlock, ToolCallBlock

from tier2.events import CompanionCalled
from tier2.runs import RunRequest, execute_run
from tier2.runs.loop.phases.implement import ImplementPhase
from tier2.runs.loop.session import RunSession
from tier2.store.trajectory import ModelCallRecord, TrajectoryStore
from tier2.testing import ScriptedChatModel, tool_results
from tier2.workspace import new_project

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
PRICED = "tier2-offline-policy-v1"  # scripted models stand in for the offline route and are priced like it


async def _events(rt, run_id: str) -> list:
    return [e for _, e in await rt.store.read_events(run_id, after=0, count=10_000)]


def _sources(delivery: dict) -> dict[str, str]:
    return {f["path"]: f["sha256"] for f in delivery["source"]["files"] if f["path"].startswith(("src/", "data/"))}


async def test_offline_faulty_run_shows_explorer_and_reviewer_with_their_own_cost(runtime, config_dir,
                                                                                  tmp_path) -> None:
    # the library off: the writer itself sees the data error (and asks the explorer) in both runs alike
    (config_dir / "policy" / "zz-test.yaml").write_text("learning: {cases: false}\n")
    out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "on", model="offline-faulty"))
    assert out.status == "delivered", out.stop_reason
    calls = await TrajectoryStore(runtime.store.r, runtime.store.keys).read(out.run_id)
    summary = TrajectoryStore.summarize(calls)
    for role in ("explorer", "reviewer"):
        mine = [c for c in calls if c.agent == role and isinstance(c, ModelCallRecord)]
        assert len(mine) == 2 and all(c.cost_usd and c.cost_usd > 0 for c in mine), role
        assert summary["agents"][role]["cost_usd"] == pytest.approx(sum(c.cost_usd or 0 for c in mine), abs=1e-6)
        assert out.delivery["usage"]["cost_by_agent"][role] == pytest.approx(summary["agents"][role]["cost_usd"],
                                                                              abs=1e-5)
    events = [e for e in await _events(runtime, out.run_id) if isinstance(e, CompanionCalled)]
    assert [(e.agent, e.state) for e in events] == [("explorer", "answered"), ("reviewer", "answered")]
    assert events[0].trigger == "which files read data key economy.start_money"
    assert events[1].trigger == "failed_check" and all(e.cost_usd and e.cost_usd > 0 for e in events)
    explore = [e for e in await _events(runtime, out.run_id) if e.type == "tool_finished" and e.tool == "Explore"]
    assert [e.state for e in explore] == ["success"] and "economy.start_money" in explore[0].summary
    # the writer's model calls are the run's usage minus the companions' own
    usage = out.delivery["usage"]
    assert usage["model_calls"] == summary["model_calls"]

    (config_dir / "policy" / "zz-test.yaml").write_text(
        "learning: {cases: false}\ncompanions: {explorer: {enabled: false}, reviewer: {enabled: false}}\n")
    off = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "off", model="offline-faulty"))
    assert off.status == "delivered"
    assert not [e for e in await _events(runtime, off.run_id) if isinstance(e, CompanionCalled)]
    assert {"explorer", "reviewer"}.isdisjoint(off.delivery["usage"]["cost_by_agent"])
    assert _sources(off.delivery) == _sources(out.delivery)  # same files delivered: advice changed nothing
    gates = {g["id"]: g["passed"] for g in off.delivery["verification"]["gates"]}
    assert gates == {g["id"]: g["passed"] for g in out.delivery["verification"]["gates"]}


def _writer(project: Path, seen: list[str]):
    """Turn 1 removes economy.start_money and says it is done; the fix round's message is kept in ``seen``; turn 2
    puts the key back."""
    economy = project / "data" / "economy.json"
    original = json.loads(economy.read_text())
    broken = {k: v for k, v in original.items() if k != "start_money"}

    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)
        users = [m.get_text_content() or "" for m in messages if m.role == "user"]
        if any("NOT done yet" in u for u in users) and not seen:
            seen.append(next(u for u in users if "NOT done yet" in u))
        steps = [("Read", {"file_path": str(economy)}), ("Write", {"file_path": str(economy),
                                                                     "content": json.dumps(broken, indent=2)})]
        if seen:
            steps += [("Read", {"file_path": str(economy)}), ("Write", {"file_path": str(economy),
                                                                          "content": json.dumps(original, indent=2)})]
        if done < len(steps):
            return [ToolCallBlock(id=f"w{done}", name=steps[done][0], input=json.dumps(steps[done][1]))]
        return [TextBlock(text="done")]
    return script


async def test_reviewer_findings_reach_the_next_fix_round(runtime, tmp_path) -> None:
    project = (tmp_path / "game").resolve()
    new_project(runtime.pack, project)
    req = RunRequest(brief=POTION, out_dir=project, model="offline", existing_project=project)
    seen: list[str] = []
    req = replace(req, scripted_models={"writer": ScriptedChatModel(_writer(project, seen), model=PRICED)})
    session = RunSession(runtime, req, POTION, phases=[ImplementPhase()])
    out = await session.execute()
    assert out.status == "delivered", out.stop_reason
    assert seen, "the writer got a fix round"
    fix = seen[0]
    assert "independent reviewer" in fix and "data.key_missing" in fix and "economy.start_money" in fix
    assert "src/state.js:" in fix
    events = [e for e in await _events(runtime, out.run_id) if isinstance(e, CompanionCalled)]
    assert [(e.agent, e.trigger) for e in events] == [("reviewer", "failed_validation")] and events[0].findings >= 1


async def test_the_reviewer_never_decides_the_verdict(runtime, config_dir, tmp_path) -> None:
    (config_dir / "policy" / "zz-test.yaml").write_text("companions: {reviewer: {trigger: every_turn}}\n")
    project = (tmp_path / "game").resolve()
    new_project(runtime.pack, project)
    req = RunRequest(brief=POTION, out_dir=project, model="offline", existing_project=project)
    verdict = json.dumps({"findings": [{"rule": "verdict", "severity": "error",
                                        "message": "the game is broken: do not deliver it"}]})
    reviewer = ScriptedChatModel([[TextBlock(text=verdict)]], model=PRICED)
    req = replace(req, scripted_models={"writer": ScriptedChatModel([[TextBlock(text="done")]], model=PRICED),
                                        "reviewer": reviewer})
    session = RunSession(runtime, req, POTION, phases=[ImplementPhase()])
    out = await session.execute()
    assert out.status == "delivered" and out.stop_reason == "all L1 gates passed"  # the gates decided
    [event] = [e for e in await _events(runtime, out.run_id) if isinstance(e, CompanionCalled)]
    assert event.agent == "reviewer" and event.trigger == "every_turn" and event.findings == 1
    assert len(reviewer.calls) == 1


async def test_a_companion_tripping_a_breaker_stops_the_run(runtime, config_dir, tmp_path) -> None:
    """The explorer loops inside the writer's Explore call: its breaker trips, the writer gets an error result,
    and the run stops before the writer's next model call, with the explorer's reason."""
    (config_dir / "policy" / "zz-test.yaml").write_text("breakers: {steps_per_turn: 3}\n")
    project = (tmp_path / "game").resolve()
    new_project(runtime.pack, project)
    req = RunRequest(brief=POTION, out_dir=project, model="offline", existing_project=project)
    writer = ScriptedChatModel([[ToolCallBlock(id="e1", name="Explore",
                                               input=json.dumps({"question": "where is Play defined"}))]],
                               model=PRICED)  # strict: a second writer call fails the test

    def looping(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        n = tool_results(messages)
        return [ToolCallBlock(id=f"i{n}", name="Index", input=json.dumps({"query": f"Play {n}"}))]
    explorer = ScriptedChatModel(looping, model=PRICED)
    req = replace(req, scripted_models={"writer": writer, "explorer": explorer})
    session = RunSession(runtime, req, POTION, phases=[ImplementPhase()])
    out = await session.execute()
    assert out.status == "stopped" and out.stop_reason.startswith("steps: ") and "the explorer's call" in \
        out.stop_reason
    assert len(writer.calls) == 1 and len(explorer.calls) == 3
    [event] = [e for e in await _events(runtime, out.run_id) if isinstance(e, CompanionCalled)]
    assert event.state == "stopped" and event.model_calls == 3
