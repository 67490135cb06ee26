"""The ``openai`` kind route's model: AgentScope's `OpenAIChatModel` made honest against real OpenAI-compatible
servers (llama.cpp, vLLM, gateways), which misbehave in ways a vendor API does not.

* **Plain-string content** (`PlainTextFormatter`): a message whose content is text only is sent as one string, not
  a list of ``{"type": "text"}`` parts — llama.cpp's server accepts parts only in user messages and answers a
  system message of parts with a 500. Messages with images keep their parts.
* **Missing usage**: a response without ``usage`` gets an estimate (characters / 4 of the request and the answer)
  marked ``metadata[USAGE_ESTIMATED]``; the call recorder and the run's usage say so — never zero tokens silently.
* **A 400 for an unsupported parameter** (``temperature``, ``top_p``, ``max_tokens``, ``parallel_tool_calls``,
  ``tool_choice``, ``stream_options``): the parameter is dropped once for this model and the call retried; the
  dropped names are on every later response (``metadata[DROPPED_PARAMS]``) and in the log.
* **A context-length 400** ends the run ``stopped`` (`RunLimitReached` ``context``) with the sizes, never a crash.
* **Retries** are the route's (``max_retries``): the OpenAI client's own hidden retries are off.

`endpoint_failure` turns any other endpoint error into a short stop reason (status, endpoint, first line of the
answer); the whole error stays in the trajectory and the log.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncGenerator
from datetime import datetime
from typing import Any

from agentscope.formatter import OpenAIChatFormatter
from agentscope.message import Msg, TextBlock, ThinkingBlock, ToolCallBlock
from agentscope.model import ChatResponse, ChatUsage, OpenAIChatModel

from tier2.errors import RunLimitReached
from tier2.telemetry import DROPPED_PARAMS, USAGE_ESTIMATED

__all__ = ["CompatChatModel", "DROPPED_PARAMS", "FirstTokenTimeout", "PlainTextFormatter", "USAGE_ESTIMATED",
           "endpoint_failure", "estimate_output_tokens"]

log = logging.getLogger(__name__)

_DROPPABLE = ("temperature", "top_p", "max_tokens", "parallel_tool_calls", "tool_choice", "stream_options")
_UNSUPPORTED = re.compile(r"unsupported|not supported|unrecognized|unknown|not allowed|not permitted|extra "
                          r"(?:inputs|fields)|invalid parameter|does not support", re.I)
_CONTEXT = re.compile(r"context[ _-]?(?:length|window|size)|maximum context|too many tokens|exceeds? .*context|"
                      r"prompt is too long|context_length_exceeded", re.I)


class PlainTextFormatter(OpenAIChatFormatter):
    """AgentScope's OpenAI chat formatter, with text-only content joined into one string (every OpenAI-compatible
    server accepts a string; not all accept parts)."""

    async def format(self, msgs: list[Msg]) -> list[dict[str, Any]]:
        return [_plain(m) for m in await super().format(msgs)]


def _plain(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list) and content and all(
            isinstance(p, dict) and p.get("type") == "text" for p in content):
        return {**message, "content": "\n".join(str(p.get("text", "")) for p in content)}
    return message


def estimate_output_tokens(content: Any) -> int:
    """Characters / 4 of an answer's text, reasoning and tool-call arguments (at least 1)."""
    chars = 0
    for block in content or []:
        if isinstance(block, TextBlock):
            chars += len(block.text)
        elif isinstance(block, ThinkingBlock):
            chars += len(block.thinking)
        elif isinstance(block, ToolCallBlock):
            chars += len(block.name) + len(block.input if isinstance(block.input, str) else json.dumps(block.input))
    return max(1, chars // 4)


def _error_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        text = inner.get("message") if isinstance(inner, dict) else None
        return str(text if text is not None else json.dumps(body))
    return str(getattr(exc, "message", "") or exc)


class CompatChatModel(OpenAIChatModel):
    """`OpenAIChatModel` with the repairs above; built by `tier2.models.routing.build_model` for ``openai``
    routes."""

    def __init__(self, *args: Any, first_token_s: float | None = None, **kwargs: Any) -> None:
        #: a streamed answer's first token must come within this many seconds: an HTTP read timeout alone does
        #: not bound it, since servers keep an SSE stream alive with comment pings (llama.cpp's every 15 s)
        self.first_token_s = first_token_s
        kwargs.setdefault("formatter", PlainTextFormatter())
        client = dict(kwargs.get("client_kwargs") or {})
        client.setdefault("max_retries", 0)  # the route's retries, counted and recorded by AgentScope: no hidden ones
        kwargs["client_kwargs"] = client
        super().__init__(*args, **kwargs)
        self.dropped: list[str] = []

    def _apply_drops(self) -> None:
        """Leave out what the server refused, on this call's parameters (the budget layer calls a per-call copy of
        the model with its own parameters; the ``dropped`` list is shared with every copy)."""
        for name in self.dropped:
            if name in ("temperature", "top_p", "max_tokens"):
                setattr(self.parameters, name, None)
            elif name == "parallel_tool_calls":
                setattr(self.parameters, name, True)  # True = the field is not sent
            elif name == "stream_options":
                self.stream = False  # a server that refuses stream_options: no stream, usage from the full answer

    def _drop(self, name: str) -> None:
        self.dropped.append(name)
        log.warning("model %s: the server refused the parameter %r; dropped for this run and retried", self.model,
                    name)

    def _refused_param(self, exc: Exception, sent: set[str]) -> str | None:
        text = _error_text(exc)
        if not _UNSUPPORTED.search(text):
            return None
        return next((p for p in _DROPPABLE if p in sent and p not in self.dropped and p in text), None)

    def _sent(self, tool_choice: Any) -> set[str]:
        p = self.parameters
        sent = {n for n in ("temperature", "top_p", "max_tokens") if getattr(p, n) is not None}
        if not getattr(p, "parallel_tool_calls", True):
            sent.add("parallel_tool_calls")
        if tool_choice is not None and "tool_choice" not in self.dropped:
            sent.add("tool_choice")
        if self.stream:
            sent.add("stream_options")
        return sent

    async def _call_api(self, model_name: str, messages: list[Msg], tools: list[dict[str, Any]] | None = None,
                        tool_choice: Any = None, **kwargs: Any) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        import openai

        start = datetime.now()
        for _ in range(len(_DROPPABLE) + 1):
            choice = None if "tool_choice" in self.dropped else tool_choice
            self._apply_drops()
            try:
                result = await super()._call_api(model_name, messages, tools, choice, **kwargs)
            except openai.BadRequestError as exc:
                name = self._refused_param(exc, self._sent(choice))
                if name is not None:
                    self._drop(name)
                    continue
                if _CONTEXT.search(_error_text(exc)):
                    raise RunLimitReached("context", f"the model server refused the prompt as too long for its "
                                          f"context window ({_first_line(_error_text(exc))}); the route's "
                                          f"context_size is {self.context_size} tokens") from exc
                raise
            counted = await self.count_tokens(messages, tools)
            if isinstance(result, ChatResponse):
                return self._finish(result, counted, start)
            return self._finish_stream(result, counted, start)
        raise RuntimeError("unreachable: every droppable parameter was dropped")  # pragma: no cover

    def _finish(self, response: ChatResponse, counted: int, start: datetime) -> ChatResponse:
        if response.usage is None:
            response.usage = ChatUsage(input_tokens=counted, output_tokens=estimate_output_tokens(response.content),
                                       time=(datetime.now() - start).total_seconds())
            response.metadata = {**(response.metadata or {}), USAGE_ESTIMATED: True}
        if self.dropped:
            response.metadata = {**(response.metadata or {}), DROPPED_PARAMS: list(self.dropped)}
        return response

    async def _finish_stream(self, stream: AsyncGenerator[ChatResponse, None], counted: int, start: datetime,
                             ) -> AsyncGenerator[ChatResponse, None]:
        chunks = stream.__aiter__()
        first = self.first_token_s
        while True:
            try:
                chunk = await (asyncio.wait_for(chunks.__anext__(), first) if first else chunks.__anext__())
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise FirstTokenTimeout(str(getattr(self.credential, "base_url", None) or "the model server"),
                                        float(first or 0)) from None
            first = None
            yield self._finish(chunk, counted, start) if chunk.is_last else chunk


class FirstTokenTimeout(Exception):
    """A streamed answer sent no token within ``timeouts.first_token_s`` (pings do not count)."""

    def __init__(self, endpoint: str, seconds: float) -> None:
        super().__init__(f"{endpoint} sent no token within {seconds:g} s")
        self.endpoint, self.seconds = endpoint, seconds


def _first_line(text: str, limit: int = 160) -> str:
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[:limit - 1] + "…"


def endpoint_failure(exc: BaseException) -> str | None:
    """A short, user-facing stop reason for a model endpoint's failure (``None``: not one): the HTTP status, the
    endpoint and the first line of its answer — e.g. ``model endpoint error: 500 from http://127.0.0.1:8000/v1
    (…)``. The whole answer is for the trajectory and the log, never the reason."""
    import openai

    if isinstance(exc, FirstTokenTimeout):
        return f"model endpoint timed out: {exc.endpoint} sent no token within {exc.seconds:g} s " \
               "(timeouts.first_token_s)"
    if isinstance(exc, openai.APITimeoutError):
        return f"model endpoint timed out: {_endpoint(exc)} sent no answer in time (timeouts.first_token_s / " \
               "timeouts.model_call_s)"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__  # AgentScope re-raises ``from None``: the context keeps it
        return f"model endpoint unreachable: {_endpoint(exc)}" + (f" ({type(cause).__name__})" if cause else "")
    if isinstance(exc, openai.APIStatusError):
        return f"model endpoint error: {exc.status_code} from {_endpoint(exc)} ({_first_line(_error_text(exc))})"
    if isinstance(exc, openai.APIError):  # e.g. an error event in the middle of a stream
        return f"model endpoint error: {_endpoint(exc)} ({_first_line(_error_text(exc))})"
    return None


def _endpoint(exc: Any) -> str:
    request = getattr(exc, "request", None)
    url = str(getattr(request, "url", "") or "")
    return url.rsplit("/chat/completions", 1)[0] if url else "the model server"
