"""A short default-renderer (WebGL where available) session: boot, frames, a screenshot, errors.

The long scripted probes run on the Canvas renderer (an order of magnitude cheaper per frame in software);
this smoke run makes sure the game also boots and draws with the renderer real players get.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tier2.browser import BrowserPool, GameSession
from tier2.browser.session import machine_load_factor
from tier2.hostio import ensure_dir
from tier2.packs.engine import EngineAdapter
from tier2.validators.pixels import pixel_stats
from tier2.validators.probing import run_bounded
from tier2.validators.trace import PlayTrace

__all__ = ["smoke_default_renderer", "fold_smoke", "SCREENSHOT"]

#: the game is the hook's (contract mode) or the one the engine adapter's page script found (generic mode)
_STEP_JS = """(ms) => {
  window.__tier2Clock.advance(ms);
  const h = window.__TIER2__, e = window.__tier2Engine;
  return e ? e.info((h && h.game) || null) : {booted: false, scenes: [], frame: null, renderer: null};
}"""
_BOOT_SCENES = {"Boot", "Preload", "Preloader"}
SCREENSHOT = "00-default-renderer.png"


async def _run(s: GameSession, out_dir: Path, result: dict[str, Any], boot_timeout_s: float) -> None:
    if not await s.load(boot_timeout_s):
        return
    info: dict[str, Any] = {}
    # assets load in real time while game time is ours (slower on a loaded machine)
    deadline = time.monotonic() + boot_timeout_s * machine_load_factor()
    stable, last = 0, None
    while time.monotonic() < deadline:
        info = await s.step(_STEP_JS, 100)
        if info["booted"] and set(info["scenes"]) - _BOOT_SCENES:
            break
        stable = stable + 1 if info["scenes"] and info["scenes"] == last else 0
        last = info["scenes"]
        if stable >= 5:  # e.g. a "click to start" boot screen: booted, waiting for the player
            break
        if s.log.page_errors:
            break
        await asyncio.sleep(0.005 if info["scenes"] else 0.05)
    result["booted"] = bool(info.get("booted") and info.get("scenes"))
    result["renderer"] = info.get("renderer")  # the adapter's name for it: canvas, webgl
    if not result["booted"]:
        return
    f0 = info["frame"]
    info = await s.step(_STEP_JS, 250)
    result["frames"] = [f0, info["frame"]]
    path = out_dir / SCREENSHOT
    png = await s.screenshot(path)
    result["pixels"] = pixel_stats(png, str(path))
    result["hash"] = hashlib.sha256(png).hexdigest()[:16]


async def smoke_default_renderer(
    pool: BrowserPool, url: str, out_dir: Path, trace: PlayTrace, serve_root: Path | Sequence[Path] | None = None,
    boot_timeout_s: float = 15.0, total_timeout_s: float = 20.0, engine: EngineAdapter | None = None,
) -> dict[str, Path | None]:
    """Run the smoke session and fold its observations into ``trace`` (errors prefixed with the renderer;
    ``engine``: the adapter that reads the game, None: the configured pack's).
    Returns what the session served: each path asked of the serve roots and the file that answered (None: 404)."""
    ensure_dir(out_dir)  # under a project's .tier2: no planted link followed (tier2.hostio)
    result: dict[str, Any] = {"booted": False}
    async with GameSession(pool, url, serve_root=serve_root, engine=engine) as s:
        timed_out, errors, _ = await run_bounded(s, _run(s, out_dir, result, boot_timeout_s), total_timeout_s,
                                                 what="the default-renderer session")
        blocked = list(s.log.blocked_requests)
    if timed_out:
        result["timed_out"] = timed_out
    fold_smoke(trace, result, errors, blocked)
    return dict(s.served)


def fold_smoke(trace: PlayTrace, result: dict[str, Any], errors: list[str], blocked: list[str]) -> None:
    """Fold a smoke session's result (``pixels`` popped from it), errors and blocked requests into ``trace`` — the
    same way for a session just run and for one reused (`tier2.validators.reuse`)."""
    trace.blocked = blocked + trace.blocked
    label = result.get("renderer") or "default"
    trace.errors = [f"[{label}] {e}" for e in errors] + trace.errors
    if "timed_out" in result:
        trace.errors.insert(0, result["timed_out"])
    pixels = result.pop("pixels", None)
    if pixels is not None:
        trace.pixels.insert(0, pixels)
        trace.screenshots.insert(0, pixels.path)
    trace.default_renderer = result
