"""A game loaded in a fresh browser context, with the virtual clock, error capture and a closed network.

`GameSession` is the low-level probe surface (evaluate, advance, keys, pointer, screenshots); validators
decide what the observations mean.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from playwright.async_api import BrowserContext, ConsoleMessage, FloatRect, Page, Request, Response
from playwright.async_api import Error as PlaywrightError

from tier2.browser.pool import BrowserPool

__all__ = ["GameSession", "PageLog", "BENIGN_CONSOLE_PATTERNS", "SERVED_ORIGIN"]

#: Origin under which a game directory is served by request interception (``.invalid`` never resolves).
SERVED_ORIGIN = "http://game.tier2.invalid/"

#: Console noise that is not a game error (explicit list; everything else at level "error" counts).
BENIGN_CONSOLE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"favicon\.ico"),
    re.compile(r"GPU stall due to ReadPixels"),
    re.compile(r"Automatic fallback to software WebGL"),
    re.compile(r"The AudioContext was not allowed to start"),
)

_CLOCK_JS = resources.files("tier2.browser").joinpath("clock.js").read_text()


@dataclass
class PageLog:
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)
    crashed: bool = False

    def errors(self) -> list[str]:
        out = [f"pageerror: {e}" for e in self.page_errors]
        out += [f"console.error: {e}" for e in self.console_errors]
        out += [f"request failed: {e}" for e in self.failed_requests]
        out += [f"blocked network request: {e}" for e in self.blocked_requests]
        if self.crashed:
            out.append("renderer crashed")
        return out


def _is_local(url: str) -> bool:
    scheme = urlparse(url).scheme
    if scheme in {"file", "data", "blob", "about"}:
        return True
    host = urlparse(url).hostname or ""
    return host in {"127.0.0.1", "localhost", "::1"}


class GameSession:
    """Async context manager: a page with the game loaded (not yet advanced)."""

    def __init__(
        self, pool: BrowserPool, url: str, viewport: tuple[int, int] = (800, 600), serve_root: Path | None = None,
        force_canvas: bool = False,
    ) -> None:
        self.pool = pool
        self.force_canvas = force_canvas
        self.url = url
        self.serve_root = serve_root.resolve() if serve_root else None
        self.viewport = viewport
        self.log = PageLog()
        self.context: BrowserContext | None = None
        self.page: Page | None = None

    async def __aenter__(self) -> GameSession:
        self.context = await self.pool.new_context(
            viewport={"width": self.viewport[0], "height": self.viewport[1]}, service_workers="block",
        )
        self.context.set_default_timeout(10_000)
        if self.force_canvas:
            await self.context.add_init_script(script="window.__tier2ForceCanvas = true;")
        await self.context.add_init_script(script=_CLOCK_JS)
        await self.context.route("**/*", self._route)
        page = await self.context.new_page()
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.log.page_errors.append(str(exc)[:2000]))
        page.on("requestfailed", self._on_request_failed)
        page.on("response", self._on_response)
        page.on("crash", lambda _p: setattr(self.log, "crashed", True))
        self.page = page
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.context is not None:
            try:
                await asyncio.wait_for(self.context.close(), 10)
            except Exception:  # noqa: BLE001 - a crashed renderer/browser may refuse; the pool relaunches
                pass

    async def _route(self, route: Any) -> None:
        url = route.request.url
        if self.serve_root is not None and url.startswith(SERVED_ORIGIN):
            await self._serve(route, url)
        elif _is_local(url):
            await route.continue_()
        else:
            self.log.blocked_requests.append(url[:300])
            await route.abort("blockedbyclient")

    async def _serve(self, route: Any, url: str) -> None:
        """Answer requests for SERVED_ORIGIN from ``serve_root`` (never leaves the browser; no traversal)."""
        assert self.serve_root is not None
        rel = unquote(urlparse(url).path).lstrip("/") or "index.html"
        target = (self.serve_root / rel).resolve()
        if target.is_relative_to(self.serve_root) and target.is_file():
            await route.fulfill(path=str(target))
        else:
            await route.fulfill(status=404, body="not found")

    def _on_console(self, msg: ConsoleMessage) -> None:
        text = msg.text[:2000]
        if msg.type == "error" and not any(p.search(text) for p in BENIGN_CONSOLE_PATTERNS):
            self.log.console_errors.append(text)

    def _on_request_failed(self, req: Request) -> None:
        if "blockedbyclient" in (req.failure or "").lower() or any(p.search(req.url) for p in BENIGN_CONSOLE_PATTERNS):
            return
        self.log.failed_requests.append(f"{req.url[:300]} ({req.failure})")

    def _on_response(self, resp: Response) -> None:
        if resp.status >= 400 and not any(p.search(resp.url) for p in BENIGN_CONSOLE_PATTERNS):
            self.log.failed_requests.append(f"HTTP {resp.status} {resp.url[:300]}")

    @property
    def p(self) -> Page:
        assert self.page is not None, "session not entered"
        return self.page

    async def load(self, timeout_s: float) -> bool:
        """Navigate; False if the page did not load in time."""
        try:
            await self.p.goto(self.url, wait_until="load", timeout=timeout_s * 1000)
            return True
        except PlaywrightError as exc:
            self.log.page_errors.append(f"page load failed: {str(exc).splitlines()[0][:300]}")
            return False

    async def evaluate(self, expression: str, arg: Any = None, timeout_s: float = 5.0) -> Any:
        """Evaluate in the page with a wall-clock bound (a game stuck in a loop never answers)."""
        return await asyncio.wait_for(self.p.evaluate(expression, arg), timeout_s)

    async def advance(self, ms: float, timeout_s: float = 5.0) -> int:
        return int(await self.evaluate("(ms) => window.__tier2Clock.advance(ms)", ms, timeout_s))

    async def latched_errors(self) -> list[str]:
        try:
            return list(await self.evaluate("() => (window.__tier2Errors || []).slice()", timeout_s=2))
        except Exception:  # noqa: BLE001 - page gone
            return []

    async def dialogs(self) -> list[str]:
        try:
            return list(await self.evaluate("() => (window.__tier2Dialogs || []).slice()", timeout_s=2))
        except Exception:  # noqa: BLE001
            return []

    async def canvas_box(self) -> FloatRect | None:
        handle = await self.p.query_selector("canvas")
        return await handle.bounding_box() if handle else None

    async def screenshot(self, path: Path) -> bytes:
        box = await self.canvas_box()
        clip = box if box and box["width"] > 0 and box["height"] > 0 else None
        data = await asyncio.wait_for(self.p.screenshot(path=str(path), clip=clip), 10)
        return data
