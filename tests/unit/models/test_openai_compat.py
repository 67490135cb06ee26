"""The ``openai`` kind's model against the fake server's misbehaving modes (`tier2.testing.Quirks`), each one a
failure measured on llama.cpp's server: list content refused, unsupported parameters, no usage, a context-length
400, a slow first token, and the short stop reason of an endpoint error."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from agentscope.message import SystemMsg, TextBlock, ToolCallBlock, UserMsg
from agentscope.model import ChatResponse

from tier2.errors import RunLimitReached
from tier2.models.openai_compat import FirstTokenTimeout, PlainTextFormatter, endpoint_failure
from tier2.models.routing import build_model
from tier2.settings.loader import ModelRoute
from tier2.telemetry import DROPPED_PARAMS, USAGE_ESTIMATED
from tier2.testing import FakeOpenAIServer, Quirks, Reply

TOOLS = [{"type": "function", "function": {"name": "Build", "description": "build the game",
                                           "parameters": {"type": "object", "properties": {}}}}]


def _model(srv: FakeOpenAIServer, stream: bool = True, first: float | None = None, **route: Any) -> Any:
    spec = {"kind": "openai", "model": "fake-model", "base_url": srv.base_url, "max_retries": 0, "stream": stream,
            **route}
    return build_model("t", ModelRoute(**spec), timeout_s=20.0, first_token_s=first)


async def _answer(model: Any, tools: list[dict[str, Any]] | None = None) -> ChatResponse:
    result = await model([SystemMsg("system", "You write games."), UserMsg("user", "make a game")], tools=tools)
    if isinstance(result, ChatResponse):
        return result
    last = None
    async for chunk in result:
        last = chunk
    assert last is not None and last.is_last
    return last


async def test_text_only_content_is_one_string_and_images_keep_their_parts() -> None:
    fmt = PlainTextFormatter()
    out = await fmt.format([SystemMsg("system", [TextBlock(text="a"), TextBlock(text="b")]), UserMsg("user", "hi")])
    assert out[0]["content"] == "a\nb" and out[1]["content"] == "hi"


@pytest.mark.parametrize("stream", [True, False])
async def test_a_strict_server_accepts_every_request(stream: bool) -> None:
    with FakeOpenAIServer(lambda body: Reply(text="ok", usage=(30, 2)), quirks=Quirks(strict=True)) as srv:
        res = await _answer(_model(srv, stream=stream), TOOLS)
    assert srv.refused == []
    assert res.usage is not None and (res.usage.input_tokens, res.usage.output_tokens) == (30, 2)
    assert USAGE_ESTIMATED not in res.metadata
    assert all(isinstance(m["content"], str) for m in srv.requests[0]["messages"])


async def test_agentscope_plain_formatter_is_what_a_strict_server_refuses() -> None:
    """The failure the formatter fixes: AgentScope's own formatter sends parts, the strict server answers 500."""
    from agentscope.credential import OpenAICredential
    from agentscope.model import OpenAIChatModel
    with FakeOpenAIServer(lambda body: Reply(text="ok"), quirks=Quirks(strict=True)) as srv:
        raw = OpenAIChatModel(credential=OpenAICredential(name="t", api_key="sk-x", base_url=srv.base_url),
                              model="fake-model", stream=False, max_retries=0, client_kwargs={"max_retries": 0})
        with pytest.raises(openai.InternalServerError) as err:
            await _answer(raw)
    reason = endpoint_failure(err.value)
    assert reason is not None and reason.startswith(f"model endpoint error: 500 from {srv.base_url} (")
    assert reason.endswith("(1 validation errors:)") and "string_type" not in reason  # the first line only


@pytest.mark.parametrize("stream", [True, False])
async def test_missing_usage_is_estimated_and_marked(stream: bool) -> None:
    reply = Reply(tool_calls=[("Build", {"target": "x" * 40})])
    with FakeOpenAIServer(lambda body: reply, quirks=Quirks(usage=False)) as srv:
        res = await _answer(_model(srv, stream=stream), TOOLS)
    assert res.metadata[USAGE_ESTIMATED] is True
    assert res.usage is not None and res.usage.input_tokens > 0 and res.usage.output_tokens >= 10
    assert any(isinstance(b, ToolCallBlock) for b in res.content)


@pytest.mark.parametrize("param", ["temperature", "stream_options"])
async def test_an_unsupported_parameter_is_dropped_once_and_recorded(param: str) -> None:
    with FakeOpenAIServer(lambda body: Reply(text="ok"), quirks=Quirks(unsupported=frozenset({param}))) as srv:
        model = _model(srv, parameters={"temperature": 0.2})
        first = await _answer(model, TOOLS)
        second = await _answer(model, TOOLS)
    assert len(srv.refused) == 1 and srv.refused[0].status == 400
    assert param in srv.requests[0] and all(param not in r for r in srv.requests[1:])
    assert len(srv.requests) == 3  # refused, retried without it, and the next call never sends it again
    assert first.metadata[DROPPED_PARAMS] == [param] and second.metadata[DROPPED_PARAMS] == [param]


async def test_a_400_that_names_no_known_parameter_is_not_retried() -> None:
    with FakeOpenAIServer(lambda body: Reply(status=400, text="Unsupported value: messages[3] is odd")) as srv:
        with pytest.raises(openai.BadRequestError):
            await _answer(_model(srv, parameters={"temperature": 0.2}))
    assert len(srv.requests) == 1


async def test_a_context_length_400_is_a_clear_stop() -> None:
    with FakeOpenAIServer(lambda body: Reply(text="ok"), quirks=Quirks(context_window=5)) as srv:
        with pytest.raises(RunLimitReached) as err:
            await _answer(_model(srv, context_size=2048))
    assert err.value.limit == "context"
    assert "exceed context window of 5" in err.value.detail and "2048" in err.value.detail


async def test_a_slow_first_token_times_out_with_a_reason() -> None:
    with FakeOpenAIServer(lambda body: Reply(text="late"), quirks=Quirks(first_token_delay_s=2.0)) as srv:
        model = _model(srv, first=0.3)
        with pytest.raises(openai.APITimeoutError) as err:
            await _answer(model)
    assert len(srv.requests) == 1  # no hidden client retry
    reason = endpoint_failure(err.value)
    assert reason is not None and reason.startswith(f"model endpoint timed out: {srv.base_url}")


async def test_a_stream_kept_alive_by_pings_still_times_out_at_the_first_token() -> None:
    """llama.cpp's server sends the stream's headers at once and SSE pings while it reads the prompt: an HTTP read
    timeout never fires; the first-token bound does."""
    with FakeOpenAIServer(lambda body: Reply(text="late"), quirks=Quirks(ping_s=3.0)) as srv:
        with pytest.raises(FirstTokenTimeout) as err:
            await _answer(_model(srv, first=0.8))
        on_time = await _answer(_model(srv, first=10.0))  # a patient bound: the answer after the pings
    assert endpoint_failure(err.value) == f"model endpoint timed out: {srv.base_url} sent no token within 0.8 s " \
                                         "(timeouts.first_token_s)"
    assert on_time.content[0].text == "late"


def test_endpoint_failure_knows_only_endpoint_errors() -> None:
    assert endpoint_failure(ValueError("x")) is None
    assert endpoint_failure(RunLimitReached("steps", "80")) is None
