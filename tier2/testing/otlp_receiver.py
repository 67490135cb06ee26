"""A minimal OTLP/HTTP trace receiver: ``python -m tier2.testing.otlp_receiver --out spans.jsonl [--port N]``.

Accepts ``POST /v1/traces`` (protobuf, the Python exporter's default, or JSON; gzip/deflate allowed), decodes the
``ExportTraceServiceRequest`` and appends one JSON line per span to ``--out`` (name, ids, parent, attributes,
events, status, service). Prints ``READY <port>`` on stdout once listening on 127.0.0.1.

It is meant to run in **its own process** (tests start it with `subprocess`): a receiver inside a traced process
would trace its own requests and export them to itself in a loop (see docs: environment.md §6).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

__all__ = ["decode_spans", "main"]


def _value(v: Any) -> Any:
    which = v.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    if which == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, which)


def _attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


def decode_spans(request: ExportTraceServiceRequest) -> list[dict[str, Any]]:
    """One plain dict per span of the request."""
    out: list[dict[str, Any]] = []
    for rs in request.resource_spans:
        resource = _attrs(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                out.append({
                    "name": s.name, "trace_id": s.trace_id.hex(), "span_id": s.span_id.hex(),
                    "parent_span_id": s.parent_span_id.hex(), "kind": int(s.kind),
                    "start_ns": s.start_time_unix_nano, "end_ns": s.end_time_unix_nano,
                    "status": {"code": int(s.status.code), "message": s.status.message},
                    "attributes": _attrs(s.attributes),
                    "events": [{"name": e.name, "attributes": _attrs(e.attributes)} for e in s.events],
                    "links": [{"trace_id": link.trace_id.hex(), "span_id": link.span_id.hex()} for link in s.links],
                    "scope": ss.scope.name, "service": resource.get("service.name"), "resource": resource,
                })
    return out


def _handler(out: Path, lock: threading.Lock) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server naming
            if self.path.rstrip("/") != "/v1/traces":
                self.send_error(404)
                return
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            encoding = (self.headers.get("Content-Encoding") or "").lower()
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            request = ExportTraceServiceRequest()
            try:
                if "json" in (self.headers.get("Content-Type") or ""):
                    json_format.Parse(body.decode(), request)
                else:
                    request.ParseFromString(body)
            except Exception as exc:  # noqa: BLE001 - a malformed export is the client's problem: say so
                self.send_error(400, f"cannot decode ExportTraceServiceRequest: {exc}")
                return
            lines = "".join(json.dumps(span) + "\n" for span in decode_spans(request))
            with lock, out.open("a") as f:
                f.write(lines)
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    return Handler


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="JSON-lines file the received spans are appended to")
    ap.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any free port)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.touch()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), _handler(out, threading.Lock()))
    print(f"READY {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
