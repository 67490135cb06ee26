"""One error format for every HTTP response: ``{"error": {"code": "<ErrorCode>", "message": "..."}}``.

`install_error_handlers` registers the handlers on the app (wired in `tier2.app`):

* `ApiError` (tier2's own, with code, status and headers), `HTTPException` (Starlette's: 404 for an unknown
  route, 405, and the ``HTTPException`` raised by routes) mapped by status;
* `RequestValidationError` → 422 ``invalid_request`` naming the fields (never echoing their values);
* tier2's error classes by type (`BadInput` 422, `PayloadTooLarge` 413, `NotFound` 404, `Forbidden` 403,
  `Conflict` 409, `TenantLimitExceeded` 429/413 with ``Retry-After``, `QuotaExceeded` 507 ``quota_exceeded``
  with ``error.quota`` {name, used, limit}, `SetupError` 503);
* anything else → 500 ``internal_error``: the client gets a fixed message, the log gets the traceback.

Every body is an `ErrorBody` (`tier2.service.schemas`), built here and nowhere else; `error_responses` documents
it in the OpenAPI for the statuses a route can answer. Messages are tier2's own text, never an exception's
(a 5xx says only what failed), and pass through `views.scrub` (no absolute path, no pid) on the way out.
``detail`` repeats the message for clients written against FastAPI's default ``{"detail": ...}`` body.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import Match

from tier2.errors import (
    ApiError,
    BadInput,
    Conflict,
    ErrorCode,
    Forbidden,
    ModelRouteError,
    NotFound,
    PayloadTooLarge,
    QuotaExceeded,
    SetupError,
    Tier2Error,
)
from tier2.runs.tenancy import TenantLimitExceeded
from tier2.service.schemas import ErrorBody, ErrorField, ErrorInfo, ErrorQuota
from tier2.service.views import scrub
from tier2.settings.secrets import redact_credentials

__all__ = ["install_error_handlers", "error_response", "error_responses", "code_for_status"]

log = logging.getLogger(__name__)

_BY_STATUS: dict[int, ErrorCode] = {
    400: ErrorCode.INVALID_REQUEST, 401: ErrorCode.UNAUTHORIZED, 403: ErrorCode.FORBIDDEN,
    404: ErrorCode.NOT_FOUND, 405: ErrorCode.METHOD_NOT_ALLOWED, 409: ErrorCode.CONFLICT,
    413: ErrorCode.PAYLOAD_TOO_LARGE, 415: ErrorCode.UNSUPPORTED_MEDIA_TYPE, 422: ErrorCode.INVALID_REQUEST,
    429: ErrorCode.RATE_LIMITED, 503: ErrorCode.SERVICE_UNAVAILABLE, 507: ErrorCode.QUOTA_EXCEEDED,
}
#: tier2 error class → (status, code); the most specific class wins (checked in this order)
_BY_TYPE: tuple[tuple[type[Tier2Error], int, ErrorCode], ...] = (
    (PayloadTooLarge, 413, ErrorCode.PAYLOAD_TOO_LARGE),
    (BadInput, 422, ErrorCode.INVALID_REQUEST),
    (ModelRouteError, 422, ErrorCode.INVALID_REQUEST),
    (NotFound, 404, ErrorCode.NOT_FOUND),
    (Forbidden, 403, ErrorCode.FORBIDDEN),
    (Conflict, 409, ErrorCode.CONFLICT),
    (SetupError, 503, ErrorCode.SERVICE_UNAVAILABLE),
)
_MAX_MESSAGE = 500
_MAX_FIELDS = 10


_DESCRIPTIONS: dict[int, str] = {
    400: "Malformed request, or a Host header this service does not answer for (local mode: DNS rebinding)",
    401: "Missing or invalid API key (or stream token)", 403: "Not allowed for this tenant",
    404: "Unknown id, or one that is not the caller's", 405: "Method not allowed on this path (`Allow` lists the "
    "methods it has)", 409: "Conflicts with the "
    "current state", 413: "Over a size limit", 415: "Unsupported Content-Type", 422: "Invalid request (the fields "
    "are listed, never their values)", 429: "A tenant limit: retry after Retry-After seconds", 500: "Internal error "
    "(logged)", 503: "A service dependency is unavailable", 507: "A tenant storage quota is full (error.quota "
    "names it, with used and limit bytes); nothing already stored was removed",
}
_RETRY_AFTER = {"Retry-After": {"description": "seconds to wait before retrying", "schema": {"type": "integer"}}}
_ALLOW = {"Allow": {"description": "the methods this path answers, comma-separated", "schema": {"type": "string"}}}
_HEADERS: dict[int, dict[str, Any]] = {429: _RETRY_AFTER, 405: _ALLOW}
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def code_for_status(status: int) -> ErrorCode:
    return _BY_STATUS.get(status, ErrorCode.INTERNAL_ERROR if status >= 500 else ErrorCode.INVALID_REQUEST)


def error_responses(*statuses: int, as_ref: bool = False) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` entries of a route's error statuses (each an `ErrorBody`); 400, 401, 405, 500 and
    503 are always included (every request's Host is checked, every route checks the key, every path refuses the
    methods it lacks, needs Redis and may fail). ``as_ref``: name the schema by reference, as JSON, for a route
    whose own media type is not JSON (the event stream)."""
    out: dict[int | str, dict[str, Any]] = {}
    for status in sorted({400, 401, 405, 500, 503, *statuses}):
        entry: dict[str, Any] = {"description": _DESCRIPTIONS.get(status, "Error")}
        if as_ref:
            entry["content"] = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
        else:
            entry["model"] = ErrorBody
        if status in _HEADERS:
            entry["headers"] = _HEADERS[status]
        out[status] = entry
    return out


