"""The writer's companions (issue #15 part 4): the read-only explorer and the independent reviewer.

Real Redis, real files, the real run session and its layers (ledger, breakers, trajectory); the model is the
embedded offline policy or a strict scripted model. No browser here (see test_companion_runs.py for whole runs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentscope.message import Msg, TextBlock, ToolCallBlock

from tier2.companions.stop import CompanionStopMiddleware
from tier2.errors import RunLimitReached
from tier2.events import CompanionCalled
from tier2.runs.loop.addons.companions import RunCompanions
from tier2.runs.loop.session import RunSession
from tier2.runs.request import RunRequest
from tier2.store.trajectory import ModelCallRecord, ToolCallRecord, TrajectoryStore
from tier2.testing import ScriptedChatModel, tool_results
from tier2.validators import ValidationReport
from tier2.validators.base import ValidationResult
from tier2.workspace import snapshot

pytestmark = [pytest.mark.redis]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


async def _session(runtime, tmp_path: Path, options: dict | None = None, scripted: dict | None = None,
                   ) -> RunSession:
    session = RunSession(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "game", model="offline",
                                             options=options or {}, scripted_models=scripted or {}), POTION)
    await session.open()
    return session


def _companions(session: RunSession, model: ScriptedChatModel | None = None) -> RunCompanions:
    """The run's companions as the session's setup makes them; ``model``: the companions' scripted model (the
    request's one test seam, read at each call)."""
    if model is not None:
        session.req.scripted_models.update(explorer=model, reviewer=model)  # type: ignore[union-attr]
    return RunCompanions(session.ctx, session, session.add_usage)


async def _events(runtime, run_id: str) -> list:
    return [e for _, e in await runtime.store.read_events(run_id, after=0, count=10_000)]


def _scripted(script) -> ScriptedChatModel:
    """A strict scripted model priced like the offline route it stands in for (the run's ledger needs a price)."""
    return ScriptedChatModel(script, model="tier2-offline-policy-v1")


def _failing_report() -> ValidationReport:
    return ValidationReport(target="game", passed=False, gates=[ValidationResult(
        id="l1.boots", layer="L1", passed=False, summary="tier2 data error: economy.json start_money: missing")])


def _drop_key(project: Path, table: str, key: str) -> None:
    path = project / "data" / f"{table}.json"
    data = json.loads(path.read_text())
    data.pop(key)
    path.write_text(json.dumps(data, indent=2))


async def test_offline_explorer_answers_with_paths_and_excerpts_on_the_run_ledger(runtime, tmp_path) -> None:
    session = await _session(runtime, tmp_path)
    comp = _companions(session)
    ok, text = await comp.explore("which files read data key economy.start_money")
    assert ok, text
    assert "src/state.js:" in text and "tables.economy.start_money" in text  # a path, a line, the excerpt
    ok, text = await comp.explore("where is the order queue drawn")
    assert ok and "src/scenes/Play.js:" in text and "showOrder" in text
    calls = await TrajectoryStore(runtime.store.r, runtime.store.keys).read(session.run_id)
    mine = [c for c in calls if c.agent == "explorer"]
    models = [c for c in mine if isinstance(c, ModelCallRecord)]
    assert len(models) == 4 and all(m.cost_usd and m.cost_usd > 0 for m in models)  # Index, answer; twice
    assert {c.tool for c in mine if isinstance(c, ToolCallRecord)} == {"Index"}
    summary = TrajectoryStore.summarize(calls)
    assert summary["agents"]["explorer"]["model_calls"] == 4 and summary["agents"]["explorer"]["cost_usd"] > 0
    events = [e for e in await _events(runtime, session.run_id) if isinstance(e, CompanionCalled)]
    assert [(e.agent, e.state, e.model_calls) for e in events] == [("explorer", "answered", 2)] * 2
    assert events[0].trigger.startswith("which files read") and events[0].cost_usd and events[0].cost_usd > 0
    usage = session.mapper.usage  # the run's usage carries the explorer's cost under its own name
    assert usage.cost_by_agent["explorer"] == pytest.approx(sum(m.cost_usd or 0 for m in models))


