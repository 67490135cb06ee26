"""Every FastAPI dependency of the routers, as named ``Annotated`` aliases; the only code that reads
``request.app.state``.

* `RuntimeDep` — the process's `Runtime` (config, pack, browser pool, run store), opened by the lifespan;
* `ApiKeysDep` — the configured API keys (``TIER2_API_KEYS``);
* `TenantDep` — the caller's tenant from ``Authorization: Bearer <key>`` (401 without a valid key; ``local`` when
  no keys are configured);
* `StreamTenantDep` — for the events route: a valid ``?token=`` for that run (`auth.sign_stream_token`), else
  the bearer key;
* `IdempotencyKeyDep` — the optional ``Idempotency-Key`` header, checked as one line of text.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Query, Request

from tier2.errors import ApiError, ErrorCode
from tier2.runs import Runtime
from tier2.service.auth import LOCAL_TENANT, verify_stream_token
from tier2.service.text import check_text
from tier2.settings.api_keys import ApiKeys

__all__ = ["ApiKeysDep", "IdempotencyKeyDep", "RuntimeDep", "StreamTenantDep", "TenantDep", "api_keys", "runtime",
           "stream_tenant", "tenant"]


def runtime(request: Request) -> Runtime:
    """The runtime the lifespan opened (`tier2.app.build_app`)."""
    rt = request.app.state.tier2
    assert isinstance(rt, Runtime)
    return rt


def api_keys(request: Request) -> ApiKeys:
    keys = request.app.state.tier2_api_keys
    assert isinstance(keys, ApiKeys)
    return keys


RuntimeDep = Annotated[Runtime, Depends(runtime)]
ApiKeysDep = Annotated[ApiKeys, Depends(api_keys)]


def _unauthorized(message: str) -> ApiError:
    return ApiError(ErrorCode.UNAUTHORIZED, 401, message, headers={"WWW-Authenticate": "Bearer"})


async def tenant(request: Request, keys: ApiKeysDep) -> str:
    """The caller's tenant: the one whose key is in ``Authorization: Bearer <key>`` (401 otherwise)."""
    if not keys.enabled:
        return LOCAL_TENANT
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    found = keys.tenant_for(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
    if found is None:
        raise _unauthorized("missing or invalid API key (Authorization: Bearer …)")
    return found


TenantDep = Annotated[str, Depends(tenant)]


async def stream_tenant(
    request: Request, run_id: str, keys: ApiKeysDep,
    token: Annotated[str | None, Query(max_length=1000,
                                       description="stream token (POST /v1/runs/{id}/stream-token)")] = None,
) -> str:
    """For the events route: a valid ``?token=`` for this run, else the usual bearer key."""
    if token is not None and keys.enabled:
        found = verify_stream_token(keys, token, run_id)
        if found is None:
            raise _unauthorized("invalid or expired stream token")
        return found
    return await tenant(request, keys)


StreamTenantDep = Annotated[str, Depends(stream_tenant)]


def idempotency_key(
    key: Annotated[str | None, Header(alias="Idempotency-Key", min_length=1, max_length=200,
                                      description="retry key: the same key and body return the same run")] = None,
) -> str | None:
    return check_text(key, "Idempotency-Key") if key is not None else None


IdempotencyKeyDep = Annotated[str | None, Depends(idempotency_key)]
