"""One Chromium (Debian's, never a Playwright download) shared by all validations of a process.

Each validation gets a fresh context. A browser that died is relaunched on the next request; contexts are
always closed, so no renderer processes leak.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
from typing import Any

from playwright.async_api import Browser, BrowserContext, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from tier2.errors import BrowserUnavailable
from tier2.settings.secrets import tool_env

__all__ = ["BrowserPool", "find_chromium", "CHROMIUM_ARGS"]

log = logging.getLogger(__name__)

#: Flags for a closed network and a headless VM (background networking would only produce refused connections).
CHROMIUM_ARGS: tuple[str, ...] = (
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--mute-audio",
    "--autoplay-policy=no-user-gesture-required",
)


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

    def __init__(self, executable: str, extra_args: list[str] | None = None, launch_timeout_s: float = 30.0) -> None:
        self.executable = executable
        self.args = list(CHROMIUM_ARGS) + list(extra_args or [])
        self.launch_timeout_s = launch_timeout_s
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._lock = asyncio.Lock()
        self.launches = 0

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
                self._browser = await self._pw.chromium.launch(
                    executable_path=self.executable, headless=True, args=self.args,
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
        async with self._lock:
            await self._safe_close_browser()
            if self._pw is not None:
                pw, self._pw = self._pw, None
                await pw.stop()

    async def __aenter__(self) -> BrowserPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
