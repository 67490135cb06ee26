"""The warm browser pool on real Chromium: a standby page plays a game like a fresh one, and a standby page whose
browser or renderer died is never handed out — the pool replaces it."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tier2.browser import BrowserPool, GameSession, find_chromium
from tier2.browser.session import SERVED_ORIGIN
from tier2.settings.loader import REPO_ROOT, load_security
from tier2.toolchain import run_build
from tier2.validators.probe import probe_contract_game
from tier2.validators.runner import read_tables

pytestmark = [pytest.mark.browser, pytest.mark.slow]

URL = SERVED_ORIGIN + "dist/index.html"


@pytest.fixture
async def game(pack, tmp_path: Path) -> Path:
    dest = tmp_path / "game"
    shutil.copytree(pack.template_dir, dest)
    assert (await run_build(pack, dest)).ok
    return dest


@pytest.fixture
async def own_pool() -> AsyncIterator[BrowserPool]:
    """A pool of its own: these tests kill its browser."""
    async with BrowserPool(find_chromium(None, load_security(REPO_ROOT / "config").browser.executables)) as pool:
        yield pool


async def _session_sees_the_game(pool: BrowserPool, game: Path) -> None:
    """A session loads the game with the init scripts (virtual clock, error latch) and the route in place."""
    async with GameSession(pool, URL, serve_root=game, force_canvas=True) as s:
        assert await s.load(15)
        assert await s.evaluate("() => window.__tier2Clock.installed === true && window.__tier2ForceCanvas === true")
        assert await s.evaluate("() => !!window.__TIER2__")
        assert "dist/bundle.js" in s.served
        assert not s.log.errors()


async def test_a_standby_page_plays_the_game_like_a_fresh_one(own_pool: BrowserPool, pack, game: Path,
                                                               tmp_path: Path) -> None:
    own_pool.warm()
    await own_pool.warmed()
    assert own_pool.launches == 1
    trace = await probe_contract_game(own_pool, URL, tmp_path / "out", serve_root=game,
                                      tables=read_tables(game, pack.default_genre.spec.data_tables),
                                      genre=pack.default_genre)
    assert (own_pool.pages_opened, own_pool.standby_used) == (1, 1)
    assert trace.booted and trace.renderer == "canvas" and not trace.errors and not trace.timed_out
    assert trace.latch and trace.latch["win"] == "won"
    own_pool.warm()  # (as the next validation does when it starts)
    await own_pool.warmed()
    await _session_sees_the_game(own_pool, game)
    assert (own_pool.pages_opened, own_pool.standby_used) == (2, 2)


async def test_a_session_waits_for_the_standby_page_on_its_way(own_pool: BrowserPool, game: Path) -> None:
    """Warmed just before two sessions open (a validation of a built site: no build to overlap): the first takes
    the page being made instead of making a third, the second makes its own."""
    own_pool.warm()
    async with GameSession(own_pool, URL, serve_root=game), GameSession(own_pool, URL, serve_root=game):
        assert (own_pool.pages_opened, own_pool.standby_used) == (2, 1)
    assert own_pool.launches == 1
    assert len((await own_pool.browser()).contexts) == 0  # nothing left over: no standby made beside them


async def test_a_dead_browser_in_the_warm_pool_is_replaced(own_pool: BrowserPool, game: Path) -> None:
    own_pool.warm()
    await own_pool.warmed()
    browser = await own_pool.browser()
    gone = asyncio.Event()
    browser.on("disconnected", lambda _b: gone.set())
    cdp = await browser.new_browser_cdp_session()
    with pytest.raises(Exception):  # noqa: B017,PT011 - the crash takes the answer with it
        await cdp.send("Browser.crash")
    await asyncio.wait_for(gone.wait(), 30)
    await _session_sees_the_game(own_pool, game)  # not on the dead standby page: a new browser
    assert own_pool.launches == 2 and own_pool.standby_used == 0
    own_pool.warm()
    await own_pool.warmed()  # ... whose standby page the next session gets
    await _session_sees_the_game(own_pool, game)
    assert own_pool.launches == 2 and own_pool.standby_used == 1


async def test_a_crashed_standby_page_is_dropped(own_pool: BrowserPool, game: Path) -> None:
    own_pool.warm()
    await own_pool.warmed()
    (context,) = (await own_pool.browser()).contexts  # nothing but the standby page is open
    (page,) = context.pages
    crashed = asyncio.Event()
    page.on("crash", lambda _p: crashed.set())
    cdp = await context.new_cdp_session(page)
    with contextlib.suppress(Exception):  # the CDP call may or may not answer before the renderer goes
        await cdp.send("Page.crash")
    await asyncio.wait_for(crashed.wait(), 30)
    await _session_sees_the_game(own_pool, game)
    assert own_pool.launches == 1 and own_pool.standby_used == 0
