"""Building blocks shared by the probes: a wall-clock-bounded session, and one input measurement."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from tier2.browser import GameSession
from tier2.validators.l1.runtime_gates import reaction
from tier2.validators.trace import InputProbe

__all__ = ["run_bounded", "measure_input"]

REACT_FRAMES = 12
SETTLE_MS = 50


async def measure_input(
    s: GameSession, probe: InputProbe, snapshot: Callable[[], Awaitable[Any]], press: Callable[[], Awaitable[None]],
    release: Callable[[], Awaitable[None]], frames_js: str, idle_ms: float,
) -> InputProbe:
    """Snapshot, idle (to learn what changes by itself), press, record a snapshot per frame (one round trip),
    release; ``frames_to_react`` is the first frame whose change is more than the idle drift."""
    probe.before = await snapshot()
    await s.advance(idle_ms)
    probe.idle_after = await snapshot()
    await press()
    frames = await s.evaluate(frames_js, REACT_FRAMES)
    await release()
    probe.frames_to_react = next((i for i, snap in enumerate(frames, start=1)
                                  if reaction(probe.before, probe.idle_after, snap)), None)
    await s.advance(SETTLE_MS)
    probe.after = await snapshot()
    return probe


async def run_bounded(
    s: GameSession, work: Awaitable[None], total_timeout_s: float, what: str = "the page",
) -> tuple[str | None, list[str], list[str]]:
    """Await ``work``; a hang or a crash becomes a reason instead of an exception.

    Returns (timed-out reason or None, errors, blocking dialogs). Errors are the session log plus errors latched
    by the init script when Playwright saw no page error, plus one line per blocking dialog."""
    timed_out = None
    try:
        await asyncio.wait_for(work, total_timeout_s)
    except TimeoutError:
        timed_out = f"{what} stopped answering within {total_timeout_s:.0f}s (infinite loop or hang?)"
    except Exception as exc:  # noqa: BLE001 - a crashed page/browser is an observation, not a bug
        timed_out = f"{what} aborted: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    latched = [] if timed_out else await s.latched_errors()
    dialogs = [] if timed_out else await s.dialogs()
    errors = s.log.errors() + ([] if s.log.page_errors else [f"uncaught: {e}" for e in latched])
    return timed_out, errors + [f"blocking dialog: {d}" for d in dialogs], dialogs