def error_response(status: int, code: ErrorCode, message: str, headers: Mapping[str, str] | None = None,
                   fields: list[ErrorField] | None = None, quota: ErrorQuota | None = None) -> JSONResponse:
    """The one place an error body is built."""
    text = scrub(message)
    text = text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "…"
    body = ErrorBody(error=ErrorInfo(code=code, message=text, fields=fields, quota=quota), detail=text)
    return JSONResponse(body.model_dump(mode="json", exclude_none=True), status_code=status,
                        headers=dict(headers) if headers else None)


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.code, exc.message, exc.headers)


def _allowed_methods(request: Request) -> str | None:
    """Every method some route answers on this path (Starlette's 405 names only the first route's: ``POST`` for
    ``DELETE /v1/runs``, which also has ``GET``)."""
    routes = request.app.router.routes
    methods = [m for m in _METHODS if any(r.matches({**request.scope, "method": m})[0] == Match.FULL for r in routes)]
    return ", ".join(methods) if methods else None


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    message = exc.detail if isinstance(exc.detail, str) else "request refused"
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = _allowed_methods(request) or headers.get("Allow", "")
    return error_response(exc.status_code, code_for_status(exc.status_code), message, headers)


def _where(loc: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(p)[:40] for p in loc)[:120]


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    fields = [ErrorField(loc=_where(e.get("loc", ())), type=str(e.get("type", ""))[:60],
                         message=str(e.get("msg", ""))[:200]) for e in list(exc.errors())[:_MAX_FIELDS]]
    summary = "; ".join(f"{f.loc}: {f.message}" for f in fields) or "invalid request"
    return error_response(422, ErrorCode.INVALID_REQUEST, f"invalid request: {summary}", fields=fields)


async def _tenant_limit(request: Request, exc: Exception) -> JSONResponse:
    """429 ``rate_limited`` (or 413 ``payload_too_large``) naming the limit, with ``Retry-After`` when waiting
    helps."""
    assert isinstance(exc, TenantLimitExceeded)
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
    code = ErrorCode.PAYLOAD_TOO_LARGE if exc.status == 413 else ErrorCode.RATE_LIMITED
    return error_response(exc.status, code, str(exc), headers)


async def _quota_exceeded(request: Request, exc: Exception) -> JSONResponse:
    """507 ``quota_exceeded``: the message and ``error.quota`` name the quota, the bytes used and the limit."""
    assert isinstance(exc, QuotaExceeded)
    return error_response(507, ErrorCode.QUOTA_EXCEEDED, str(exc),
                          quota=ErrorQuota(name=exc.quota, used=exc.used, limit=exc.limit))


async def _tier2_error(request: Request, exc: Exception) -> JSONResponse:
    for cls, status, code in _BY_TYPE:
        if isinstance(exc, cls):
            if status >= 500:
                log.warning("%s %s: %s", request.method, redact_credentials(request.url.path), exc)
                return error_response(status, code, "a service dependency is unavailable; try again later")
            return error_response(status, code, str(exc))
    return await _unexpected(request, exc)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("%s %s failed", request.method, redact_credentials(request.url.path), exc_info=exc)
    return error_response(500, ErrorCode.INTERNAL_ERROR, "internal error; it has been logged")


def install_error_handlers(app: FastAPI) -> None:
    """Register every handler (the more specific class first: Starlette picks by the exception's MRO)."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(TenantLimitExceeded, _tenant_limit)
    app.add_exception_handler(QuotaExceeded, _quota_exceeded)
    app.add_exception_handler(Tier2Error, _tier2_error)
    app.add_exception_handler(Exception, _unexpected)
