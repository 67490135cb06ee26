"""A client of a running tier2 service (the REST API of `tier2.service`), for the command line.

Every call goes through `ServiceClient._call`: an answer outside 2xx becomes a `ServiceError` carrying the API's
``{"error": {"code", "message"}}`` (and the fields of a 422, the ``Retry-After`` of a 429); a service that cannot be
reached becomes a `ServiceUnreachable` naming the URL. Both are operator errors (exit 2). The key is sent as
``Authorization: Bearer`` (``TIER2_API_KEY``); the base URL is ``--url``, else ``TIER2_URL``, else the loopback
address ``tier2 serve`` listens on by default.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any, Final
from urllib.parse import quote

import httpx

from tier2.client.sse import Frame, follow_events
from tier2.errors import OperatorError

__all__ = ["DEFAULT_URL", "ServiceClient", "ServiceError", "ServiceUnreachable", "service_url"]

#: where ``tier2 serve`` listens by default (``--host 127.0.0.1 --port 8765``)
DEFAULT_URL: Final = "http://127.0.0.1:8765"


def service_url(flag: str | None) -> str:
    return (flag or os.environ.get("TIER2_URL") or DEFAULT_URL).rstrip("/")


class ServiceError(OperatorError):
    """The service answered with an error (``status``, the API's ``code`` and ``message``)."""

    def __init__(self, status: int, code: str, message: str, fields: list[dict[str, Any]] | None = None,
                 retry_after: str | None = None) -> None:
        detail = "; ".join(f"{f.get('loc')}: {f.get('message')}" for f in fields or [])
        text = f"{code} ({status}): {message}" + (f" [{detail}]" if detail else "")
        super().__init__(text + (f" (retry after {retry_after} s)" if retry_after else ""))
        self.status, self.code, self.message, self.fields, self.retry_after = status, code, message, fields, retry_after

    @classmethod
    def from_response(cls, resp: httpx.Response) -> ServiceError:
        try:
            body = resp.json()
        except ValueError:
            body = None
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            fields = err.get("fields") if isinstance(err.get("fields"), list) else None
            return cls(resp.status_code, str(err.get("code") or "error"), err["message"], fields,
                       resp.headers.get("Retry-After"))
        text = resp.text.strip().splitlines()[0][:200] if resp.text.strip() else resp.reason_phrase
        return cls(resp.status_code, "http_error", f"not a tier2 error answer: {text}")


class ServiceUnreachable(OperatorError):
    """No tier2 service answered at the URL."""

    def __init__(self, url: str, reason: object) -> None:
        super().__init__(f"cannot reach the tier2 service at {url} ({type(reason).__name__}: {reason}); is "
                         "`tier2 serve` running there? (set --url or TIER2_URL)")
        self.url = url


class ServiceClient:
    """Synchronous calls to one service; use as a context manager (closes its connections)."""

    def __init__(self, url: str | None = None, api_key: str | None = None, timeout_s: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.url = service_url(url)
        key = api_key if api_key is not None else os.environ.get("TIER2_API_KEY")
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.http = httpx.Client(base_url=self.url, headers=self.headers, timeout=timeout_s, transport=transport)

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            resp = self.http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise ServiceUnreachable(self.url, exc) from exc
        if not 200 <= resp.status_code < 300:
            raise ServiceError.from_response(resp)
        try:
            return resp.json()
        except ValueError as exc:
            raise ServiceError(resp.status_code, "http_error", "the answer is not JSON") from exc

    # -- runs --------------------------------------------------------------------------------------------------

    def list_runs(self, statuses: list[str] | None = None, q: str | None = None, limit: int = 20,
                  cursor: str | None = None) -> dict[str, Any]:
        params: list[tuple[str, str | int]] = [("status", s) for s in statuses or []]
        params += [("limit", limit)] + ([("q", q)] if q else []) + ([("cursor", cursor)] if cursor else [])
        return dict(self._call("GET", "/v1/runs", params=params))

    def get_run(self, run_id: str) -> dict[str, Any]:
        return dict(self._call("GET", f"/v1/runs/{_segment(run_id)}"))

    def cancel(self, run_id: str) -> dict[str, Any]:
        return dict(self._call("POST", f"/v1/runs/{_segment(run_id)}/cancel"))

    def delivery(self, run_id: str) -> dict[str, Any]:
        return dict(self._call("GET", f"/v1/runs/{_segment(run_id)}/delivery"))

    def design(self, run_id: str) -> dict[str, Any]:
        return dict(self._call("GET", f"/v1/runs/{_segment(run_id)}/design"))

    def report(self, run_id: str) -> dict[str, Any]:
        return dict(self._call("GET", f"/v1/runs/{_segment(run_id)}/report"))

    def trajectory(self, run_id: str, kind: str | None = None, offset: int = 0, limit: int = 500) -> dict[str, Any]:
        params: list[tuple[str, str | int]] = [("offset", offset), ("limit", limit)]
        params += [("kind", kind)] if kind else []
        return dict(self._call("GET", f"/v1/runs/{_segment(run_id)}/trajectory", params=params))

    def thread_plans(self, thread_id: str) -> dict[str, Any]:
        """The goal versions of the thread's project (``GET /v1/threads/{id}/plans``)."""
        return dict(self._call("GET", f"/v1/threads/{_segment(thread_id)}/plans"))

    def thread_plan(self, thread_id: str, version: int | None = None) -> dict[str, Any]:
        """One goal version with its plan diff (None: the newest)."""
        params = {"version": version} if version is not None else None
        return dict(self._call("GET", f"/v1/threads/{_segment(thread_id)}/plan", params=params))

    def submit(self, body: dict[str, Any], idempotency_key: str | None = None) -> dict[str, Any]:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return dict(self._call("POST", "/v1/runs", json=body, headers=headers))

    def events(self, run_id: str, after: int = 0, give_up_s: float = 60.0,
               on_reconnect: Callable[[int], None] | None = None) -> Iterator[tuple[int, Frame]]:
        """The run's events after id ``after`` until ``run_finished``, resumed across dropped connections."""
        return follow_events(self.http, f"/v1/runs/{_segment(run_id)}/events", after=after, give_up_s=give_up_s,
                             on_error=ServiceError.from_response,
                             on_unreachable=lambda exc: ServiceUnreachable(self.url, exc),
                             on_reconnect=on_reconnect)

    def artifact(self, path: str, max_bytes: int = 20_000_000) -> bytes:
        """The bytes of an artifact the API linked (``/v1/runs/.../artifacts/...``), at most ``max_bytes``."""
        if not path.startswith("/v1/"):
            raise ServiceError(400, "bad_path", f"not an API path: {path[:80]}")
        try:
            resp = self.http.get(path)
        except httpx.TransportError as exc:
            raise ServiceUnreachable(self.url, exc) from exc
        if not 200 <= resp.status_code < 300:
            raise ServiceError.from_response(resp)
        if len(resp.content) > max_bytes:
            raise ServiceError(413, "too_large", f"artifact over {max_bytes} bytes")
        return resp.content

    def absolute(self, path: str | None) -> str | None:
        """An API path (``/v1/runs/.../artifacts/dist/index.html``) as a URL of this service."""
        return f"{self.url}{path}" if path and path.startswith("/") else path


def _segment(value: str) -> str:
    """A path segment as typed by a person, percent-encoded: ``/``, ``?``, ``#`` or ``..`` never change the route."""
    return quote(value, safe="") if value not in (".", "..") else quote(value.replace(".", "%2E"), safe="%")
