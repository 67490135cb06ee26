"""Bearer API keys mapped to tenants (``TIER2_API_KEYS=tenant:key,tenant2:key2``).

Every route — tier2's and AgentScope's (its ``X-User-ID`` dependency is overridden) — resolves the caller's
tenant from ``Authorization: Bearer <key>``; a missing or unknown key is a 401. With no keys configured the
service runs in single-user local mode (tenant ``local``) and refuses to bind anything but loopback.
"""

from __future__ import annotations

from fastapi import HTTPException, Request, status

from tier2.settings.api_keys import ApiKeys

__all__ = ["LOCAL_TENANT", "tenant_of"]

LOCAL_TENANT = "local"


async def tenant_of(request: Request) -> str:
    """FastAPI dependency: the caller's tenant (also used as AgentScope's user id)."""
    keys: ApiKeys = request.app.state.tier2_api_keys
    if not keys.enabled:
        return LOCAL_TENANT
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    tenant = keys.tenant_for(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
    if tenant is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "missing or invalid API key (Authorization: Bearer …)",
                            headers={"WWW-Authenticate": "Bearer"})
    return tenant
