"""A game loaded in a fresh browser context, with the virtual clock, error capture and a closed network.

`GameSession` is the low-level probe surface (evaluate, advance, keys, pointer, screenshots); validators
decide what the observations mean.
"""

from __future__ import annotations

import asyncio
import contextlib
import mimetypes
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from playwright.async_api import BrowserContext, ConsoleMessage, FloatRect, Page, Request, Response, Route, WebSocket
from playwright.async_api import Error as PlaywrightError

from tier2.browser.network import BLOCKED_MARK, RequestFilter, loopback_origin, no_network_script
from tier2.browser.pool import SESSION_OPTIONS, BrowserPool
from tier2.hostio import ProjectDir, UnsafePath, write_file
from tier2.packs.engine import EngineAdapter
from tier2.packs.registry import configured_pack

__all__ = ["GameSession", "PageLog", "BENIGN_CONSOLE_PATTERNS", "SERVED_ORIGIN", "served_path", "resolve_served",
           "machine_load_factor"]

#: Origin under which a game directory is served by request interception: a loopback origin, so a game sees the
#: same ``location`` (``localhost``, a secure context) as when its author runs ``vite``/``npx serve``; requests to it
#: never reach the network (they are answered from the game's directory), and every other request is blocked
#: (`tier2.browser.network`: loopback too, but for the one loopback origin of a URL the user asked to validate).
SERVED_ORIGIN = "http://localhost:4173/"

#: Console noise that is not a game error (explicit list; everything else at level "error" counts).
BENIGN_CONSOLE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"favicon\.ico"),
    re.compile(r"GPU stall due to ReadPixels"),
    re.compile(r"Automatic fallback to software WebGL"),
    re.compile(r"The AudioContext was not allowed to start"),
)

_CLOCK_JS = resources.files("tier2.browser").joinpath("clock.js").read_text()
#: the validator's browser closes WebSockets itself (and reports them): the page script leaves them be
_NO_NETWORK_JS = no_network_script(viewer=False)
_CANVAS_BOX_JS = """() => {
  const find = (root) => {
    const found = root.querySelector('canvas');
    if (found) return found;
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) { const inner = find(el.shadowRoot); if (inner) return inner; }
    }
    return null;
  };
  const canvas = find(document);
  if (!canvas || !canvas.getClientRects().length) return null;
  const r = canvas.getBoundingClientRect();
  return {x: r.x, y: r.y, width: r.width, height: r.height};
}"""


#: the most a machine's load stretches a wall-clock wait (a hung page must still be called hung in bounded time)
MAX_LOAD_FACTOR = 4.0


def machine_load_factor() -> float:
    """How much more wall time than on an idle machine a page step may need now: the 1-minute load average per
    CPU, between 1 and `MAX_LOAD_FACTOR`. Used for second looks and wall-clock budgets, never for verdicts of game
    time."""
    try:
        return min(MAX_LOAD_FACTOR, max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)))
    except OSError:  # no load average on this platform
        return 1.0


@dataclass
class PageLog:
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    #: requests the session refused, as ``"<url> [<resource type>]"`` (``[websocket]``, ``[webrtc]``,
    #: ``[redirect from <url>]``...; judged by the gates: an error for a tier2 game, a warning for any other game
    #: that boots and plays without them); at most `MAX_BLOCKED` kept
    blocked_requests: list[str] = field(default_factory=list)
    crashed: bool = False

    MAX_BLOCKED = 200

    def block(self, entry: str) -> None:
        if len(self.blocked_requests) < self.MAX_BLOCKED:
            self.blocked_requests.append(entry)

    def errors(self) -> list[str]:
        """Errors of the page itself (blocked requests are reported apart, see ``blocked_requests``)."""
        out = [f"pageerror: {e}" for e in self.page_errors]
        out += [f"console.error: {e}" for e in self.console_errors]
        out += [f"request failed: {e}" for e in self.failed_requests]
        if self.crashed:
            out.append("renderer crashed")
        return out


