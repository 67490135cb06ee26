"""Whole runs with the debug case library on real parts (Redis, esbuild, Chromium); only the model is offline/fake.

Issue #15's done-when: ``offline-faulty`` fixes its injected faults from the library, without the offline policy's
hard-coded repairs — the first run (empty library) repairs them with the policy and records the verified fixes;
the same faults with the policy's repairs off are then fixed by the library's fixers before the writer reads them;
with the library off they are not fixed at all. And the session's own turn: a writer that leaves a broken game
and stops gets it fixed between its turn and the fix round, with no model call.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tier2.events import CaseHit, CaseRecorded
from tier2.learning import LibraryRun
from tier2.runs import RunRequest, execute_run
from tier2.store.cases import ENGINE_SCOPE
from tier2.store.trajectory import TrajectoryStore
from tier2.testing import FakeOpenAIServer, Reply
from tier2.toolchain import run_build
from tier2.workspace import new_project

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


async def _events(rt, run_id: str) -> list:
    return [e for _, e in await rt.store.read_events(run_id, after=0, count=10_000)]


def _states(events: list, tool: str) -> list[str]:
    return [e.state for e in events if e.type == "tool_finished" and e.tool == tool]


async def test_offline_faulty_is_fixed_by_the_library_not_by_the_policy(runtime, config_dir, tmp_path) -> None:
    first = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "a", model="offline-faulty"))
    assert first.status == "delivered", first.stop_reason
    events = await _events(runtime, first.run_id)
    assert _states(events, "Build")[0] == "error" and _states(events, "RunGame")[0] == "error"  # the policy repaired
    recorded = {(e.gate, e.fixer, e.scope) for e in events if isinstance(e, CaseRecorded)}
    assert {("l1.builds", "restore_last_built", "engine"), ("l1.boots", "restore_data_key", "engine")} <= recorded
    # the library starts empty: each fault's first repair is the policy's; the library applies or offers only a case
    # this very run recorded before (a fault that comes back later in the run, e.g. on a loaded machine; with the
    # memory extra, mem0 may also *recall* a near match: advice only, never a fix)
    seen: set[str] = set()
    for e in events:
        if isinstance(e, CaseRecorded):
            seen.add(e.signature)
        elif isinstance(e, CaseHit) and e.action != "recalled":
            assert e.signature in seen, f"a case hit before any case of its signature was recorded: {e}"
    assert all(e.fixed is None and e.replaced_model_calls == 0 for e in events
               if isinstance(e, CaseHit) and e.action == "recalled")

    second = await execute_run(runtime, RunRequest(brief="a blacksmith shop: forge swords from iron and sell them",
                                                   out_dir=tmp_path / "b", model="offline-faulty-norepair"))
    assert second.status == "delivered", second.stop_reason
    events = await _events(runtime, second.run_id)
    hits = [e for e in events if isinstance(e, CaseHit)]
    assert [(h.gate, h.action, h.fixer, h.fixed) for h in hits] == [
        ("l1.builds", "applied", "restore_last_built", True), ("l1.boots", "applied", "restore_data_key", True)]
    assert all(h.replaced_model_calls >= 1 and h.estimate == "recorded" for h in hits)
    # the writer never read a failing Build or RunGame: the library fixed both before its next model call
    assert set(_states(events, "Build")) == {"success"} and set(_states(events, "RunGame")) == {"success"}
    writer_calls = [u["usage"]["cost_by_agent"] for u in (first.delivery, second.delivery)]
    assert writer_calls[0]["writer"] > writer_calls[1]["writer"]
    assert second.delivery["usage"]["model_calls"] < first.delivery["usage"]["model_calls"]
    economy = json.loads((tmp_path / "b/data/economy.json").read_text())
    assert economy["start_money"] > 0
    summary = TrajectoryStore.summarize(await TrajectoryStore(runtime.store.r, runtime.store.keys).read(second.run_id))
    assert summary["library"]["applied"] == summary["library"]["fixed"] == 2
    assert summary["library"]["model_calls_replaced"] == sum(h.replaced_model_calls for h in hits)

    # the control: the same faults with the library off stay broken (the policy's repairs are off too)
    (config_dir / "policy" / "zz-test.yaml").write_text("learning: {cases: false}\n")
    third = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "c",
                                                  model="offline-faulty-norepair"))
    assert third.status == "failed" and "repairs are off" in third.stop_reason
    assert not [e for e in await _events(runtime, third.run_id) if isinstance(e, CaseHit)]


def _config_route(config_dir: Path, name: str, base_url: str) -> None:
    (config_dir / "policy" / "zz-test.yaml").write_text(
        f"models:\n  {name}:\n    kind: openai\n    model: fake-model\n    base_url: {base_url}\n"
        f"    api_key_env: TIER2_TEST_FAKE_KEY\n    max_retries: 0\n"
        "budget: {usd: null}\n")


async def _seed_syntax_case(runtime, tmp_path: Path, broken: str) -> None:
    """A verified engine case for the careless writer's syntax error (recorded as a run would record it)."""
    project = tmp_path / "seed"
    new_project(runtime.pack, project)
    main = project / "src/main.js"
    good = main.read_text()
    seed = LibraryRun(runtime.cases, run_id="r-seed", tenant=None, pack=runtime.pack, project=project, brief="x",
                      policy=runtime.policies.snapshot().learning, scope=ENGINE_SCOPE, source="test")
    main.write_text(broken)
    assert not (await seed.observe_build(await run_build(runtime.pack, project))).ok
    main.write_text(good)
    assert (await seed.observe_build(await run_build(runtime.pack, project))).ok
    assert [c.fix.fixer for c in await runtime.cases.store.all(ENGINE_SCOPE)] == ["restore_last_built"]


