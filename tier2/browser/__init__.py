"""Headless Chromium via Playwright: one shared browser, a fresh context per game session."""

from tier2.browser.pool import BrowserPool, find_chromium
from tier2.browser.session import GameSession

__all__ = ["BrowserPool", "GameSession", "find_chromium"]