def served_path(url: str) -> str:
    """The path a SERVED_ORIGIN URL asks for, relative to the serve roots (``dist/bundle.js``; query dropped)."""
    return unquote(urlparse(url).path).lstrip("/")


def resolve_served(roots: Sequence[Path], rel: str) -> Path | None:
    """The file ``rel`` (a `served_path`) maps to: the first root that has it; directories serve their
    index.html; nothing outside a root, and never through a link (`tier2.hostio`: a game's files are
    the sandbox's to change)."""
    for root in roots:
        found = _served_in(ProjectDir(root), rel)
        if found is not None:
            return found
    return None


def _served_in(root: ProjectDir, rel: str) -> Path | None:
    try:
        parts = root.parts(rel)
    except UnsafePath:
        return None
    if root.is_dir("/".join(parts)):
        parts = (*parts, "index.html")
    return root.path("/".join(parts)) if parts and root.is_file("/".join(parts)) else None


def read_served(roots: Sequence[Path], target: Path) -> bytes:
    """The bytes of a file `resolve_served` found, read under its root without following links."""
    for root in roots:
        if target.is_relative_to(root):
            return ProjectDir(root).read_bytes(target, max_bytes=None)
    raise UnsafePath(f"{target} is under no serve root")


class GameSession:
    """Async context manager: a page with the game loaded (not yet advanced)."""

    #: bounds on one page step (an ``evaluate``): never below the base, scaled up by the measured frame cost
    BASE_STEP_S = 5.0
    MAX_STEP_S = 30.0
    #: the bound until the first timed step: the first frames carry one-off boot work (decoding, texture uploads)
    BOOT_STEP_S = 15.0

    def __init__(
        self, pool: BrowserPool, url: str, viewport: tuple[int, int] = (800, 600),
        serve_root: Path | Sequence[Path] | None = None, force_canvas: bool = False,
        engine: EngineAdapter | None = None,
    ) -> None:
        """``engine``: the engine adapter whose in-page script (`EngineAdapter.page_js`) answers the validators'
        questions about the game (None: the configured pack's)."""
        if pool.viewer:
            raise ValueError("a viewer's browser has a network: games run only in a pool without one")
        self.pool = pool
        self.force_canvas = force_canvas
        self.engine = engine or configured_pack().adapter
        self.url = url
        roots = [serve_root] if isinstance(serve_root, Path) else list(serve_root or [])
        #: directories answering SERVED_ORIGIN, first match wins (a built site, then the project it came from)
        self.serve_roots = [r.resolve() for r in roots]
        self.serve_root = self.serve_roots[0] if self.serve_roots else None
        self.step_timeout_s = self.BOOT_STEP_S
        #: real milliseconds one virtual frame costs (measured by `measure_frame_cost`), None until measured
        self.frame_ms: float | None = None
        self._timed_steps = 0
        #: calls that needed a second look (`evaluate`): the page answered late, or not at all
        self.second_looks = 0
        self.viewport = viewport
        self.log = PageLog()
        #: every path answered from the serve roots, with the file that answered it (None: a 404)
        self.served: dict[str, Path | None] = {}
        self.context: BrowserContext | None = None
        self.page: Page | None = None
        #: what the page may reach: the serve roots, else the loopback URL itself (its origin only); nothing else
        self.network = RequestFilter(
            self.log.block, SERVED_ORIGIN, self._serve if self.serve_roots else None,
            None if self.serve_roots else loopback_origin(url))

    async def __aenter__(self) -> GameSession:
        # a blank page in a fresh context (a standby one when the pool has it ready): the init scripts and the
        # route apply from its first navigation on, before any of the game's code
        self.context, page = await self.pool.new_page(
            **{**SESSION_OPTIONS, "viewport": {"width": self.viewport[0], "height": self.viewport[1]}})
        self.context.set_default_timeout(10_000)
        try:
            await self.context.add_init_script(script=_NO_NETWORK_JS)  # before anything else, in every frame
            if self.force_canvas:
                await self.context.add_init_script(script="window.__tier2ForceCanvas = true;")
            await self.context.add_init_script(script=_CLOCK_JS)
            await self.context.add_init_script(script=self.engine.page_js)
            await self.context.route("**/*", self.network.route)
            await self.context.route_web_socket(lambda _url: True, self.network.web_socket)
        except BaseException:
            await self.__aexit__()
            raise
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.log.page_errors.append(str(exc)[:2000]))
        page.on("requestfailed", self._on_request_failed)
        page.on("response", self._on_response)
        page.on("crash", lambda _p: setattr(self.log, "crashed", True))
        page.on("websocket", self._on_websocket)  # one the page script could not route (a worker's): it fails
        self.page = page
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.context is not None:
            try:
                await asyncio.wait_for(self.context.close(), 10)
            except Exception:  # noqa: BLE001 - a crashed renderer/browser may refuse; the pool relaunches
                pass

    def resolve_served(self, url: str) -> Path | None:
        """The file a SERVED_ORIGIN URL maps to (first root that has it; directories serve their index.html)."""
        return resolve_served(self.serve_roots, served_path(url))

    async def _serve(self, route: Route) -> None:
        """Answer requests for SERVED_ORIGIN from the serve roots (never leaves the browser; no traversal)."""
        url = route.request.url
        target = self.resolve_served(url)
        self.served[served_path(url)] = target
        body = None
        if target is not None:
            try:
                body = await asyncio.to_thread(read_served, self.serve_roots, target)
            except OSError:
                self.served[served_path(url)] = None
        if target is not None and body is not None:
            kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            await route.fulfill(status=200, body=body, content_type=kind)
        else:
            await route.fulfill(status=404, body="not found")

    def _on_websocket(self, ws: WebSocket) -> None:
        self.log.block(f"{ws.url[:300]} [websocket]")

    def _on_console(self, msg: ConsoleMessage) -> None:
        text = msg.text[:2000]
        if msg.type == "debug" and text.startswith(BLOCKED_MARK):  # a refusal of the page script (nonet.js)
            self.log.block(text.removeprefix(BLOCKED_MARK))
            return
        if "ERR_BLOCKED_BY_CLIENT" in text:  # the console echo of a request we blocked: reported as such
            return
        if msg.type == "error" and not any(p.search(text) for p in BENIGN_CONSOLE_PATTERNS):
            self.log.console_errors.append(text)

    def _on_request_failed(self, req: Request) -> None:
        failure = (req.failure or "").lower().replace("_", "")
        if "blockedbyclient" in failure or any(p.search(req.url) for p in BENIGN_CONSOLE_PATTERNS):
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
        """Navigate; False if the page did not load in time (``timeout_s`` on an idle machine, stretched by its
        load: a page's scripts parse in real time)."""
        try:
            await self.p.goto(self.url, wait_until="load", timeout=timeout_s * machine_load_factor() * 1000)
            return True
        except PlaywrightError as exc:
            self.log.page_errors.append(f"page load failed: {str(exc).splitlines()[0][:300]}")
            return False

    async def evaluate(self, expression: str, arg: Any = None, timeout_s: float | None = None,
                       second_look: bool = True) -> Any:
        """Evaluate in the page with a wall-clock bound (a game stuck in a loop never answers); the default bound
        is ``step_timeout_s``, which grows with the measured frame cost (a slow page is not a hung one). A call
        that has not answered within the bound gets a second look before `TimeoutError`: one more bound, times
        the machine's load (`machine_load_factor`; at most `MAX_STEP_S` unless the bound is longer) — a loaded
        machine delays a page that is still answering. ``second_look=False``: the caller is a look itself."""
        bound = timeout_s or self.step_timeout_s
        call = asyncio.ensure_future(self.p.evaluate(expression, arg))
        try:
            done, _ = await asyncio.wait({call}, timeout=bound)
            if not done and second_look:
                self.second_looks += 1
                second = min(bound * machine_load_factor(), max(bound, self.MAX_STEP_S))
                done, _ = await asyncio.wait({call}, timeout=second)
            if not done:
                raise TimeoutError(f"no answer within {bound:.0f}s and a second look")
            return call.result()
        finally:
            if not call.done():
                call.cancel()
                with contextlib.suppress(BaseException):
                    await call

    async def advance(self, ms: float, timeout_s: float | None = None) -> int:
        return int(await self.evaluate("(ms) => window.__tier2Clock.advance(ms)", ms, timeout_s))

    async def step(self, expression: str, ms: float) -> Any:
        """Evaluate ``expression(ms)`` (one that advances the clock by ``ms``) and wait for the page's next task,
        timing both: rendering work (WebGL in the GPU process above all) completes after the callbacks return and
        delays the next task, so this is the real cost of the frames. The slowest frame seen so far raises the step
        bound before any long advance is asked of a slow page."""
        started = time.monotonic()
        result = await self.evaluate(expression, ms)
        await self.evaluate("() => 0")
        self._scale_steps((time.monotonic() - started) * 1000 / max(1.0, ms / (1000 / 60)))
        return result

    def _scale_steps(self, frame_ms: float) -> None:
        """Fold one measured frame cost into the running estimate (the very first timed step carries one-off boot
        work and only ends the boot bound) and bound later steps by 200 frames at that cost, twice over."""
        self._timed_steps += 1
        if self._timed_steps > 1:
            self.frame_ms = frame_ms if self.frame_ms is None else 0.5 * (self.frame_ms + frame_ms)
        self.step_timeout_s = min(self.MAX_STEP_S, max(self.BASE_STEP_S, (self.frame_ms or 0.0) * 200 * 2 / 1000))

    async def frame_cost(self, timeout_s: float | None = None, second_look: bool = True) -> tuple[int, float]:
        """(virtual frames run so far, real ms spent running them) from the virtual clock."""
        frames, real_ms = await self.evaluate("() => [window.__tier2Clock.frames, window.__tier2Clock.realMs]",
                                              timeout_s=timeout_s, second_look=second_look)
        return int(frames), float(real_ms)

    async def measure_frame_cost(self) -> float:
        """Real ms per virtual frame (the running estimate of the timed steps, else the clock's own count) and
        scale the step bound to it."""
        frames, real_ms = await self.frame_cost()
        if self.frame_ms is None:  # no timed step yet: the clock's own count (script time only)
            self._timed_steps = max(1, self._timed_steps)
            self._scale_steps(real_ms / max(1, frames))
        return self.frame_ms or 0.0

    async def latched_errors(self) -> list[str]:
        try:
            return list(await self.evaluate("() => (window.__tier2Errors || []).slice()", timeout_s=2,
                                            second_look=False))
        except Exception:  # noqa: BLE001 - page gone
            return []

    async def dialogs(self) -> list[str]:
        try:
            return list(await self.evaluate("() => (window.__tier2Dialogs || []).slice()", timeout_s=2,
                                            second_look=False))
        except Exception:  # noqa: BLE001
            return []

    async def canvas_box(self) -> FloatRect | None:
        """The first canvas's box in the viewport (None without one, or when it has no layout box) — as Playwright's
        ``query_selector("canvas")`` + ``bounding_box()`` finds and measures it (light DOM first, then open shadow
        roots), in one round trip and without Playwright's selector engine (injecting it costs a page ~0.1 s)."""
        box = await self.evaluate(_CANVAS_BOX_JS)
        if not box:
            return None
        return FloatRect(x=float(box["x"]), y=float(box["y"]), width=float(box["width"]), height=float(box["height"]))

    async def screenshot(self, path: Path) -> bytes:
        box = await self.canvas_box()
        clip = box if box and box["width"] > 0 and box["height"] > 0 else None
        data = await asyncio.wait_for(self.p.screenshot(clip=clip), 10)
        await asyncio.to_thread(write_file, path, data)  # never through a link planted in the project
        return data