def _hostile(project: Path):
    outside = str(project.parent / "outside.txt")
    calls = [("Write", {"file_path": str(project / "src" / "main.js"), "content": "// gone"}),
             ("Edit", {"file_path": str(project / "src" / "main.js"), "old_string": "import", "new_string": "x"}),
             ("Bash", {"command": f"touch {project}/pwned"}),
             ("Read", {"file_path": outside}),
             ("Glob", {"pattern": "*", "path": str(project.parent)}),
             ("Grep", {"pattern": "secret", "path": "/etc"})]

    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)  # two calls per reply
        if done < len(calls):
            return [ToolCallBlock(id=f"h{i}", name=calls[i][0], input=json.dumps(calls[i][1]))
                    for i in (done, done + 1)]
        return [TextBlock(text="nothing found")]
    return script


async def test_a_hostile_explorer_cannot_write_run_or_leave_the_project(runtime, tmp_path) -> None:
    session = await _session(runtime, tmp_path)
    project = session.opened.project
    (tmp_path / "outside.txt").write_text("secret outside the project")
    before = snapshot(project)["sha256"]
    model = _scripted(_hostile(project))
    comp = _companions(session, model)
    ok, text = await comp.explore("where is the order queue drawn")
    assert ok and text == "nothing found"
    assert snapshot(project)["sha256"] == before and not (project / "pwned").exists()
    results = [(str(b.state), "".join(getattr(x, "text", "") for x in b.output))
               for c in model.calls[-1:] for m in c.messages for b in m.get_content_blocks("tool_result")]
    assert len(results) == 6 and all("error" in s or "denied" in s for s, _ in results), results
    assert not any("secret outside" in t for _, t in results)


async def test_a_tight_budget_stops_the_explorer_and_then_the_run(runtime, tmp_path) -> None:
    session = await _session(runtime, tmp_path, options={"budget": {"usd": 0.000001}})
    comp = _companions(session)
    ok, text = await comp.explore("which files read data key economy.start_money")
    assert not ok and text.startswith("explorer stopped: budget")
    assert comp.tripped is not None and comp.tripped.limit == "budget"
    events = [e for e in await _events(runtime, session.run_id) if isinstance(e, CompanionCalled)]
    assert [(e.agent, e.state) for e in events] == [("explorer", "stopped")]
    # the writer's next model call is where the run stops, with the explorer's reason
    layer = CompanionStopMiddleware(lambda: comp.tripped)
    with pytest.raises(RunLimitReached, match="^budget"):
        async for _ in layer.on_reasoning(None, {}, None):
            pass
    ok, text = await comp.explore("anything else")  # refused without a model call
    assert not ok and "already hit a limit" in text


