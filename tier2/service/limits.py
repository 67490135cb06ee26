"""HTTP form of a tenant limit (`tier2.runs.tenancy.TenantLimitExceeded`): its status and ``Retry-After``."""

from __future__ import annotations

from fastapi import HTTPException

from tier2.runs.tenancy import TenantLimitExceeded

__all__ = ["tenant_http_error"]


def tenant_http_error(exc: TenantLimitExceeded) -> HTTPException:
    """429 (or 413) with the limit named in the detail and ``Retry-After`` when waiting helps."""
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
    return HTTPException(exc.status, str(exc), headers=headers)
