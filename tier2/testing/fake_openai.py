"""A local OpenAI-compatible chat-completions server that streams scripted replies (and, given an ``images``
responder, answers ``POST /v1/images/generations`` with ``b64_json`` images).

Tool-call arguments are streamed in many small deltas (as real providers do), so a client that executed a tool
before its arguments were complete would fail visibly. Listens on 127.0.0.1 only.

Real servers misbehave in ways a vendor API does not; `Quirks` reproduces each one measured against llama.cpp's
server (llama-cpp-python 0.3.36, ``evals/real-model.md``): ``strict`` refuses content given as a list of parts
outside user messages with a 500 and a multi-line validation dump, as that server does; ``unsupported`` answers a
request that carries one of these parameters with a 400 naming it; ``context_window`` answers a request longer
than that many tokens (characters / 4) with llama.cpp's context-length 400; ``usage=False`` sends no ``usage``;
``first_token_delay_s`` waits before the first byte, ``ping_s`` sends only SSE pings that long. A `Reply` may
carry ``raw_tool_calls`` (arguments sent verbatim: broken JSON) and name tools that do not exist.

A `Latency` makes every chat request wait a seeded random time before it is answered (a real model's thinking
time, e.g. 1-3 s): the n-th request's delay depends only on the seed and n, and the delays slept are recorded in
``delays``.
"""

from __future__ import annotations

import base64
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAIServer", "Latency", "Quirks", "Reply"]


@dataclass
class Reply:
    """One assistant turn: text and/or tool calls ``(name, arguments dict)``."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: reported ``(prompt_tokens, completion_tokens)``; default: characters / 4 of the request and the reply
    usage: tuple[int, int] | None = None
    #: an HTTP error instead (e.g. 500: a provider outage); sent with ``retry-after-ms: 1`` so client retries are quick
    status: int = 200
    #: tool calls ``(name, arguments string)`` sent verbatim after ``tool_calls`` (e.g. broken JSON)
    raw_tool_calls: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Quirks:
    """How the server misbehaves (the defaults: a well-behaved vendor API)."""

    strict: bool = False
    unsupported: frozenset[str] = frozenset()
    context_window: int | None = None
    usage: bool = True
    first_token_delay_s: float = 0.0
    #: a stream's headers at once, then only SSE comment pings (every 0.1 s) for this long before the first chunk
    ping_s: float = 0.0


@dataclass(frozen=True)
class Latency:
    """A delay drawn uniformly from ``[low_s, high_s]`` per request, seeded: ``delay(n)`` is the same for the same
    ``seed`` and request number ``n`` (0-based, in order of arrival), whatever the other requests did."""

    low_s: float = 1.0
    high_s: float = 3.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.low_s <= self.high_s:
            raise ValueError(f"latency needs 0 <= low_s <= high_s, got {self.low_s}..{self.high_s}")

    def delay(self, n: int) -> float:
        return random.Random(f"{self.seed}/{n}").uniform(self.low_s, self.high_s)


def _strict_errors(body: dict[str, Any]) -> list[str]:
    """llama.cpp's request validation: message content must be a string except in user messages."""
    errors = []
    for i, m in enumerate(body.get("messages", [])):
        role = m.get("role", "")
        if role != "user" and isinstance(m.get("content"), list):
            kind = {"system": "System", "assistant": "Assistant", "tool": "Tool"}.get(role, "User")
            errors.append(f"  {{'type': 'string_type', 'loc': ('body', 'messages', {i}, "
                          f"'ChatCompletionRequest{kind}Message', 'content'), 'msg': 'Input should be a valid "
                          f"string', 'input': {m['content']!r}}}")
    return errors


def _refusal(body: dict[str, Any], quirks: Quirks) -> Reply | None:
    """The error a misbehaving server answers this request with, or None."""
    if quirks.strict and (errors := _strict_errors(body)):
        return Reply(status=500, text=f"{len(errors)} validation errors:\n" + "\n".join(errors))
    for name in sorted(quirks.unsupported):
        if name in body:
            return Reply(status=400, text=f"Unsupported parameter: '{name}' is not supported by this server.")
    if quirks.context_window is not None:
        tokens = len(json.dumps(body.get("messages", []))) // 4
        if tokens > quirks.context_window:
            return Reply(status=400, text=f"Requested tokens ({tokens}) exceed context window of "
                                          f"{quirks.context_window}")
    return None


Responder = Callable[[dict[str, Any]], Reply]
#: an images request body -> the image bytes to answer with, or a `Reply` with an error status
ImageResponder = Callable[[dict[str, Any]], "bytes | Reply"]


def _raw_calls(reply: Reply) -> list[tuple[str, str]]:
    return [(n, json.dumps(a)) for n, a in reply.tool_calls] + list(reply.raw_tool_calls)


