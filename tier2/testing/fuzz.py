"""Schema-driven fuzzing of the HTTP API with schemathesis: every operation in ``/openapi.json``, positive and
negative cases, counting answers by status and collecting any 5xx (the service must never answer one).

`serve_in_thread` runs the real service (an app from ``build_app``) on uvicorn in a background thread (the
fuzzer's requests are synchronous); `fuzz` drives it. Used by ``tests/e2e/test_http_fuzz.py`` (small budget)
and ``bench/fuzz.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FuzzReport", "serve_in_thread", "fuzz"]

#: the events route streams until the run ends: fuzz it with one frame at most
_QUERY = {"/v1/runs/{run_id}/events": {"limit": 1}}


@dataclass
class FuzzReport:
    calls: int = 0
    by_status: Counter[int] = field(default_factory=Counter)
    by_operation: Counter[str] = field(default_factory=Counter)
    server_errors: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        statuses = ", ".join(f"{s}: {n}" for s, n in sorted(self.by_status.items()))
        return (f"{self.calls} calls over {len(self.by_operation)} operations in {self.seconds:.1f} s; "
                f"status counts {{{statuses}}}; 5xx: {len(self.server_errors)}")


@contextlib.contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """An ASGI app (``tier2.app.build_app(..., workers=0)``) on a free loopback port, served by uvicorn in a thread
    with its own event loop; yields its base URL."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", lifespan="on"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), name="tier2-fuzz-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not server.started:
        raise RuntimeError("the service did not start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _bound(record: Any, name: str, mode: Any) -> Any:
    """A plain one-argument function (what hypothesis's ``@given`` wants) calling ``record(case, name, mode)``."""

    def one(case: Any) -> None:
        record(case, name, mode)

    return one


def fuzz(base_url: str, headers: dict[str, str], max_examples: int = 10, negative: bool = True,
         timeout_s: float = 10.0) -> FuzzReport:
    """Fuzz every operation of ``base_url``'s OpenAPI schema (fetched with ``headers``)."""
    import requests
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode
    from schemathesis.core.result import Err

    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json", headers=headers, timeout=timeout_s)
    report = FuzzReport()
    started = time.monotonic()
    modes = [GenerationMode.POSITIVE] + ([GenerationMode.NEGATIVE] if negative else [])
    with requests.Session() as session:

        def record(case: Any, name: str, mode: GenerationMode) -> None:
            response = case.call(base_url=base_url, session=session, headers=headers, timeout=timeout_s)
            report.calls += 1
            report.by_status[response.status_code] += 1
            report.by_operation[name] += 1
            if response.status_code >= 500:
                report.server_errors.append({"operation": name, "status": response.status_code,
                                             "mode": mode.value, "body": response.text[:300],
                                             "curl": case.as_curl_command(headers=headers)[:600]})

        for result in schema.get_all_operations():
            if isinstance(result, Err):
                raise result.err()  # an operation schemathesis cannot load: the schema itself is broken
            op = result.ok()
            name = f"{op.method.upper()} {op.path}"
            for mode in modes:
                strategy = op.as_strategy(generation_mode=mode, query=_QUERY.get(op.path))
                one = settings(max_examples=max_examples, deadline=None, database=None, derandomize=True,
                               suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])(
                    given(case=strategy)(_bound(record, name, mode)))
                try:
                    one()
                except Unsatisfiable:  # nothing to vary (no parameters): a negative case cannot exist
                    continue
    report.seconds = time.monotonic() - started
    return report