async def test_the_library_fixes_a_broken_turn_before_the_fix_round(runtime, config_dir, tmp_path, monkeypatch) -> None:
    """The writer breaks the build and stops; between its turn and the fix round the library restores the file and
    the gates pass — no further model call."""
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    broken = "let x = ;\n"
    await _seed_syntax_case(runtime, tmp_path, broken)

    def careless(body: dict) -> Reply:
        system = body["messages"][0]["content"]
        system = system if isinstance(system, str) else " ".join(p.get("text", "") for p in system)
        project = re.search(r"game project at (\S+?) \(the project directory\)", system).group(1)
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        if done == 0:
            return Reply(tool_calls=[("Read", {"file_path": f"{project}/src/main.js"})])
        if done == 1:
            return Reply(tool_calls=[("Write", {"file_path": f"{project}/src/main.js", "content": broken})])
        return Reply(text="All done.")

    with FakeOpenAIServer(careless) as srv:
        _config_route(config_dir, "careless", srv.base_url)
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="careless"))
        assert len(srv.requests) == 3  # one turn (Read, Write, final answer); no fix round was needed
    assert out.status == "delivered", out.stop_reason
    assert (tmp_path / "g/src/main.js").read_text() != broken
    [hit] = [e for e in await _events(runtime, out.run_id) if isinstance(e, CaseHit)]
    assert (hit.gate, hit.action, hit.fixer, hit.fixed, hit.scope) == (
        "l1.builds", "applied", "restore_last_built", True, "engine")


async def test_seeding_records_only_fixes_the_gates_verified(runtime) -> None:
    """`tier2 cases seed` on one template: each defect injected, failing, fixed by the registry's fixer, passing."""
    from tier2.learning.seed import SeedDefect
    from tier2.runs.commands.cases import seed_library
    from tier2.validators.mutants import CONTRACT_MUTANTS

    catalogue = [SeedDefect(m.defect, m.apply) for m in CONTRACT_MUTANTS]
    results = await seed_library(runtime, catalogue, [runtime.pack.manifest.default_genre],
                                 only=["syntax_error", "config_field_missing", "crash_at_boot"])
    assert sorted((r.defect, r.status, r.fixer) for r in results) == [
        ("config_field_missing", "fixed_by_fixer", "restore_data_key"),
        ("crash_at_boot", "fixed_by_fixer", "revert_to_last_pass"),
        ("syntax_error", "fixed_by_fixer", "restore_last_built")]
    cases = await runtime.cases.store.all(ENGINE_SCOPE)
    assert sorted(c.fix.fixer or "" for c in cases) == ["restore_data_key", "restore_last_built",
                                                        "revert_to_last_pass"]
    assert all(c.source.startswith("seed:") and c.cost.model_calls is None for c in cases)
    assert {c.shape for c in cases} >= {"Expected identifier but found end of file", "<name> is not defined"}