class FakeOpenAIServer:
    """``with FakeOpenAIServer(responder) as srv: srv.base_url`` — responder maps a request body to a `Reply`."""

    def __init__(self, responder: Responder, delta_chars: int = 7, images: ImageResponder | None = None,
                 quirks: Quirks | None = None, latency: Latency | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.responder = responder
        self.latency = latency
        self.delays: list[float] = []  # the latency slept before each chat request, in order of arrival
        self._sleep = sleep
        self._lock = threading.Lock()
        self.quirks = quirks or Quirks()
        self.refused: list[Reply] = []  # the errors the quirks answered with, in order
        self.images = images
        self.image_requests: list[dict[str, Any]] = []
        self.delta_chars = delta_chars
        self.requests: list[dict[str, Any]] = []
        self.dropped = 0  # streams the client closed before the end
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _chunks(self, reply: Reply, body: dict[str, Any]) -> list[dict[str, Any]]:
        model = body.get("model", "fake")
        base = {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        out = [chunk({"role": "assistant", "content": ""})]
        for i in range(0, len(reply.text), self.delta_chars):
            out.append(chunk({"content": reply.text[i:i + self.delta_chars]}))
        for idx, (name, raw) in enumerate(_raw_calls(reply)):
            call_id = f"call_{len(self.requests)}_{idx}"
            out.append(chunk({"tool_calls": [{"index": idx, "id": call_id, "type": "function",
                                              "function": {"name": name, "arguments": ""}}]}))
            for i in range(0, len(raw), self.delta_chars):
                part = raw[i:i + self.delta_chars]
                out.append(chunk({"tool_calls": [{"index": idx, "function": {"arguments": part}}]}))
        out.append(chunk({}, "tool_calls" if _raw_calls(reply) else "stop"))
        if not self.quirks.usage:
            return out
        prompt, completion = self._usage(reply, body)
        out.append({**base, "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                                     "total_tokens": prompt + completion}})
        return out

    def _usage(self, reply: Reply, body: dict[str, Any]) -> tuple[int, int]:
        """Characters / 4 of this request (not the newest one: requests may be answered concurrently)."""
        prompt = sum(len(json.dumps(m)) for m in body.get("messages", [])) // 4
        completion = (len(reply.text) + sum(len(a) for _, a in _raw_calls(reply))) // 4
        return reply.usage or (prompt, completion)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                if self.path.endswith("/images/generations") and outer.images is not None:
                    self._image()
                    return
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with outer._lock:
                    outer.requests.append(body)
                    delay = outer.latency.delay(len(outer.delays)) if outer.latency is not None else None
                    if delay is not None:
                        outer.delays.append(delay)
                if delay is not None:
                    outer._sleep(delay)
                if outer.quirks.first_token_delay_s:
                    time.sleep(outer.quirks.first_token_delay_s)
                refusal = _refusal(body, outer.quirks)
                if refusal is not None:
                    outer.refused.append(refusal)
                reply = refusal or outer.responder(body)
                if reply.status != 200:
                    self._error(reply)
                    return
                chunks = outer._chunks(reply, body)
                if not body.get("stream"):
                    self._plain(reply, body)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                try:
                    until = time.monotonic() + outer.quirks.ping_s
                    while time.monotonic() < until:  # a server thinking: the stream kept alive, no token yet
                        self.wfile.write(b": ping\n\n")
                        self.wfile.flush()
                        time.sleep(0.1)
                    for c in chunks:
                        self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    outer.dropped += 1  # the client gave up mid-stream (a timeout under test): counted, not logged

            def _image(self) -> None:
                assert outer.images is not None
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                outer.image_requests.append(body)
                got = outer.images(body)
                if isinstance(got, Reply):
                    self._error(got)
                    return
                data = json.dumps({"created": 0, "data": [{"b64_json": base64.b64encode(got).decode()}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(self, reply: Reply) -> None:
                data = json.dumps({"error": {"message": reply.text or f"scripted HTTP {reply.status}",
                                             "type": "server_error", "code": None}}).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("retry-after-ms", "1")
                self.end_headers()
                self.wfile.write(data)

            def _plain(self, reply: Reply, body: dict[str, Any]) -> None:
                msg: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
                calls = _raw_calls(reply)
                if calls:
                    msg["tool_calls"] = [{"id": f"call_{i}", "type": "function",
                                          "function": {"name": n, "arguments": a}}
                                         for i, (n, a) in enumerate(calls)]
                answer: dict[str, Any] = {"id": "chatcmpl", "object": "chat.completion", "created": 0,
                                          "model": body.get("model"), "choices": [{"index": 0, "message": msg,
                                          "finish_reason": "tool_calls" if calls else "stop"}]}
                if outer.quirks.usage:
                    prompt, completion = reply.usage or (1, 1)
                    answer["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                       "total_tokens": prompt + completion}
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def __enter__(self) -> FakeOpenAIServer:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
