"""Whole runs through an ``openai`` route against a fake server that misbehaves as llama.cpp's does (real Redis,
esbuild, Chromium; only the model is scripted): each failure measured with the real server (evals/real-model.md)
ends honestly — with a short reason, an error the model can act on, usage marked when estimated, every call in the
trajectory."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tier2.runs import RunRequest, execute_run
from tier2.settings.loader import REPO_ROOT
from tier2.store.trajectory import ModelCallRecord, ToolCallRecord, TrajectoryStore
from tier2.testing import FakeOpenAIServer, Quirks, Reply

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


def _route(config_dir: Path, base_url: str, extra: str = "") -> None:
    (config_dir / "policy" / "zz-quirks.yaml").write_text(
        f"models:\n  quirky:\n    kind: openai\n    model: fake-model\n    base_url: {base_url}\n"
        f"    api_key_env: TIER2_TEST_FAKE_KEY\n    max_retries: 0\n{extra}"
        "budget: {usd: null}\n")


def _project(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    assert isinstance(system, str)  # a strict server would have refused parts
    found = re.search(r"game project at (\S+?) \(the project directory\)", system)
    assert found is not None
    return found.group(1)


def _good_steps(project: str) -> list[Reply]:
    theme = json.loads((REPO_ROOT / "capability_packs/phaser/genres/shop/template/data/theme.json").read_text())
    theme["title"] = "Quirky Tavern"
    return [Reply(tool_calls=[("Read", {"file_path": f"{project}/data/theme.json"})]),
            Reply(tool_calls=[("Write", {"file_path": f"{project}/data/theme.json",
                                         "content": json.dumps(theme, indent=2)})]),
            Reply(tool_calls=[("Build", {})]), Reply(tool_calls=[("RunGame", {})])]


def _writer(malformed: list[Reply] | None = None):  # noqa: ANN202 - a responder
    def answer(body: dict[str, Any]) -> Reply:
        steps = (malformed or []) + _good_steps(_project(body))
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        return steps[done] if done < len(steps) else Reply(text="The game is done.")
    return answer


async def _calls(runtime: Any, run_id: str) -> list[Any]:
    return [c for c in await TrajectoryStore(runtime.store.r, runtime.store.keys).read(run_id) if c.agent == "writer"]


async def test_malformed_tool_calls_are_answered_recorded_and_the_run_goes_on(runtime, config_dir, tmp_path,
                                                                              monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    malformed = [Reply(raw_tool_calls=[("Write", "not json at all ]]")]),       # broken JSON arguments
                 Reply(tool_calls=[("WriteFile", {"path": "x.js"})]),           # a tool that does not exist
                 Reply(tool_calls=[("Read", {"path_to_file": "data/theme.json"})])]  # the schema refuses it
    with FakeOpenAIServer(_writer(malformed), quirks=Quirks(strict=True)) as srv:
        _route(config_dir, srv.base_url)
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="quirky"))
        requests, refused = list(srv.requests), list(srv.refused)
    assert out.status == "delivered", out.stop_reason
    assert refused == []  # every request had plain-string content: the strict server accepted all of them
    answers = [m["content"] for m in requests[3]["messages"] if m["role"] == "tool"]
    assert len(answers) == 3
    assert "JSON" in answers[0] and "recorrect the arguments" in answers[0]   # what to do about it
    assert "WriteFile" in answers[1] and "Input validation failed" in answers[2]
    tools = [c for c in await _calls(runtime, out.run_id) if isinstance(c, ToolCallRecord)]
    assert [(c.tool, c.state) for c in tools][:3] == [("Write", "error"), ("WriteFile", "error"), ("Read", "error")]
    assert [c.tool for c in tools][3:] == ["Read", "Write", "Build", "RunGame"]
    assert "JSON" in tools[0].error and tools[0].args_sha256
    assert out.delivery["usage"]["tool_calls"]["WriteFile"] == 1


async def test_an_endpoint_error_ends_the_run_with_a_short_reason(runtime, config_dir, tmp_path,
                                                                  monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    dump = "9 validation errors for CreateChatCompletionRequest\nbody.messages.0.typed-dict.content\n  Input should be"
    with FakeOpenAIServer(lambda body: Reply(status=500, text=dump)) as srv:
        _route(config_dir, srv.base_url)
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="quirky"))
        base, sent = srv.base_url, len(srv.requests)
    assert out.status == "failed"
    assert out.stop_reason == f"model endpoint error: 500 from {base} (9 validation errors for " \
                              "CreateChatCompletionRequest)"
    assert json.loads(Path(out.delivery_path).read_text())["stop_reason"] == out.stop_reason
    assert sent == 1  # max_retries: 0 is one request: the OpenAI client adds no hidden retries
    models = [c for c in await _calls(runtime, out.run_id) if isinstance(c, ModelCallRecord)]
    assert [c.state for c in models] == ["error"] and "typed-dict" in models[0].error  # the details: trajectory


async def test_a_server_without_usage_is_metered_by_estimate_and_says_so(runtime, config_dir, tmp_path,
                                                                         monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    with FakeOpenAIServer(_writer(), quirks=Quirks(usage=False, strict=True)) as srv:
        _route(config_dir, srv.base_url, "prices:\n  fake-model: {input_per_mtok: 1.0, output_per_mtok: 2.0}\n")
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="quirky"))
    assert out.status == "delivered", out.stop_reason
    usage = out.delivery["usage"]
    assert usage["estimated"] is True and usage["estimated_calls"] == 5  # the writer's: the server sent no usage
    models = [c for c in await _calls(runtime, out.run_id) if isinstance(c, ModelCallRecord)]
    assert len(models) == 5 and all(c.usage_estimated and c.input_tokens > 0 and c.output_tokens > 0 for c in models)
    assert all(c.cost_usd is not None and c.cost_usd > 0 for c in models)  # priced from the estimate, never zero


async def test_an_unsupported_parameter_is_dropped_and_the_run_delivers(runtime, config_dir, tmp_path,
                                                                        monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    with FakeOpenAIServer(_writer(), quirks=Quirks(unsupported=frozenset({"temperature"}))) as srv:
        _route(config_dir, srv.base_url, "    parameters: {temperature: 0.2}\n")
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="quirky"))
        requests = list(srv.requests)
    assert out.status == "delivered", out.stop_reason
    assert "temperature" in requests[0] and all("temperature" not in r for r in requests[1:])
    models = [c for c in await _calls(runtime, out.run_id) if isinstance(c, ModelCallRecord)]
    assert all(c.dropped_params == ["temperature"] for c in models) and len(models) == 5


async def test_a_context_length_refusal_stops_the_run_with_the_sizes(runtime, config_dir, tmp_path,
                                                                      monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    with FakeOpenAIServer(_writer(), quirks=Quirks(context_window=200)) as srv:
        _route(config_dir, srv.base_url, "    context_size: 4096\n")
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="quirky"))
    assert out.status == "stopped"
    assert out.stop_reason.startswith("context: the model server refused the prompt as too long")
    assert "exceed context window of 200" in out.stop_reason and "4096" in out.stop_reason
