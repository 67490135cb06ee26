"""Which ``Host`` a request may name, and from which page a state-changing request may come (ASGI middleware).

**DNS rebinding.** In local mode (no API keys) nothing but the socket protects the API: a web page the user visits
can point its own host name at 127.0.0.1 and then drive the service as a same-origin page would. Its requests still
name the attacker's host in ``Host``; `TrustedHosts` answers them ``400 invalid_request`` before any route runs.
Trusted: ``127.0.0.1``, ``localhost``, ``[::1]``, the address the request arrived on (the bound host), and the
names in ``TIER2_TRUSTED_HOSTS`` (comma-separated, e.g. a reverse proxy's name). The port is not part of the check.

**Cross-site requests.** A page on another origin can still send a no-CORS ``POST`` to ``http://127.0.0.1:…``
(with a body but no Content-Type, which FastAPI reads as JSON): in local mode a ``POST``/``PUT``/``PATCH``/
``DELETE`` whose ``Origin`` is not a trusted host (``null`` included: a sandboxed document) is ``403 forbidden``.
Browsers send ``Origin`` on every such request; clients that are not browsers send none and are not affected.

With API keys configured the key is the protection (a browser does not attach it to a cross-site request); the
Host check then applies only when ``TIER2_TRUSTED_HOSTS`` names the service's hosts.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from tier2.errors import ErrorCode
from tier2.service.errors import error_response

__all__ = ["LOOPBACK_NAMES", "TrustedHosts", "host_name"]

#: always trusted: the loopback names a local user types
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
_UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def host_name(value: str) -> str | None:
    """The host of a ``Host`` header value (lower case, no port, IPv6 without brackets); None if malformed."""
    value = value.strip().lower()
    if not value or any(c in value for c in "/\\@?# \t"):
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0 or (value[end + 1:] and not value[end + 1:].startswith(":")):
            return None
        return value[1:end] or None
    name, sep, port = value.rpartition(":") if value.count(":") == 1 else (value, "", "")
    if sep and not port.isdigit():
        return None
    return name.rstrip(".") or None


def _origin_host(origin: str) -> str | None:
    try:
        parts = urlsplit(origin.strip())
        return (parts.hostname or None) if parts.scheme in ("http", "https") else None
    except ValueError:
        return None


class TrustedHosts:
    """Refuse a request whose ``Host`` is not trusted (400), and in ``local`` mode a state-changing request from a
    page of an untrusted origin (403). ``enforce_host``: check ``Host`` (local mode, or names configured)."""

    def __init__(self, app: ASGIApp, *, names: Iterable[str], local: bool, enforce_host: bool) -> None:
        self.app = app
        self.names = LOOPBACK_NAMES | {n for n in (host_name(x) for x in names) if n}
        self.local = local
        self.enforce_host = enforce_host

    def _trusted(self, host: str | None, scope: Scope) -> bool:
        server = scope.get("server")
        bound = str(server[0]).lower() if server else None
        return host is not None and (host in self.names or host == bound)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan (tier2 serves no WebSocket)
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.enforce_host and not self._trusted(host_name(headers.get("host", "")), scope):
            response = error_response(400, ErrorCode.INVALID_REQUEST,
                                      "untrusted Host header: this service answers only for 127.0.0.1, localhost, "
                                      "[::1] and the names in TIER2_TRUSTED_HOSTS")
            await response(scope, receive, send)
            return
        origin = headers.get("origin")
        if (self.local and origin is not None and scope.get("method", "GET") in _UNSAFE_METHODS
                and not self._trusted(_origin_host(origin), scope)):
            response = error_response(403, ErrorCode.FORBIDDEN,
                                      "cross-origin request refused: in local mode only pages of this service "
                                      "(or of TIER2_TRUSTED_HOSTS) may send it")
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
