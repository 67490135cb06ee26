"""No network from a game: the browser flags, the page script and the request filter of a game session.

Four layers, each enough on its own for what it covers:

* **Chromium's network stack has nowhere to go** (`NETWORK_ARGS` + `DeadProxy`): every HTTP(S)/WebSocket
  connection goes to a proxy on a loopback port that is bound and never listens (the connection is refused; no
  other process can take the port while the browser lives), loopback included (``<-loopback>`` removes Chromium's
  implicit bypass); every host name resolves to nothing; WebRTC may send no UDP but through the (dead) proxy. This
  is what stops what request interception never sees: WebSockets from workers, ``preconnect``, redirect hops.
* **The page script** (`no_network_script`, ``nonet.js``) runs before the game's first script in every frame:
  ``RTCPeerConnection`` and ``WebTransport`` refuse (and note the attempt on the console, read back as a blocked
  request). The Studio's play route puts it first in every game page (`tier2.browser.play_page`), where the
  viewer's own browser has no such flags.
* **The request filter** (`RequestFilter`): the game's own files are answered from disk by interception (the
  served origin), a loopback URL the user asked to validate is fetched by Playwright with its redirects checked hop
  by hop (one outside that origin is refused), and everything else is refused and recorded.
* **Every WebSocket is closed** by `RequestFilter.web_socket` (Playwright's WebSocket routing), and recorded.
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Final
from urllib.parse import urljoin, urlsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Route, WebSocketRoute

__all__ = ["NETWORK_ARGS", "BLOCKED_MARK", "DeadProxy", "RequestFilter", "no_network_script", "loopback_origin"]

#: Chromium's network flags (the proxy itself is `DeadProxy.arg`, added at launch: its port is the launch's own).
#: They come after any configured extra flags, so a config cannot lift them (the last value of a switch wins).
NETWORK_ARGS: Final[tuple[str, ...]] = (
    "--proxy-bypass-list=<-loopback>",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)
#: the console prefix of a refusal noted by ``nonet.js``
BLOCKED_MARK: Final = "__tier2_blocked__ "
#: redirects followed inside a validated loopback origin, and the bound on one fetch of it
MAX_REDIRECTS: Final = 5
FETCH_TIMEOUT_MS: Final = 15_000
#: URL schemes that never touch the network
_LOCAL_SCHEMES: Final = frozenset({"data", "blob", "about"})
_LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})
_NONET_JS: Final = resources.files("tier2.browser").joinpath("nonet.js").read_text()


def no_network_script(*, viewer: bool) -> str:
    """The page script; ``viewer``: for a browser with a network behind it (the Studio's play page): WebSocket
    refuses too and no nested frame may exist (the validator's browser closes WebSockets itself and runs the
    script in every frame)."""
    return _NONET_JS.replace("{ viewer: false }", "{ viewer: true }" if viewer else "{ viewer: false }", 1)


def loopback_origin(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an http(s) URL on a loopback host, else None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or (parts.hostname or "") not in _LOOPBACK_HOSTS:
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    return parts.scheme, parts.hostname or "", port


class DeadProxy:
    """A loopback TCP port that is bound and never listens: a connection to it is refused at once, and no other
    process can listen on it while this object lives. Chromium's proxy for the lifetime of one launch."""

    def __init__(self) -> None:
        self._sock: socket.socket | None = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]

    @property
    def arg(self) -> str:
        return f"--proxy-server=http://127.0.0.1:{self.port}"

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()


class RequestFilter:
    """The route handlers of one game session. ``block(entry)`` records a refused request as ``"<url> [<kind>]"``;
    ``serve(route)`` answers ``served_origin`` (None: nothing is served); ``origin``: a loopback origin the user
    asked to validate (fetched by Playwright, not by the browser), or None."""

    def __init__(self, block: Callable[[str], None], served_origin: str,
                 serve: Callable[[Route], Awaitable[None]] | None, origin: tuple[str, str, int] | None) -> None:
        self.block = block
        self.served_origin = served_origin
        self.serve = serve
        self.origin = origin

    async def route(self, route: Route) -> None:
        url = route.request.url
        if self.serve is not None and url.startswith(self.served_origin):
            await self.serve(route)
        elif self.origin is not None and loopback_origin(url) == self.origin:
            await self._fetch(route, url)
        elif urlsplit(url).scheme in _LOCAL_SCHEMES:
            await route.continue_()
        else:
            self.block(f"{url[:300]} [{route.request.resource_type}]")
            await route.abort("blockedbyclient")

    async def _fetch(self, route: Route, url: str) -> None:
        """The request, made by Playwright; a redirect is followed here only inside the origin (the browser never
        sees one: it would follow it unfiltered), one that leaves it is refused and recorded."""
        for _ in range(MAX_REDIRECTS + 1):
            try:
                resp = await route.fetch(url=url, max_redirects=0, timeout=FETCH_TIMEOUT_MS)
            except PlaywrightError:
                await route.abort("connectionfailed")
                return
            location = resp.headers.get("location")
            if not (300 <= resp.status < 400 and location):
                await route.fulfill(response=resp)
                return
            target = urljoin(url, location)
            if loopback_origin(target) != self.origin:
                self.block(f"{target[:300]} [redirect from {url[:300]}]")
                await route.abort("blockedbyclient")
                return
            url = target
        self.block(f"{url[:300]} [more than {MAX_REDIRECTS} redirects]")
        await route.abort("blockedbyclient")

    async def web_socket(self, ws: WebSocketRoute) -> None:
        """Every WebSocket: recorded and closed before it connects (1008: policy violation)."""
        self.block(f"{ws.url[:300]} [websocket]")
        await ws.close(code=1008, reason="a tier2 game has no network")
