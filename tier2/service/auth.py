"""Tenants and stream tokens: bearer API keys map to tenants (``TIER2_API_KEYS=tenant:key,tenant2:key2``), and a
short-lived HMAC token lets a browser ``EventSource`` (which cannot send a header) stream one run.

The FastAPI dependencies that resolve the caller's tenant are in `tier2.service.deps` (`TenantDep`,
`StreamTenantDep`): every route but ``/healthz`` needs ``Authorization: Bearer <key>``. With no keys configured
the service runs in single-user local mode (tenant ``local``) and refuses to bind anything but loopback.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time

from tier2.settings.api_keys import ApiKeys

__all__ = ["LOCAL_TENANT", "STREAM_TOKEN_TTL_S", "sign_stream_token", "verify_stream_token"]

#: An EventSource cannot send Authorization: a browser streams with a short-lived token bound to one run.
STREAM_TOKEN_TTL_S = 3600

LOCAL_TENANT = "local"


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


def verify_stream_token(keys: ApiKeys, token: str, run_id: str) -> str | None:
    """The tenant a valid, unexpired token for ``run_id`` was signed for, else None."""
    body, _, mac = token.partition(".")
    good = _b64(hmac.new(_stream_secret(keys), body.encode(), hashlib.sha256).digest())
    if not mac or not hmac.compare_digest(mac, good):
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (ValueError, json.JSONDecodeError):
        return None
    if not isinstance(claims, dict) or claims.get("r") != run_id or int(claims.get("e", 0)) < time.time():
        return None
    return str(claims.get("t"))
