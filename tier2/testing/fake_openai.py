"""A local OpenAI-compatible chat-completions server that streams scripted replies (and, given an ``images``
responder, answers ``POST /v1/images/generations`` with ``b64_json`` images).

Tool-call arguments are streamed in many small deltas (as real providers do), so a client that executed a tool
before its arguments were complete would fail visibly. Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Reply", "FakeOpenAIServer"]


@dataclass
class Reply:
    """One assistant turn: text and/or tool calls ``(name, arguments dict)``."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: reported ``(prompt_tokens, completion_tokens)``; default: characters / 4 of the request and the reply
    usage: tuple[int, int] | None = None
    #: an HTTP error instead (e.g. 500: a provider outage); sent with ``retry-after-ms: 1`` so client retries are quick
    status: int = 200


Responder = Callable[[dict[str, Any]], Reply]
#: an images request body -> the image bytes to answer with, or a `Reply` with an error status
ImageResponder = Callable[[dict[str, Any]], "bytes | Reply"]


class FakeOpenAIServer:
    """``with FakeOpenAIServer(responder) as srv: srv.base_url`` — responder maps a request body to a `Reply`."""

    def __init__(self, responder: Responder, delta_chars: int = 7, images: ImageResponder | None = None) -> None:
        self.responder = responder
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

    def _chunks(self, reply: Reply, model: str) -> list[dict[str, Any]]:
        base = {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        out = [chunk({"role": "assistant", "content": ""})]
        for i in range(0, len(reply.text), self.delta_chars):
            out.append(chunk({"content": reply.text[i:i + self.delta_chars]}))
        for idx, (name, args) in enumerate(reply.tool_calls):
            call_id = f"call_{len(self.requests)}_{idx}"
            out.append(chunk({"tool_calls": [{"index": idx, "id": call_id, "type": "function",
                                              "function": {"name": name, "arguments": ""}}]}))
            raw = json.dumps(args)
            for i in range(0, len(raw), self.delta_chars):
                part = raw[i:i + self.delta_chars]
                out.append(chunk({"tool_calls": [{"index": idx, "function": {"arguments": part}}]}))
        out.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
        prompt = sum(len(json.dumps(m)) for m in self.requests[-1].get("messages", [])) // 4
        completion = (len(reply.text) + sum(len(json.dumps(a)) for _, a in reply.tool_calls)) // 4
        prompt, completion = reply.usage or (prompt, completion)
        out.append({**base, "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                                     "total_tokens": prompt + completion}})
        return out

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
                outer.requests.append(body)
                reply = outer.responder(body)
                if reply.status != 200:
                    self._error(reply)
                    return
                chunks = outer._chunks(reply, body.get("model", "fake"))
                if not body.get("stream"):
                    self._plain(reply, body)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                try:
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
                if reply.tool_calls:
                    msg["tool_calls"] = [{"id": f"call_{i}", "type": "function",
                                          "function": {"name": n, "arguments": json.dumps(a)}}
                                         for i, (n, a) in enumerate(reply.tool_calls)]
                data = json.dumps({"id": "chatcmpl", "object": "chat.completion", "created": 0,
                                   "model": body.get("model"), "choices": [{"index": 0, "message": msg,
                                   "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
                                   "usage": {"prompt_tokens": (reply.usage or (1, 1))[0],
                                             "completion_tokens": (reply.usage or (1, 1))[1],
                                             "total_tokens": sum(reply.usage or (1, 1))}}).encode()
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
