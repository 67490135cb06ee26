"""Circuit breakers on real parts: a real AgentScope Agent in the tier2 onion (the writer assembly where possible),
real files, real Redis for the runs; only the model is scripted (a `ChatModelBase` subclass or the fake
OpenAI-compatible server). Each scripted model loops, stalls or spends, and a breaker must stop it with a reason."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from agentscope.agent import Agent, ContextConfig
from agentscope.message import Msg, TextBlock, ToolCallBlock, UserMsg
from agentscope.model import ChatModelBase, ChatResponse, ChatUsage
from agentscope.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)
from agentscope.state import AgentState
from agentscope.tool import ToolBase, ToolChunk, Toolkit
from agentscope.workspace import LocalWorkspace

from tier2.assembly import build_writer
from tier2.errors import RunLimitReached
from tier2.middleware import RunLayers, build_middlewares
from tier2.middleware.breakers import STATE_KEY, BreakersMiddleware
from tier2.models.offline import OfflineCredential
from tier2.runs import RunRequest, execute_run
from tier2.settings.loader import REPO_ROOT, BreakerPolicy, PolicyStore
from tier2.testing import FakeOpenAIServer, Reply, ScriptedChatModel
from tier2.validators import ValidationRunner

POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
Script = Callable[[int, list[Msg]], Awaitable[list[TextBlock | ToolCallBlock]]]


class ScriptedModel(ScriptedChatModel):
    """The model boundary: a strict list of steps, or ``script(n, messages)`` answering the n-th call (a looping
    model: it may also never return). ``stall_stream`` streams the first block, then hangs before the final chunk.
    Every call reports 1000 tokens in, 50 out."""

    def __init__(self, script: Script | list[Any], *, stream: bool = True, stall_stream: bool = False,
                 context_size: int = 1_000_000) -> None:
        if callable(script):
            numbered = script

            async def step(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
                return await numbered(len(self.calls), messages)

            script = step
        super().__init__(script, model="scripted-test", stream=stream, context_size=context_size, usage=(1000, 50),
                         credential=OfflineCredential(name="scripted"))
        self.stall_stream = stall_stream

    async def stream_blocks(self, blocks: list[TextBlock | ToolCallBlock], usage: ChatUsage) -> AsyncGenerator:
        for b in blocks:
            yield self.delta(b)
            if self.stall_stream:
                await asyncio.Event().wait()
        yield ChatResponse(content=blocks, is_last=True, usage=usage)


def call(n: int, name: str, **args: Any) -> ToolCallBlock:
    return ToolCallBlock(id=f"c{n}-{name}", name=name, input=json.dumps(args))


def breakers(**overrides: Any) -> BreakerPolicy:
    base = PolicyStore(REPO_ROOT / "config").snapshot().breakers
    stuck = base.stuck.model_copy(update=overrides.pop("stuck", {}))
    return base.model_copy(update={**overrides, "stuck": stuck})


async def writer(project: Path, pack: Any, model: ChatModelBase, policy: BreakerPolicy, run_id: str = "r-test",
                 state_json: str | None = None) -> Agent:
    """The real writer assembly (tools, permissions, onion) with only the breakers layer filled in."""
    base = PolicyStore(REPO_ROOT / "config").snapshot()
    handle = await build_writer(project_id="g", project=project, pack=pack, policy=base, model=model,
                                runner=ValidationRunner(None, pack, base),  # type: ignore[arg-type] - no RunGame
                                reports_dir=project / ".tier2" / "reports", state_json=state_json,
                                layers=RunLayers(breakers=[BreakersMiddleware(run_id, policy)]))
    return handle.agent


async def turn(agent: Agent, text: str = "Make the game.") -> Msg:
    return await agent.reply(UserMsg("user", text))


def reader(project: Path) -> Script:
    """Reads the same unchanged file forever."""
    async def script(n: int, messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        return [TextBlock(text="Let me check the theme."), call(n, "Read", file_path=f"{project}/data/theme.json")]
    return script


async def test_a_looping_model_is_stopped_by_the_stuck_detector(template_copy: Path, pack: Any) -> None:
    model = ScriptedModel(reader(template_copy))
    agent = await writer(template_copy, pack, model, breakers())
    with pytest.raises(RunLimitReached) as exc:
        await turn(agent)
    assert exc.value.limit == "stuck"
    assert exc.value.detail == "same action+observation repeated 4x: Read data/theme.json"
    assert len(model.calls) == 4                                   # the fifth call was never made
    st = agent.state.middle_context[STATE_KEY]
    assert st["tripped"] == ["stuck", exc.value.detail] and st["steps"] == 4
    results = [b for m in agent.state.context if isinstance(m.content, list) for b in m.content
               if getattr(b, "type", None) == "tool_result"]
    assert len(results) == 4 and all(r.state == "success" for r in results)  # every call has its result


async def test_reading_again_after_each_write_is_progress(template_copy: Path, pack: Any) -> None:
    path = f"{template_copy}/notes.txt"
    (template_copy / "notes.txt").write_text("v0\n")

    steps = [[call(n, "Read", file_path=path)] if n % 2 else [call(n, "Write", file_path=path, content=f"v{n}\n")]
             for n in range(1, 13)]
    model = ScriptedModel([*steps, [TextBlock(text="Done.")]])
    agent = await writer(template_copy, pack, model, breakers())
    final = await turn(agent)
    assert final.get_text_content() == "Done."
    assert len(model.calls) == 13 and (template_copy / "notes.txt").read_text() == "v12\n"


async def test_a_stalled_model_call_times_out(template_copy: Path, pack: Any) -> None:
    async def stall(n: int, messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        await asyncio.Event().wait()  # the provider never answers
        return []

    agent = await writer(template_copy, pack, ScriptedModel(stall, stream=False), breakers(model_call_s=0.2))
    with pytest.raises(RunLimitReached) as exc:
        await turn(agent)
    assert str(exc.value) == "timeout: a model call took longer than 0.2 s (breakers.model_call_s)"


async def test_the_run_deadline_bounds_a_call_before_its_own_limit(template_copy: Path, pack: Any) -> None:
    """Double timeouts: the call's own limit (an hour here) and the run's deadline, whichever comes first."""
    async def stall(n: int, messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        await asyncio.Event().wait()
        return []

    base = PolicyStore(REPO_ROOT / "config").snapshot()
    deadline = time.time() + 0.3
    layer = BreakersMiddleware("r-deadline", breakers(model_call_s=3600), deadline_at=lambda: deadline)
    handle = await build_writer(project_id="g", project=template_copy, pack=pack, policy=base,
                                model=ScriptedModel(stall), runner=ValidationRunner(None, pack, base),  # type: ignore[arg-type]
                                reports_dir=template_copy / "r", layers=RunLayers(breakers=[layer]))
    with pytest.raises(RunLimitReached) as exc:
        await turn(handle.agent)
    assert str(exc.value) == "deadline: the run deadline passed during a model call"


async def test_a_stream_that_stops_mid_way_times_out(template_copy: Path, pack: Any) -> None:
    model = ScriptedModel(reader(template_copy), stall_stream=True)
    agent = await writer(template_copy, pack, model, breakers(model_call_s=0.2))
    with pytest.raises(RunLimitReached) as exc:
        await turn(agent)
    assert exc.value.limit == "timeout" and "model call" in exc.value.detail
    assert not (template_copy / "notes.txt").exists() and len(model.calls) == 1


class SlowTool(ToolBase):
    """A tool that never finishes on its own; records whether it was cancelled."""

    name = "Slow"
    description = "Waits forever."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    is_concurrency_safe = True
    is_read_only = True

    def __init__(self) -> None:
        super().__init__()
        self.cancelled = False

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> Any:
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, message="test tool")

    async def call(self, **_: Any) -> ToolChunk:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolChunk(content=[TextBlock(text="never")], state="success")


async def test_a_slow_tool_times_out_and_the_run_stops_before_another_model_call(tmp_path: Path) -> None:
    slow, slow2 = SlowTool(), SlowTool()
    slow2.name = "Slow2"
    model = ScriptedModel([[call(1, "Slow"), call(1, "Slow2")]])  # strict: a second call would be a ScriptError
    allow = {t: [PermissionRule(tool_name=t, rule_content=None, behavior=PermissionBehavior.ALLOW, source="t")]
             for t in ("Slow", "Slow2")}
    agent = Agent(name="writer", system_prompt="test", model=model, toolkit=Toolkit(tools=[slow, slow2]),
                  middlewares=build_middlewares(str(tmp_path), layers=RunLayers(
                      breakers=[BreakersMiddleware("r-slow", breakers(tool_call_s=0.2))])),
                  state=AgentState(permission_context=PermissionContext(mode=PermissionMode.DONT_ASK,
                                                                        allow_rules=allow)))
    with pytest.raises(RunLimitReached) as exc:  # two concurrent calls: still a plain RunLimitReached
        await turn(agent)
    assert exc.value.limit == "timeout" and exc.value.detail.startswith("tool call Slow")
    assert "(breakers.tool_call_s)" in exc.value.detail
    assert len(model.calls) == 1 and slow.cancelled and slow2.cancelled
    results = [b for m in agent.state.context if isinstance(m.content, list) for b in m.content
               if getattr(b, "type", None) == "tool_result"]
    assert {r.state for r in results} == {"error"} and len(results) == 2  # answered, never left dangling


async def test_the_step_caps_stop_a_busy_model(template_copy: Path, pack: Any) -> None:
    busy = [[call(n, "Write", file_path=f"{template_copy}/f{n}.txt", content=str(n))]  # progress every step
            for n in range(1, 4)]
    model = ScriptedModel(busy)                               # strict: a fourth call would be a ScriptError
    agent = await writer(template_copy, pack, model, breakers(steps_per_turn=3))
    with pytest.raises(RunLimitReached) as exc:
        await turn(agent)
    assert str(exc.value) == "steps: 3 model calls in one writer turn (breakers.steps_per_turn=3)"
    assert len(model.calls) == 3

    one_step_turns = [[call(n, "Write", file_path=f"{template_copy}/g{n}.txt", content="x")] if n % 2 else [
        TextBlock(text=f"turn done {n}")] for n in range(1, 6)]
    model = ScriptedModel(one_step_turns)
    agent = await writer(template_copy, pack, model, breakers(steps_per_run=5), run_id="r-per-run")
    await turn(agent)
    await turn(agent)                                         # 4 calls over two turns
    with pytest.raises(RunLimitReached) as exc:
        await turn(agent)
    assert str(exc.value) == "steps: 5 model calls in this run (breakers.steps_per_run=5)"
    assert len(model.calls) == 5


async def test_empty_replies_are_stuck_across_turns(template_copy: Path, pack: Any) -> None:
    model = ScriptedModel([[], []], stream=False)             # two empty replies; a third call is never made
    agent = await writer(template_copy, pack, model, breakers())
    await turn(agent)
    await turn(agent, "The gates still fail: fix them.")      # each empty reply ends its turn
    with pytest.raises(RunLimitReached) as exc:
        await turn(agent, "The gates still fail: fix them.")
    assert str(exc.value) == "stuck: 2 empty model replies in a row (no text, no tool call)"
    assert len(model.calls) == 2


async def test_a_compression_loop_is_stuck(tmp_path: Path) -> None:
    """Every tool result refills the context past the trigger, so it is compressed again and again."""
    (tmp_path / "big").mkdir()
    for i in range(8):
        (tmp_path / "big" / f"{i}.txt").write_text("".join(f"part {i} line {j} lorem ipsum\n" for j in range(300)))

    async def script(n: int, messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        return [call(n, "Read", file_path=f"{tmp_path}/big/{n % 8}.txt")]

    ws = LocalWorkspace(workdir=str(tmp_path), workspace_id="w")
    await ws.initialize()
    tools = [t for t in await ws.list_tools() if t.name == "Read"]
    allow = {"Read": [PermissionRule(tool_name="Read", rule_content=f"{tmp_path}/*",
                                     behavior=PermissionBehavior.ALLOW, source="t")]}
    model = ScriptedModel(script, context_size=3000)
    agent = Agent(name="writer", system_prompt="test", model=model, toolkit=Toolkit(tools=tools),
                  middlewares=build_middlewares(str(tmp_path), layers=RunLayers(
                      breakers=[BreakersMiddleware("r-compress", breakers())])),
                  state=AgentState(permission_context=PermissionContext(mode=PermissionMode.DONT_ASK,
                                                                        allow_rules=allow)),
                  context_config=ContextConfig(trigger_ratio=0.8, reserve_ratio=0.1))
    with pytest.raises(RunLimitReached) as exc:
        await turn(agent)
    assert exc.value.limit == "stuck" and exc.value.detail.startswith("context compressed 3x within 6")
    assert len(model.calls) <= 6


async def test_breaker_state_survives_a_checkpoint_and_resets_for_a_new_run(template_copy: Path, pack: Any) -> None:
    async def three_reads_then_stop(n: int, messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        if n % 4 == 0:
            return [TextBlock(text="pausing")]
        return [call(n, "Read", file_path=f"{template_copy}/data/theme.json")]

    model = ScriptedModel(three_reads_then_stop)
    agent = await writer(template_copy, pack, model, breakers())
    await turn(agent)                                         # three identical Reads, then the turn ends
    saved = agent.state.model_dump_json()                     # what a checkpoint stores

    resumed = await writer(template_copy, pack, ScriptedModel(reader(template_copy)), breakers(), state_json=saved)
    with pytest.raises(RunLimitReached) as exc:               # same run: the fourth identical Read trips
        await turn(resumed)
    assert exc.value.detail == "same action+observation repeated 4x: Read data/theme.json"

    follow_up = await writer(template_copy, pack, ScriptedModel(three_reads_then_stop), breakers(),
                             run_id="r-follow-up", state_json=saved)
    await turn(follow_up)                                     # a new run on the same conversation starts afresh
    assert follow_up.state.middle_context[STATE_KEY]["run_id"] == "r-follow-up"


# ---------------------------------------------------------------------------------------------- whole runs


def _route(config_dir: Path, name: str, base_url: str) -> None:
    (config_dir / "policy" / "zz-breakers-test.yaml").write_text(
        f"models:\n  {name}:\n    kind: openai\n    model: fake-model\n    base_url: {base_url}\n"
        f"    api_key_env: TIER2_TEST_FAKE_KEY\n    max_retries: 0\n"
        "prices:\n  fake-model: {input_per_mtok: 2.0, output_per_mtok: 8.0}\n")


def _project(body: dict) -> str:
    system = body["messages"][0]["content"]
    system = system if isinstance(system, str) else " ".join(p.get("text", "") for p in system)
    return re.search(r"game project at (\S+?) \(the project directory\)", system).group(1)


@pytest.mark.redis
async def test_a_looping_run_stops_before_a_fifth_of_its_budget(runtime, config_dir, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    with FakeOpenAIServer(lambda body: Reply(text="Checking the theme again.", tool_calls=[
            ("Read", {"file_path": f"{_project(body)}/data/theme.json"})])) as srv:
        _route(config_dir, "looper", srv.base_url)
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="looper"))
        assert len(srv.requests) == 4
    assert out.status == "stopped"
    assert out.stop_reason == "stuck: same action+observation repeated 4x: Read data/theme.json"
    budget_usd = runtime.policies.snapshot().budget.usd
    spent = out.delivery["usage"]["cost_usd"]
    assert spent is not None and 0 < spent < 0.2 * budget_usd, (spent, budget_usd)
    record = json.loads(Path(out.delivery_path).read_text())
    assert record["status"] == "stopped" and record["stop_reason"] == out.stop_reason


@pytest.mark.redis
async def test_a_stalled_provider_is_cut_by_the_model_call_breaker(runtime, config_dir, tmp_path,
                                                                   monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    release = threading.Event()

    def stalled(body: dict) -> Reply:
        release.wait(60)  # the provider accepts the request and never answers (until the test ends)
        return Reply(text="too late")

    try:
        with FakeOpenAIServer(stalled) as srv:
            _route(config_dir, "stalled", srv.base_url)
            (config_dir / "policy" / "zz-breakers-fast.yaml").write_text("breakers:\n  model_call_s: 0.5\n")
            out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="stalled"))
            release.set()
    finally:
        release.set()
    assert out.status == "stopped"
    assert out.stop_reason == "timeout: a model call took longer than 0.5 s (breakers.model_call_s)"
