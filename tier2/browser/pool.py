"""One Chromium (Debian's, never a Playwright download) shared by all validations of a process.

Each validation gets a fresh context. A browser that died is relaunched on the next request; contexts are
always closed, so no renderer processes leak.

The pool is kept warm: `BrowserPool.warm` launches the browser in the background (a validation calls it before
its build, so the launch overlaps esbuild) and keeps ``standby`` fresh contexts, each with a blank page, ready
(opening a page spawns a renderer process: ~0.1-0.3 s). A standby page is never used by anything before it is
handed out, and only when the session asks for the very options it was made with; one whose browser died is
dropped and a new one made.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import shutil
import tempfile
from typing import Any

from playwright.async_api import Browser, BrowserContext, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from tier2.browser.launcher import unprivileged_launcher
from tier2.browser.network import NETWORK_ARGS, DeadProxy
from tier2.errors import BrowserUnavailable
from tier2.settings.identity import browser_identity
from tier2.settings.sandbox import IsolationConfig
from tier2.settings.secrets import tool_env

__all__ = ["BrowserPool", "find_chromium", "CHROMIUM_ARGS", "SESSION_OPTIONS"]

log = logging.getLogger(__name__)

#: Flags for a closed network and a headless VM (background networking would only produce refused connections).
CHROMIUM_ARGS: tuple[str, ...] = (
    "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--mute-audio",
    "--autoplay-policy=no-user-gesture-required",
)

#: the context options of a game session (`tier2.browser.GameSession`): the options standby pages are made with
SESSION_OPTIONS: dict[str, Any] = {"viewport": {"width": 800, "height": 600}, "service_workers": "block"}


def find_chromium(override: str | None, candidates: list[str]) -> str:
    """Path of a Chromium executable, or `BrowserUnavailable` with an install hint."""
    if override:  # an explicit choice never silently falls back to another browser
        path = override if os.path.isabs(override) else shutil.which(override)
        if path and os.access(path, os.X_OK):
            return path
        raise BrowserUnavailable(f"Chromium not found at TIER2_CHROMIUM={override}")
    for cand in candidates:
        path = cand if os.path.isabs(cand) else shutil.which(cand)
        if path and os.access(path, os.X_OK):
            return path
    tried = ", ".join(candidates)
    raise BrowserUnavailable(f"Chromium not found ({tried}): install it with `apt-get install chromium`")


class BrowserPool:
    """Lazily launched shared browser; use ``async with`` or call `close()`."""

    def __init__(self, executable: str, extra_args: list[str] | None = None, launch_timeout_s: float = 30.0,
                 standby: int = 1, viewer: bool = False, *, isolation: IsolationConfig | None = None) -> None:
        self.executable = executable
        #: who the browser runs as when tier2 is root (`tier2.browser.launcher`): never root, its sandbox on
        self.identity = browser_identity(isolation)
        #: a browser that shows tier2's own pages on loopback to a person or a test (the Studio, the event stream)
        #: and has a network for it: never one for games (`tier2.browser.GameSession` refuses it)
        self.viewer = viewer
        #: the launch flags (the network ones last: no extra flag lifts them) but the dead proxy's, whose port is
        #: each launch's own (`tier2.browser.network`)
        self.args = list(CHROMIUM_ARGS) + list(extra_args or []) + ([] if viewer else list(NETWORK_ARGS))
        self._proxy: DeadProxy | None = None
        self.launch_timeout_s = launch_timeout_s
        #: how many fresh session pages `warm` keeps ready
        self.standby = standby
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._lock = asyncio.Lock()
        self._spares: list[tuple[Browser, BrowserContext, Page]] = []
        self._filler: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()
        #: a session is waiting for the standby page being made (the next one makes its own)
        self._waiting = False
        self._stopping = False
        self.launches = 0
        #: pages handed out by `new_page` (one per game session), and how many of them were standby pages
        self.pages_opened = 0
        self.standby_used = 0

    async def _ensure(self) -> Browser:
        async with self._lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            if self._browser is not None:
                log.warning("browser disconnected; relaunching")
                await self._safe_close_browser()
            if not os.access(self.executable, os.X_OK):
                raise BrowserUnavailable(f"Chromium executable {self.executable} is missing")
            try:
                if self._pw is None:
                    self._pw = await async_playwright().start()
                env: dict[str, str | float | bool] = {**tool_env({"HOME": tempfile.gettempdir()})}
                if self._proxy is None and not self.viewer:
                    self._proxy = DeadProxy()  # kept until the pool closes: no one else may listen on its port
                proxy = [self._proxy.arg] if self._proxy is not None else []
                self._browser = await self._pw.chromium.launch(
                    executable_path=unprivileged_launcher(self.executable, self.identity),
                    # Chromium's own sandbox on (Playwright's default adds --no-sandbox); a sandbox kind's launcher
                    # turns it off itself, inside the kind's sandbox
                    chromium_sandbox=True, headless=True, args=[*self.args, *proxy],
                    timeout=self.launch_timeout_s * 1000,
                    env=env,  # never the service's secrets
                )
            except PlaywrightError as exc:
                raise BrowserUnavailable(f"Chromium failed to start ({self.executable}): {exc}") from exc
            self.launches += 1
            return self._browser

    async def new_context(self, **kwargs: Any) -> BrowserContext:
        browser = await self._ensure()
        try:
            return await browser.new_context(**kwargs)
        except PlaywrightError:
            # the browser may have died between the check and the call: relaunch once
            async with self._lock:
                await self._safe_close_browser()
            browser = await self._ensure()
            return await browser.new_context(**kwargs)

    def warm(self) -> None:
        """Launch the browser and fill the standby pages in the background; returns at once, never raises (a
        failure leaves the work to the next session, which reports it). Idempotent. Called when a validation
        starts (its build, if any, overlaps the work) and when the writer builds (the RunGame that follows finds
        its page ready) — not when a session ends: a page made then is wasted when no validation follows."""
        if self._stopping:
            return
        if self._filler is None or self._filler.done():
            self._filler = asyncio.get_running_loop().create_task(self._fill())

    async def _fill(self) -> None:
        try:
            browser = await self._ensure()
            while len(self._spares) < self.standby and browser.is_connected():
                context = await browser.new_context(**SESSION_OPTIONS)
                try:
                    page = await context.new_page()
                except BaseException:
                    self._close_later(context)
                    raise
                page.on("crash", functools.partial(self._drop_spare, context))
                self._spares.append((browser, context, page))
        except Exception:  # noqa: BLE001 - an optimisation: the next session opens its own page and reports
            log.debug("warming the browser pool failed", exc_info=True)

    async def warmed(self) -> None:
        """Wait until the work `warm` started is done (the browser up, the standby pages ready or given up)."""
        filler = self._filler
        if filler is not None:
            await asyncio.shield(filler)

    def _drop_spare(self, context: BrowserContext, _page: Page | None = None) -> None:
        """A standby page's renderer crashed: never hand it out."""
        kept = [s for s in self._spares if s[1] is not context]
        if len(kept) != len(self._spares):
            self._spares = kept
            self._close_later(context)

    def _take(self, options: dict[str, Any]) -> tuple[BrowserContext, Page] | None:
        """A standby page made with exactly ``options`` in the live browser; dead ones are dropped."""
        if options != SESSION_OPTIONS:
            return None
        while self._spares:
            browser, context, page = self._spares.pop(0)
            if browser is self._browser and browser.is_connected() and not page.is_closed():
                return context, page
            self._close_later(context)
        return None

    def _close_later(self, context: BrowserContext) -> None:
        task = asyncio.get_running_loop().create_task(self._close_context(context))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    @staticmethod
    async def _close_context(context: BrowserContext) -> None:
        try:
            await asyncio.wait_for(context.close(), 10)
        except Exception:  # noqa: BLE001 - its browser may be gone already
            log.debug("closing a context failed", exc_info=True)

    async def new_page(self, **options: Any) -> tuple[BrowserContext, Page]:
        """A fresh context (``options`` as for `new_context`) with one blank page: a standby one when ready, else
        made now. Nothing has run in it; the caller closes the context."""
        taken = self._take(options)
        filler = self._filler
        if taken is None and options == SESSION_OPTIONS and not self._waiting and filler and not filler.done():
            # the standby page is on its way (begun before this session asked): waiting for it is never slower
            # than making another one, and two pages made at once would only share the CPU
            self._waiting = True
            try:
                await asyncio.shield(filler)
            finally:
                self._waiting = False
            taken = self._take(options)
        if taken is not None:
            self.standby_used += 1
        else:
            context = await self.new_context(**options)
            try:
                taken = context, await context.new_page()
            except BaseException:
                self._close_later(context)
                raise
        self.pages_opened += 1
        return taken

    async def version(self) -> str:
        return (await self._ensure()).version

    async def _safe_close_browser(self) -> None:
        browser, self._browser = self._browser, None
        if browser is not None:
            try:
                await asyncio.wait_for(browser.close(), 10)
            except Exception:  # noqa: BLE001 - a dead browser may fail to close; nothing else to do
                log.debug("browser close failed", exc_info=True)

    async def browser(self) -> Browser:
        """The live shared browser (launched if needed)."""
        return await self._ensure()

    async def close(self) -> None:
        self._stopping = True  # no refill starts while the pool closes
        try:
            filler, self._filler = self._filler, None
            if filler is not None and not filler.done():
                filler.cancel()
                with contextlib.suppress(BaseException):
                    await filler
            spares, self._spares = self._spares, []
            for _, context, _ in spares:
                self._close_later(context)
            if self._closing:
                await asyncio.gather(*self._closing, return_exceptions=True)
            async with self._lock:
                await self._safe_close_browser()
                if self._pw is not None:
                    pw, self._pw = self._pw, None
                    await pw.stop()
                if self._proxy is not None:
                    self._proxy.close()
                    self._proxy = None
        finally:
            self._stopping = False

    async def __aenter__(self) -> BrowserPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
