"""Error hierarchy, split by audience.

``AgentFacingError`` subclasses become tool results or hints the agent can act on;
``OperatorError`` subclasses surface to whoever runs tier2 (CLI exit codes, HTTP 4xx/5xx,
run failures). Every tier2 error derives from ``Tier2Error``.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

__all__ = [
    "Tier2Error",
    "AgentFacingError",
    "OperatorError",
    "BadInput",
    "PayloadTooLarge",
    "QuotaExceeded",
    "SetupError",
    "RedisUnavailable",
    "BrowserUnavailable",
    "ToolchainMissing",
    "PackError",
    "ModelRouteError",
    "NotFound",
    "Conflict",
    "Forbidden",
    "RunLimitReached",
    "StaleLease",
    "ErrorCode",
    "ApiError",
]


class Tier2Error(Exception):
    """Root of every tier2 error."""

    #: CLI exit code used when this error ends a command.
    exit_code: int = 1


class AgentFacingError(Tier2Error):
    """A problem the agent can fix (fed back as a tool result)."""


class OperatorError(Tier2Error):
    """A problem for the operator or the caller (bad input, broken setup)."""

    exit_code = 2


class BadInput(OperatorError):
    """The caller sent something invalid (empty or oversized brief, bad path...)."""


class PayloadTooLarge(BadInput):
    """The caller sent more than a limit allows (upload bytes, archive entries, unpacked size, ratio)."""


class QuotaExceeded(OperatorError):
    """A tenant's storage quota would be passed (``disk_bytes``: its projects on disk; ``snapshot_bytes``: its
    snapshot blobs in Redis): HTTP 507 ``quota_exceeded`` naming ``used`` and ``limit``. Refused before anything is
    written; nothing already stored is removed."""

    def __init__(self, quota: str, used: int, limit: int, message: str) -> None:
        super().__init__(message)
        self.quota, self.used, self.limit = quota, used, limit


class NotFound(OperatorError):
    """An unknown id or path."""


class Conflict(OperatorError):
    """The request clashes with the current state (a run already ended, one writer per project, an idempotency
    key reused with another request)."""


class Forbidden(OperatorError):
    """The caller is known but may not do this (a model route its tenant may not use)."""


class SetupError(OperatorError):
    """The machine lacks something tier2 needs."""


class RedisUnavailable(SetupError):
    """No Redis could be reached or started."""


class BrowserUnavailable(SetupError):
    """Chromium is missing or could not start."""


class ToolchainMissing(SetupError):
    """esbuild / node packages of a capability pack are missing."""


class PackError(SetupError):
    """A capability pack manifest is invalid or incomplete."""


class ModelRouteError(OperatorError):
    """A model route is unknown or misconfigured."""


class RunLimitReached(Tier2Error):
    """A governance limit (budget cap, deadline, step cap, stuck pattern, timeout) stopped the run.

    The message names the exact limit, e.g. ``budget: 0.41 USD cap, 17 calls, 0.398 spent``; the run ends
    ``stopped`` with it as the reason and delivers the best verified result so far."""

    def __init__(self, limit: str, detail: str) -> None:
        super().__init__(f"{limit}: {detail}")
        self.limit, self.detail = limit, detail


class StaleLease(Tier2Error):
    """This worker's lease on a run was taken over (its fencing token is no longer current): stop writing."""


class ErrorCode(StrEnum):
    """Stable ``error.code`` values of every HTTP error response (``{"error": {"code", "message"}}``)."""

    INVALID_REQUEST = "invalid_request"  # 400/422: malformed JSON, bad field, bad brief, bad archive
    UNAUTHORIZED = "unauthorized"  # 401: missing or unknown API key / stream token
    FORBIDDEN = "forbidden"  # 403
    NOT_FOUND = "not_found"  # 404: unknown route, or an id that is not the caller's
    METHOD_NOT_ALLOWED = "method_not_allowed"  # 405
    CONFLICT = "conflict"  # 409: idempotency key reuse, one writer per project, run already ended
    PAYLOAD_TOO_LARGE = "payload_too_large"  # 413: upload or unpacked archive over a limit
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"  # 415
    RATE_LIMITED = "rate_limited"  # 429: tenant quota (send Retry-After)
    QUOTA_EXCEEDED = "quota_exceeded"  # 507: a tenant storage quota (disk, snapshot store) is full
    INTERNAL_ERROR = "internal_error"  # 500: a bug; the details are in the server log only
    SERVICE_UNAVAILABLE = "service_unavailable"  # 503: Redis, browser or toolchain unavailable
    NOT_REPLICATED = "not_replicated"  # 503: a run written, but not acknowledged by `[redis] min_replicas` in time


class ApiError(OperatorError):
    """An error with its HTTP answer: ``raise ApiError(ErrorCode.RATE_LIMITED, 429, "quota...",
    headers={"Retry-After": "30"})``. ``message`` is shown to the client: no paths, no exception text."""

    def __init__(self, code: ErrorCode, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.code, self.status, self.message = ErrorCode(code), status, message
        self.headers = dict(headers or {})
