"""HTTP form of a tenant limit (`tier2.runs.tenancy.TenantLimitExceeded`): its status and ``Retry-After``."""

from __future__ import annotations

from tier2.errors import ApiError, ErrorCode
from tier2.runs.tenancy import TenantLimitExceeded

__all__ = ["tenant_http_error"]


def tenant_http_error(exc: TenantLimitExceeded) -> ApiError:
    """429 ``rate_limited`` (or 413 ``payload_too_large``) naming the limit, with ``Retry-After`` when waiting
    helps."""
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
    code = ErrorCode.PAYLOAD_TOO_LARGE if exc.status == 413 else ErrorCode.RATE_LIMITED
    return ApiError(code, exc.status, str(exc), headers=headers)
