"""Bearer API keys mapped to tenants (``TIER2_API_KEYS=tenant:key,tenant2:key2``).

Every route — tier2's and AgentScope's (its ``X-User-ID`` dependency is overridden) — resolves the caller's
tenant from ``Authorization: Bearer <key>``; a missing or unknown key is a 401. With no keys configured the
service runs in single-user local mode (tenant ``local``) and refuses to bind anything but loopback.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time

from fastapi import HTTPException, Query, Request, status

from tier2.settings.api_keys import ApiKeys

__all__ = ["LOCAL_TENANT", "STREAM_TOKEN_TTL_S", "sign_stream_token", "stream_tenant", "tenant_of"]

#: An EventSource cannot send Authorization: a browser streams with a short-lived token bound to one run.
STREAM_TOKEN_TTL_S = 3600

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


def _stream_secret(keys: ApiKeys) -> bytes:
    """``TIER2_STREAM_SECRET``, else derived from the API keys (identical on every replica with the same keys)."""
    explicit = os.environ.get("TIER2_STREAM_SECRET", "")
    material = explicit or "\n".join(sorted(keys.by_key))
    return hashlib.sha256(b"tier2-stream-token\n" + material.encode()).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign_stream_token(keys: ApiKeys, tenant: str, run_id: str, ttl_s: int = STREAM_TOKEN_TTL_S) -> tuple[str, int]:
    """A token that lets its holder stream one run's events (and nothing else) until it expires."""
    expires = int(time.time()) + ttl_s
    body = _b64(json.dumps({"t": tenant, "r": run_id, "e": expires}, separators=(",", ":")).encode())
    mac = _b64(hmac.new(_stream_secret(keys), body.encode(), hashlib.sha256).digest())
    return f"{body}.{mac}", expires


def _verify(keys: ApiKeys, token: str, run_id: str) -> str | None:
    body, _, mac = token.partition(".")
    good = _b64(hmac.new(_stream_secret(keys), body.encode(), hashlib.sha256).digest())
    if not mac or not hmac.compare_digest(mac, good):
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (ValueError, json.JSONDecodeError):
        return None
    if claims.get("r") != run_id or int(claims.get("e", 0)) < time.time():
        return None
    return str(claims.get("t"))


async def stream_tenant(request: Request, run_id: str,
                        token: str | None = Query(default=None, max_length=1000,
                                                  description="stream token (POST /v1/runs/{id}/stream-token)"),
                        ) -> str:
    """For the events route: a valid ``?token=`` for this run, else the usual bearer key."""
    keys: ApiKeys = request.app.state.tier2_api_keys
    if token is not None and keys.enabled:
        tenant = _verify(keys, token, run_id)
        if tenant is None:
            raise HTTPException(status.HTTP_401_UNAUTHORIZED, "invalid or expired stream token")
        return tenant
    return await tenant_of(request)
