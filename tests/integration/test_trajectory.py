"""The call recorder and the trajectory store on real Redis, with a scripted in-process model (no browser)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from agentscope.agent import Agent, ModelConfig, ReActConfig
from agentscope.message import Msg, TextBlock, ToolCallBlock, UserMsg
from agentscope.model import ChatModelBase
from agentscope.state import AgentState
from agentscope.tool import Read, Toolkit

from tier2.assembly.writer import writer_permissions
from tier2.middleware import RunLayers, build_middlewares
from tier2.middleware.recorder import CallRecorder
from tier2.models.fallback import FallbackChain
from tier2.runs.loop.usage import EventMapper
from tier2.settings.loader import Price
from tier2.store.keys import Keys
from tier2.store.trajectory import ModelCallRecord, ToolCallRecord, TrajectoryStore
from tier2.testing import ScriptedChatModel, tool_results
from tier2.tools import ProjectGlob

pytestmark = [pytest.mark.redis]
PRICES = {"primary-model": Price(input_per_mtok=1.0, output_per_mtok=2.0),
          "backup-model": Price(input_per_mtok=10.0, output_per_mtok=20.0)}


@pytest.fixture
async def store(redis_url: str, tmp_path: Path):
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield TrajectoryStore(client, Keys(prefix=f"test-traj-{tmp_path.name}"))
    await client.aclose()


def _script(project: Path):
    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)
        if done == 0:
            return [ToolCallBlock(id="call-glob", name="Glob", input=json.dumps({"pattern": "*.txt",
                                                                                 "path": str(project)}))]
        if done == 1:
            return [TextBlock(text="Reading it."), ToolCallBlock(id="call-read", name="Read", input=json.dumps(
                {"file_path": str(project / "notes.txt")}))]
        return [TextBlock(text="done")]
    return script


def _down(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
    raise ConnectionError("primary provider is down")


async def _run(project: Path, recorder: CallRecorder, model: ChatModelBase, fallback: ChatModelBase | None = None,
               mapper: EventMapper | None = None) -> list:
    (project / "notes.txt").write_text("alpha\nbeta\n")
    agent = Agent(name="writer", system_prompt="You are a test agent.", model=model,
                  toolkit=Toolkit(tools=[ProjectGlob(project), Read()]),
                  middlewares=build_middlewares(str(project), layers=RunLayers(tracing=[recorder])),
                  state=AgentState(permission_context=writer_permissions(project)),
                  react_config=ReActConfig(max_iters=8), model_config=ModelConfig(fallback_model=fallback))
    events = []
    async for item in agent.reply_stream(UserMsg("user", "list and read the notes")):
        if mapper is not None and not isinstance(item, Msg):
            events += mapper.map(item)
    return events


async def test_every_model_and_tool_call_is_recorded_in_order(store: TrajectoryStore, tmp_path: Path) -> None:
    recorder = CallRecorder("run-1", "writer", PRICES, store, ["primary-model"])
    await _run(tmp_path, recorder, ScriptedChatModel(_script(tmp_path), model="primary-model"))
    calls = await store.read("run-1")
    assert [c.kind for c in calls] == ["model", "tool", "model", "tool", "model"]
    assert [c.step for c in calls] == [1, 1, 2, 2, 3]
    models = [c for c in calls if isinstance(c, ModelCallRecord)]
    tools = [c for c in calls if isinstance(c, ToolCallRecord)]
    assert all(m.state == "success" and m.model == "primary-model" and m.fallback == 0 for m in models)
    assert all(m.output_tokens > 0 and m.cost_usd == PRICES["primary-model"].cost(m.input_tokens, m.output_tokens)
               for m in models)
    assert [(t.call_id, t.tool, t.state) for t in tools] == [("t:writer:call-glob", "Glob", "success"),
                                                             ("t:writer:call-read", "Read", "success")]
    assert tools[1].args_summary == str(tmp_path / "notes.txt")
    assert tools[1].args_sha256 == hashlib.sha256(json.dumps({"file_path": str(tmp_path / "notes.txt")})
                                                  .encode()).hexdigest()[:16]
    assert tools[1].result_chars > 0 and tools[1].result_sha256 and tools[1].duration_ms >= 0
    assert len({c.call_id for c in calls}) == 5
    summary = TrajectoryStore.summarize(calls)
    assert summary["model_calls"] == 3 and summary["tools"]["Read"]["calls"] == 1
    assert summary["models"]["primary-model"]["cost_usd"] == pytest.approx(sum(m.cost_usd or 0 for m in models))


async def test_a_call_recorded_again_replaces_its_record_and_keeps_its_place(store: TrajectoryStore) -> None:
    first = ToolCallRecord(call_id="t:a", agent="writer", tool="Write", state="interrupted", started_at=100.0,
                           duration_ms=5)
    other = ToolCallRecord(call_id="t:b", agent="writer", tool="Read", state="success", started_at=101.0,
                           duration_ms=1)
    again = first.model_copy(update={"state": "success", "started_at": 200.0, "duration_ms": 7})
    for call in (first, other, again):  # a resumed attempt repeats t:a after t:b was recorded
        assert await store.record("run-2", call)
    calls = await store.read("run-2")
    assert [(c.call_id, c.state) for c in calls] == [("t:a", "success"), ("t:b", "success")]


async def test_the_fallback_answers_when_the_primary_fails_and_is_named(store: TrajectoryStore,
                                                                       tmp_path: Path) -> None:
    recorder = CallRecorder("run-3", "writer", PRICES, store, ["primary-model", "backup-model"])
    mapper = EventMapper("run-3", "primary-model")
    events = await _run(tmp_path, recorder, ScriptedChatModel(_down, model="primary-model"),
                        ScriptedChatModel(_script(tmp_path), model="backup-model"), mapper)
    calls = await store.read("run-3")
    models = [c for c in calls if isinstance(c, ModelCallRecord)]
    assert [(m.model, m.state, m.fallback) for m in models] == [("primary-model", "error", 0),
                                                                 ("backup-model", "success", 1)] * 3
    assert "ConnectionError: primary provider is down" in models[0].error
    assert [m.step for m in models] == [1, 1, 2, 2, 3, 3]  # a failed attempt belongs to the step it tried
    called = [e for e in events if e.type == "model_called"]
    assert {e.model for e in called} == {"backup-model"}  # events and cost name the model that answered
    assert called[0].cost_usd == PRICES["backup-model"].cost(called[0].input_tokens, called[0].output_tokens)
    assert mapper.usage.report()["calls_by_model"] == {"backup-model": 3}


async def test_a_longer_fallback_chain_is_followed_in_order(store: TrajectoryStore, tmp_path: Path) -> None:
    chain = ["primary-model", "second-model", "backup-model"]
    recorder = CallRecorder("run-4", "writer", PRICES, store, chain)
    tail = FallbackChain([ScriptedChatModel(_down, model="second-model"),
                          ScriptedChatModel(_script(tmp_path), model="backup-model")])
    await _run(tmp_path, recorder, ScriptedChatModel(_down, model="primary-model"), tail)
    answered = [c for c in await store.read("run-4") if isinstance(c, ModelCallRecord) and c.state == "success"]
    assert len(answered) == 3
    assert all(c.model == "backup-model" and c.fallback == 2 for c in answered)
    assert answered[0].cost_usd == PRICES["backup-model"].cost(answered[0].input_tokens, answered[0].output_tokens)


def _malformed(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
    done = tool_results(messages)
    if done == 0:
        return [ToolCallBlock(id="call-bad-json", name="Read", input="not json at all ]]")]
    if done == 1:
        return [ToolCallBlock(id="call-unknown", name="ReadEverything", input="{}")]
    return [TextBlock(text="done")]


async def test_tool_calls_agentscope_answers_itself_are_recorded_too(store: TrajectoryStore, tmp_path: Path) -> None:
    """Arguments that are not JSON and a tool that does not exist never reach ``on_acting``: recorded all the same,
    as errors with the answer the model got, at their step."""
    recorder = CallRecorder("run-bad", "writer", PRICES, store, ["primary-model"])
    await _run(tmp_path, recorder, ScriptedChatModel(_malformed, model="primary-model"))
    calls = await store.read("run-bad")
    assert [c.kind for c in calls] == ["model", "tool", "model", "tool", "model"]
    tools = [c for c in calls if isinstance(c, ToolCallRecord)]
    assert [(t.tool, t.state, t.step) for t in tools] == [("Read", "error", 1), ("ReadEverything", "error", 2)]
    assert "JSON" in tools[0].error and "ReadEverything" in tools[1].error
    assert tools[0].args_sha256 == hashlib.sha256(b"not json at all ]]").hexdigest()[:16]