async def test_breakers_bound_the_explorer(runtime, config_dir, tmp_path) -> None:
    (config_dir / "policy" / "zz-test.yaml").write_text("breakers: {steps_per_turn: 2}\n")
    session = await _session(runtime, tmp_path)

    def looping(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        n = tool_results(messages)
        return [ToolCallBlock(id=f"g{n}", name="Index", input=json.dumps({"query": f"Play {n}"}))]
    model = _scripted(looping)
    comp = _companions(session, model)
    ok, text = await comp.explore("where is Play defined")
    assert not ok and text.startswith("explorer stopped: steps") and "steps_per_turn=2" in text
    assert comp.tripped is not None and "the explorer's call" in comp.tripped.detail
    assert len(model.calls) == 2 and comp.tripped is not None


async def test_calls_beyond_the_policy_are_refused_without_a_model_call(runtime, config_dir, tmp_path) -> None:
    (config_dir / "policy" / "zz-test.yaml").write_text("companions: {explorer: {max_calls_per_run: 1}}\n")
    session = await _session(runtime, tmp_path)
    model = _scripted([[TextBlock(text="src/main.js:1: import Phaser")]])  # strict: one call only
    comp = _companions(session, model)
    assert (await comp.explore("where is Phaser imported"))[0]
    ok, text = await comp.explore("and again")
    assert not ok and "max_calls_per_run" in text and len(model.calls) == 1
    events = [e.state for e in await _events(runtime, session.run_id) if isinstance(e, CompanionCalled)]
    assert events == ["answered", "refused"]


async def test_offline_reviewer_finds_a_missing_data_key_in_the_change(runtime, tmp_path) -> None:
    session = await _session(runtime, tmp_path)
    comp = _companions(session)
    comp.turn_started()
    _drop_key(session.opened.project, "economy", "start_money")
    review = await comp.review(_failing_report())
    assert review is not None and review.trigger == "failed_validation" and review.call is not None
    missing = [f for f in review.findings if f.rule == "data.key_missing"]
    assert missing and {f.file for f in missing} == {"src/state.js"} and all(f.line for f in missing)
    assert all(f.severity == "error" and "economy.start_money" in f.message for f in missing)
    text = review.for_writer()
    assert "data.key_missing" in text and "only the gates decide" in text
    calls = await TrajectoryStore(runtime.store.r, runtime.store.keys).read(session.run_id)
    reviewer = [c for c in calls if c.agent == "reviewer"]
    assert [c.kind for c in reviewer] == ["model", "tool", "model"] and reviewer[1].tool == "Checks"
    assert all(c.cost_usd for c in reviewer if isinstance(c, ModelCallRecord))
    [event] = [e for e in await _events(runtime, session.run_id) if isinstance(e, CompanionCalled)]
    assert event.agent == "reviewer" and event.trigger == "failed_validation" and event.findings == len(
        review.findings)


async def test_reviewer_sees_the_turns_diff_and_the_verdicts(runtime, tmp_path) -> None:
    session = await _session(runtime, tmp_path)
    model = _scripted([[TextBlock(text='Here: {"findings": [{"file": "data/economy.json", "rule": "r1", '
                                               '"message": "start_money was removed", "severity": "error"}, '
                                               '{"rule": "", "message": "invalid: empty rule"}]}')]])
    comp = _companions(session, model)
    comp.turn_started()
    _drop_key(session.opened.project, "economy", "start_money")
    review = await comp.review(_failing_report())
    assert review is not None and [f.rule for f in review.findings] == ["r1"] and "1 finding(s) dropped" in review.note
    seen = model.calls[0].last_text
    assert "-  \"start_money\"" in seen or '-  "start_money"' in seen or "start_money" in seen.split("<diff>")[1]
    assert "l1.boots" in seen.split("<gates>")[1] and "a/data/economy.json" in seen


async def test_policy_off_means_no_companion_calls(runtime, config_dir, tmp_path) -> None:
    (config_dir / "policy" / "zz-test.yaml").write_text(
        "companions: {explorer: {enabled: false}, reviewer: {enabled: false}}\n")
    session = await _session(runtime, tmp_path)
    comp = _companions(session, _scripted([]))  # any call fails the test
    assert comp.writer_tools() == []
    comp.turn_started()
    assert await comp.review(_failing_report()) is None
    assert not [e for e in await _events(runtime, session.run_id) if isinstance(e, CompanionCalled)]


async def test_reviewer_trigger_policy(runtime, config_dir, tmp_path) -> None:
    session = await _session(runtime, tmp_path)
    comp = _companions(session)
    passed = ValidationReport(target="game", passed=True)
    assert comp.trigger(passed) is None  # failed_check: nothing failed in the turn, nothing failed after it
    assert comp.trigger(_failing_report()) == "failed_validation"
    (config_dir / "policy" / "zz-test.yaml").write_text("companions: {reviewer: {trigger: every_turn}}\n")
    every = _companions(await _session(runtime, tmp_path / "b"))
    assert every.trigger(passed) == "every_turn"
