"""Tenants and run tokens: bearer API keys map to tenants (``TIER2_API_KEYS=tenant:key,tenant2:key2``), and
short-lived HMAC tokens stand in for the key where a browser cannot send a header, each bound to one run, one
tenant and one use:

* a **stream token** lets an ``EventSource`` stream one run's events;
* a **play token** lets a sandboxed ``<iframe>`` load one run's built game (``dist/``), nothing else.

Each use signs with its own key (derived from the same secret with a different label), so a token of one use never
verifies as the other.

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
from tier2.settings.tenants import LOCAL_TENANT

__all__ = ["LOCAL_TENANT", "PLAY_TOKEN_TTL_S", "STREAM_TOKEN_TTL_S", "sign_play_token", "sign_stream_token",
           "verify_play_token", "verify_stream_token"]

#: An EventSource cannot send Authorization: a browser streams with a short-lived token bound to one run.
STREAM_TOKEN_TTL_S = 3600
#: An iframe cannot send Authorization either: the game is loaded with a token bound to one run's dist/.
PLAY_TOKEN_TTL_S = 3600



def _secret(keys: ApiKeys, use: bytes) -> bytes:
    """The signing key of one use: from ``TIER2_STREAM_SECRET``, else derived from the API keys (identical on every
    replica with the same keys)."""
    explicit = os.environ.get("TIER2_STREAM_SECRET", "")
    material = explicit or "\n".join(sorted(keys.by_key))
    return hashlib.sha256(b"tier2-" + use + b"-token\n" + material.encode()).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _sign(keys: ApiKeys, use: bytes, tenant: str, run_id: str, ttl_s: int) -> tuple[str, int]:
    expires = int(time.time()) + ttl_s
    body = _b64(json.dumps({"t": tenant, "r": run_id, "e": expires}, separators=(",", ":")).encode())
    mac = _b64(hmac.new(_secret(keys, use), body.encode(), hashlib.sha256).digest())
    return f"{body}.{mac}", expires


def _verify(keys: ApiKeys, use: bytes, token: str, run_id: str) -> str | None:
    body, _, mac = token.partition(".")
    if not mac or not token.isascii():  # a signed token is base64url: anything else is not one (compare_digest
        return None                     # would raise on non-ASCII text: a 500 instead of a 401)
    good = _b64(hmac.new(_secret(keys, use), body.encode(), hashlib.sha256).digest())
    if not hmac.compare_digest(mac.encode(), good.encode()):
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (ValueError, json.JSONDecodeError):
        return None
    if not isinstance(claims, dict) or claims.get("r") != run_id or int(claims.get("e", 0)) < time.time():
        return None
    return str(claims.get("t"))


def sign_stream_token(keys: ApiKeys, tenant: str, run_id: str, ttl_s: int = STREAM_TOKEN_TTL_S) -> tuple[str, int]:
    """A token that lets its holder stream one run's events (and nothing else) until it expires."""
    return _sign(keys, b"stream", tenant, run_id, ttl_s)


def verify_stream_token(keys: ApiKeys, token: str, run_id: str) -> str | None:
    """The tenant a valid, unexpired stream token for ``run_id`` was signed for, else None."""
    return _verify(keys, b"stream", token, run_id)


def sign_play_token(keys: ApiKeys, tenant: str, run_id: str, ttl_s: int = PLAY_TOKEN_TTL_S) -> tuple[str, int]:
    """A token that lets its holder load one run's built game (its ``dist/`` files, nothing else) until it
    expires."""
    return _sign(keys, b"play", tenant, run_id, ttl_s)


def verify_play_token(keys: ApiKeys, token: str, run_id: str) -> str | None:
    """The tenant a valid, unexpired play token for ``run_id`` was signed for, else None."""
    return _verify(keys, b"play", token, run_id)
