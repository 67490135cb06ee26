"""The debug case library on a real Redis, real esbuild and real files; only the writer's model is scripted.

A case is recorded only once the failing gate passes again; a tenant's content never leaves its scope while an
engine fact is shared; an exact hit's fixer runs with no model call (the scripted model's calls are counted); the
library works on exact signatures without mem0.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from agentscope.message import Msg, TextBlock, ToolCallBlock, UserMsg

from tier2.assembly import build_writer
from tier2.events import CaseHit, CaseRecorded
from tier2.learning import CaseLibrary, CaseLibraryMiddleware, LibraryRun
from tier2.middleware import RunLayers
from tier2.packs import Pack
from tier2.runs.loop.addons.library import RunToolChecks
from tier2.settings.policy import LearningPolicy
from tier2.store.cases import ENGINE_SCOPE, CaseStore, tenant_scope
from tier2.store.keys import Keys
from tier2.store.run_store import RunStore
from tier2.store.trajectory import TrajectoryStore
from tier2.testing import ScriptedChatModel, tool_results
from tier2.toolchain import run_build
from tier2.tools import ToolResults
from tier2.validators import ValidationReport, ValidationRunner
from tier2.validators.base import Finding, ValidationResult
from tier2.workspace import new_project

pytestmark = [pytest.mark.redis]
BROKEN = "\nfunction brokenOnPurpose( {\n"


@pytest.fixture
async def store(redis_url: str):
    rs = RunStore.from_url(redis_url, Keys(prefix=f"test-cases-{uuid.uuid4().hex[:8]}"))
    yield rs
    await rs.close()


@pytest.fixture
def library(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> CaseLibrary:
    monkeypatch.setattr("tier2.learning.library.available", lambda: False)  # exact signatures only, here
    lib = CaseLibrary(CaseStore(store.r, store.keys))
    assert lib.memory is None
    return lib


def _project(pack: Pack, root: Path, name: str) -> Path:
    new_project(pack, root / name)
    return root / name


def _run(library: CaseLibrary, pack: Pack, project: Path, tenant: str, events: list, brief: str = "a game",
         trajectory: TrajectoryStore | None = None, model: ScriptedChatModel | None = None) -> LibraryRun:
    async def emit(event) -> None:
        events.append(event)
    return LibraryRun(library, run_id=f"r-{uuid.uuid4().hex[:12]}", tenant=tenant, pack=pack, project=project,
                      brief=brief, policy=LearningPolicy(recall="off"), emit=emit, trajectory=trajectory,
                      usage=(lambda: (len(model.calls), 0)) if model is not None else None)


async def test_a_case_is_recorded_only_once_the_gate_passes(library: CaseLibrary, pack: Pack, tmp_path: Path) -> None:
    project = _project(pack, tmp_path, "g")
    events: list = []
    run = _run(library, pack, project, "acme", events)
    play = project / "src/scenes/Play.js"
    good = play.read_text()
    assert (await run.observe_build(await run_build(pack, project))).ok
    play.write_text(good + BROKEN)
    first = await run.observe_build(await run_build(pack, project))
    assert not first.ok and first.failing[0][1].shape == "Expected identifier but found end of file"
    play.write_text(good + BROKEN + "// still broken\n")
    assert not (await run.observe_build(await run_build(pack, project))).ok
    assert await library.store.all(ENGINE_SCOPE) == [] and await library.store.all(tenant_scope("acme")) == []
    assert not [e for e in events if isinstance(e, CaseRecorded)]
    play.write_text(good)
    assert (await run.observe_build(await run_build(pack, project))).ok
    tenant_cases, engine_cases = await library.store.all(tenant_scope("acme")), await library.store.all(ENGINE_SCOPE)
    assert [c.key for c in tenant_cases] == [c.key for c in engine_cases] == [first.failing[0][1].key]
    case = tenant_cases[0]
    assert case.gate == "l1.builds" and case.fix.files == ["src/scenes/Play.js"]
    assert "-function brokenOnPurpose( {" in case.fix.diff and case.fix.fixer == "restore_last_built"
    assert case.source == f"run:{run.run_id}"
    assert [e.scope for e in events if isinstance(e, CaseRecorded)] == ["tenant", "engine"]


def _report(passed: bool, *failing: tuple[str, str]) -> ValidationReport:
    gates = [ValidationResult(id=gid, layer="L1", passed=False, summary=msg, findings=[Finding(message=msg)])
             for gid, msg in failing]
    return ValidationReport(target="t", passed=passed, gates=[
        ValidationResult(id="l1.builds", layer="L1", passed=True),
        *gates, *([] if not passed else [ValidationResult(id="l1.economy", layer="L1", passed=True)])])


async def test_tenant_content_stays_in_its_scope_and_engine_facts_are_shared(
        library: CaseLibrary, pack: Pack, tmp_path: Path) -> None:
    brief = "a potion shop where I brew moonleaf tonics"
    a_events: list = []
    a_project = _project(pack, tmp_path, "a")
    a = _run(library, pack, a_project, "tenant-a", a_events, brief)
    # a gate failure that names the tenant's own game (its brief's words): tenant scope only
    content = ("l1.economy", "nobody in town buys moonleaf tonics at that price")
    await a.observe_report(_report(False, content))
    prices = next(iter(sorted((a_project / "data").glob("*.json"))))
    prices.write_text(prices.read_text() + "\n")
    await a.observe_report(_report(True))
    [own] = await library.store.all(tenant_scope("tenant-a"))
    assert own.gate == "l1.economy" and "moonleaf" in own.shape and await library.store.all(ENGINE_SCOPE) == []
    # an engine fact (a build error, fixed): shared
    play = a_project / "src/scenes/Play.js"
    good = play.read_text()
    play.write_text(good + BROKEN)
    await a.observe_build(await run_build(pack, a_project))
    play.write_text(good)
    await a.observe_build(await run_build(pack, a_project))
    assert len(await library.store.all(ENGINE_SCOPE)) == 1

    b_events: list = []
    b_project = _project(pack, tmp_path, "b")
    b = _run(library, pack, b_project, "tenant-b", b_events, brief)
    seen = await b.observe_report(_report(False, content))
    assert seen.failing[0][1].key == own.key          # the same signature ...
    assist = await b.assist(seen)
    assert not assist.offered and not assist.applied  # ... but tenant A's case is not B's to see
    seen_a = await a.observe_report(_report(False, content))
    assert [c.key for c, _ in (await a.assist(seen_a)).offered] == [own.key]  # A sees its own
    b_play = b_project / "src/scenes/Play.js"
    b_good = b_play.read_text()
    b_play.write_text(b_good + BROKEN)
    assist = await b.assist(await b.observe_build(await run_build(pack, b_project)))
    assert [(x.plan.fixer, x.case.scope) for x in assist.applied] == [("restore_last_built", ENGINE_SCOPE)]
    assert b_play.read_text() == b_good               # the engine fact fixed B's file


def _last_result(messages: list[Msg]) -> tuple[str, str]:
    name, text = "", ""
    for m in messages:
        for block in m.get_content_blocks("tool_result"):
            name = block.name
            text = "".join(getattr(b, "text", "") for b in block.output) if isinstance(block.output, list) \
                else str(block.output)
    return name, text


def _writer_script(path: str, broken: str, fixed: str):
    """Read Play.js, overwrite it with a syntax error, Build; on a failed build read it, write the fix, build."""
    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)
        name, text = _last_result(messages)
        if done == 0:
            return [ToolCallBlock(id="c0", name="Read", input=json.dumps({"file_path": path}))]
        if done == 1:
            return [ToolCallBlock(id="c1", name="Write", input=json.dumps({"file_path": path, "content": broken}))]
        if name == "Write":
            return [ToolCallBlock(id=f"c{done}", name="Build", input="{}")]
        if "BUILD FAILED" in text:  # the file changed since it was read: read it again, then write the fix
            return [ToolCallBlock(id=f"c{done}", name="Read", input=json.dumps({"file_path": path}))]
        if name == "Read":
            return [ToolCallBlock(id=f"c{done}", name="Write", input=json.dumps({"file_path": path,
                                                                                "content": fixed}))]
        return [TextBlock(text="done")]
    return script


async def _writer_turn(runtime, library: CaseLibrary, project: Path, home: Path) -> tuple[ScriptedChatModel, list]:
    play = project / "src/scenes/Play.js"
    fixed = play.read_text()
    events: list = []
    policy = runtime.policies.snapshot()
    trajectory = TrajectoryStore(library.store.r, library.store.keys)
    model = ScriptedChatModel(_writer_script(str(play), fixed + BROKEN, fixed))
    run = _run(library, runtime.pack, project, "acme", events, trajectory=trajectory, model=model)
    results = ToolResults()
    bound: list = []  # the writer's tool context, once the writer exists (the layer is built before it)
    checks = RunToolChecks(results, lambda: bound[0] if bound else None)
    handle = await build_writer(
        project_id="p-cases", project=project, pack=runtime.pack, policy=policy, model=model,
        runner=ValidationRunner(runtime.pool, runtime.pack, policy), reports_dir=project / ".tier2" / "reports",
        home=home, results=results, layers=RunLayers(learning=[CaseLibraryMiddleware(run, checks)]))
    bound.append(handle.tools)
    try:
        async for _ in handle.agent.reply_stream(UserMsg("user", "break the game, then make it build")):
            pass
    finally:
        await handle.workspace.close()
    return model, events + [("trajectory", await trajectory.read(run.run_id))]


@pytest.mark.browser  # validates the delivered game in Chromium
async def test_an_exact_hit_is_fixed_with_no_model_call(runtime, library: CaseLibrary, tmp_path: Path) -> None:
    # the first writer fixes the syntax error itself: Read, Write(broken), Build, Read, Write(fix), Build, answer
    first, events = await _writer_turn(runtime, library, _project(runtime.pack, tmp_path, "one"), tmp_path / "h1")
    assert len(first.calls) == 7
    assert [e.fixer for e in events if isinstance(e, CaseRecorded)] == ["restore_last_built"] * 2
    # the same defect in another project: the library's fixer repairs it before the model reads the failure
    second, events = await _writer_turn(runtime, library, _project(runtime.pack, tmp_path, "two"), tmp_path / "h2")
    assert len(second.calls) == 4                     # Read, Write(broken), Build, final answer: 3 calls saved
    name, text = _last_result(second.calls[-1].messages)
    assert name == "Build" and text.startswith("BUILD OK") and "Applied known fix `restore_last_built`" in text
    [hit] = [e for e in events if isinstance(e, CaseHit)]
    assert hit.action == "applied" and hit.fixed and hit.fixer == "restore_last_built"
    assert hit.replaced_model_calls == 3 and hit.estimate == "recorded"  # what the first writer's fix took
    assert (tmp_path / "two/src/scenes/Play.js").read_text() == (tmp_path / "one/src/scenes/Play.js").read_text()
    summary = TrajectoryStore.summarize(events[-1][1])
    assert summary["library"] == {"hits": 1, "applied": 1, "fixed": 1, "offered": 0, "model_calls_replaced": 3,
                                  "tokens_replaced": hit.replaced_tokens}
    stats = await library.store.stats((await library.store.all(ENGINE_SCOPE))[0])
    assert stats["fixed"] == 0  # the hit was the tenant's own case (looked up first) ...
    own = (await library.store.all(tenant_scope("acme")))[0]
    assert (await library.store.stats(own))["fixed"] == 1  # ... and it counted the fix
