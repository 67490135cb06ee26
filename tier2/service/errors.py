"""One error format for every HTTP response: ``{"error": {"code": "<ErrorCode>", "message": "..."}}``.

`install_error_handlers` registers the handlers on the app (wired in `tier2.app`):

* `ApiError` (tier2's own, with code, status and headers), `HTTPException` (Starlette's: 404 for an unknown
  route, 405, and the ``HTTPException`` raised by routes) mapped by status;
* `RequestValidationError` → 422 ``invalid_request`` naming the fields (never echoing their values);
* tier2's error classes by type (`BadInput` 422, `PayloadTooLarge` 413, `NotFound` 404, `SetupError` 503);
* anything else → 500 ``internal_error``: the client gets a fixed message, the log gets the traceback.

``detail`` repeats the message for clients written against FastAPI's default ``{"detail": ...}`` body.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from tier2.errors import (
    ApiError,
    BadInput,
    ErrorCode,
    ModelRouteError,
    NotFound,
    PayloadTooLarge,
    SetupError,
    Tier2Error,
)

__all__ = ["install_error_handlers", "error_response", "code_for_status"]

log = logging.getLogger(__name__)

_BY_STATUS: dict[int, ErrorCode] = {
    400: ErrorCode.INVALID_REQUEST, 401: ErrorCode.UNAUTHORIZED, 403: ErrorCode.FORBIDDEN,
    404: ErrorCode.NOT_FOUND, 405: ErrorCode.METHOD_NOT_ALLOWED, 409: ErrorCode.CONFLICT,
    413: ErrorCode.PAYLOAD_TOO_LARGE, 415: ErrorCode.UNSUPPORTED_MEDIA_TYPE, 422: ErrorCode.INVALID_REQUEST,
    429: ErrorCode.RATE_LIMITED, 503: ErrorCode.SERVICE_UNAVAILABLE,
}
#: tier2 error class → (status, code); the most specific class wins (checked in this order)
_BY_TYPE: tuple[tuple[type[Tier2Error], int, ErrorCode], ...] = (
    (PayloadTooLarge, 413, ErrorCode.PAYLOAD_TOO_LARGE),
    (BadInput, 422, ErrorCode.INVALID_REQUEST),
    (ModelRouteError, 422, ErrorCode.INVALID_REQUEST),
    (NotFound, 404, ErrorCode.NOT_FOUND),
    (SetupError, 503, ErrorCode.SERVICE_UNAVAILABLE),
)
_MAX_MESSAGE = 500
_MAX_FIELDS = 10


def code_for_status(status: int) -> ErrorCode:
    return _BY_STATUS.get(status, ErrorCode.INTERNAL_ERROR if status >= 500 else ErrorCode.INVALID_REQUEST)


def error_response(status: int, code: ErrorCode, message: str, headers: dict[str, str] | None = None,
                   **extra: Any) -> JSONResponse:
    text = message if len(message) <= _MAX_MESSAGE else message[:_MAX_MESSAGE] + "…"
    body = {"error": {"code": str(code), "message": text, **extra}, "detail": text}
    return JSONResponse(body, status_code=status, headers=headers)


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.code, exc.message, exc.headers)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    message = exc.detail if isinstance(exc.detail, str) else "request refused"
    return error_response(exc.status_code, code_for_status(exc.status_code), message, dict(exc.headers or {}))


def _where(loc: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(p)[:40] for p in loc)[:120]


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    fields = [{"loc": _where(e.get("loc", ())), "type": str(e.get("type", ""))[:60],
               "message": str(e.get("msg", ""))[:200]} for e in list(exc.errors())[:_MAX_FIELDS]]
    summary = "; ".join(f"{f['loc']}: {f['message']}" for f in fields) or "invalid request"
    return error_response(422, ErrorCode.INVALID_REQUEST, f"invalid request: {summary}", fields=fields)


async def _tier2_error(request: Request, exc: Exception) -> JSONResponse:
    for cls, status, code in _BY_TYPE:
        if isinstance(exc, cls):
            if status >= 500:
                log.warning("%s %s: %s", request.method, request.url.path, exc)
                return error_response(status, code, "a service dependency is unavailable; try again later")
            return error_response(status, code, str(exc))
    return await _unexpected(request, exc)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(500, ErrorCode.INTERNAL_ERROR, "internal error; it has been logged")


def install_error_handlers(app: FastAPI) -> None:
    """Register every handler (the more specific class first: Starlette picks by the exception's MRO)."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Tier2Error, _tier2_error)
    app.add_exception_handler(Exception, _unexpected)
