"""Building blocks shared by the probes: a wall-clock-bounded session, and one input measurement."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tier2.browser import GameSession
from tier2.browser.session import machine_load_factor
from tier2.validators.l1.runtime_gates import reaction
from tier2.validators.trace import InputProbe, PlayTrace

__all__ = ["run_bounded", "measure_input", "budget_limit", "REFERENCE_FRAME_MS", "MAX_BUDGET_FACTOR"]

REACT_FRAMES = 12
SETTLE_MS = 50


async def measure_input(
    s: GameSession, probe: InputProbe, snapshot: Callable[[], Awaitable[Any]], press: Callable[[], Awaitable[None]],
    release: Callable[[], Awaitable[None]], frames_js: str, idle_ms: float,
) -> InputProbe:
    """Snapshot, idle (to learn what changes by itself), press, record a snapshot per frame (one round trip),
    release; ``frames_to_react`` is the first frame whose change is more than the idle drift, ``transient`` what
    changed in any of those frames (a move that is undone before the state settles still counts)."""
    probe.before = await snapshot()
    await s.advance(idle_ms)
    probe.idle_after = await snapshot()
    await press()
    frames = await s.evaluate(frames_js, REACT_FRAMES)
    await release()
    seen = [reaction(probe.before, probe.idle_after, snap) for snap in frames]
    probe.frames_to_react = next((i for i, changed in enumerate(seen, start=1) if changed), None)
    probe.transient = sorted(set().union(*seen)) if seen else []
    await s.advance(SETTLE_MS)
    probe.after = await snapshot()
    return probe


#: a frame costing this many real ms is "normal"; a slower page gets proportionally more wall time (bounded)
REFERENCE_FRAME_MS = 6.0
MAX_BUDGET_FACTOR = 6.0


def budget_limit(base_s: float, frame_ms: float | None, load: float = 1.0) -> float:
    """The wall-clock limit for a page whose frames cost ``frame_ms`` on a machine at ``load`` (load average per
    CPU, at least 1): the base, scaled by the frame cost over the reference, at most `MAX_BUDGET_FACTOR` times
    the base — that cap itself scaled by the load (a loaded machine stretches every round trip)."""
    factor = min(MAX_BUDGET_FACTOR * max(1.0, load), max(1.0, (frame_ms or 0.0) / REFERENCE_FRAME_MS))
    return base_s * factor


async def _evidence(s: GameSession, last_frames: int, grace_s: float) -> tuple[int, float] | None:
    """(frames, ms per frame) when the page still answers and has run frames since ``last_frames``; else None."""
    try:
        frames, real_ms = await s.frame_cost(timeout_s=grace_s, second_look=False)  # this is a look itself
    except Exception:  # noqa: BLE001 - no answer (a busy loop) or a dead page: not progressing
        return None
    cost = s.frame_ms or real_ms / max(1, frames)  # the session's timed steps include rendering
    return (frames, cost) if frames > last_frames else None


async def run_bounded(
    s: GameSession, work: Awaitable[None], total_timeout_s: float, what: str = "the page",
    trace: PlayTrace | None = None,
) -> tuple[str | None, list[str], list[str]]:
    """Await ``work``; a hang or a crash becomes a reason instead of an exception.

    The budget is set by evidence, not a fixed wall: at ``total_timeout_s`` the page is asked for its frame
    counters; a page that answers and keeps producing frames is slow, not hung, and gets a limit scaled by its
    measured frame cost (`budget_limit`), extended by a base period at each look that finds it still progressing
    (at most `MAX_BUDGET_FACTOR` times the base, times the machine's load per CPU); one that stops answering (or
    stops producing frames) at a look and again at a second look, its grace scaled by the load, is reported hung.
    A single step that does not return within the session's step bound and a second look (`GameSession.evaluate`)
    is a hang too.

    Returns (timed-out reason or None, errors, blocking dialogs). Errors are the session log plus errors latched
    by the init script when Playwright saw no page error, plus one line per blocking dialog. The budget used goes
    into ``trace.budget`` (and a note when it was raised)."""
    timed_out = None
    started = time.monotonic()
    task = asyncio.ensure_future(work)
    limit, last_frames, frame_ms = total_timeout_s, 0, None
    peak_load = machine_load_factor()
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=max(0.0, limit - (time.monotonic() - started)))
            if done:
                task.result()
                break
            evidence = await _evidence(s, last_frames, grace_s=s.step_timeout_s)
            load = max(peak_load, machine_load_factor())
            peak_load = load
            if evidence is None and not task.done():  # a second look, its grace scaled by the machine's load
                evidence = await _evidence(s, last_frames, grace_s=s.step_timeout_s * load)
            if task.done():  # the work ended meanwhile (its own step timed out, or it finished): that decides
                task.result()
                break
            if evidence is None:
                timed_out = (f"{what} stopped answering or producing frames after {time.monotonic() - started:.0f}s "
                             "(infinite loop or hang?)")
                break
            last_frames, frame_ms = evidence
            # a page that answers and has run frames since the last look is progressing: it gets the limit its
            # frame cost earns, and at least one more base period (the round trips of a loaded machine cost wall
            # time the frame cost does not show), never more than the cap
            new_limit = min(total_timeout_s * MAX_BUDGET_FACTOR * load,
                            max(budget_limit(total_timeout_s, frame_ms, load), limit + total_timeout_s))
            if new_limit <= time.monotonic() - started + 0.5:
                timed_out = (f"{what} is slow, not hung: {frame_ms:.0f} ms of real time per game frame; the "
                             f"scripted play did not finish within {new_limit:.0f}s (the limit grows while the page "
                             f"progresses, at most {MAX_BUDGET_FACTOR * load:.0f}x {total_timeout_s:.0f}s at machine "
                             f"load {load:.1f} per CPU)")
                break
            limit = new_limit
    except TimeoutError:
        timed_out = (f"{what} stopped answering: one step took longer than {s.step_timeout_s:.0f}s "
                     "(infinite loop or hang?)")
    except Exception as exc:  # noqa: BLE001 - a crashed page/browser is an observation, not a bug
        timed_out = f"{what} aborted: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
    elapsed = time.monotonic() - started
    if trace is not None:
        trace.budget = {"base_s": total_timeout_s, "limit_s": round(limit, 1), "elapsed_s": round(elapsed, 1),
                        "frame_ms": round(frame_ms, 2) if frame_ms else trace.frame_ms,
                        "raised": limit > total_timeout_s, "machine_load": round(peak_load, 2),
                        "second_looks": getattr(s, "second_looks", 0)}
        if limit > total_timeout_s and not timed_out:
            trace.notes.append(f"{what} is slow, not hung: {frame_ms:.0f} ms per game frame; the time limit was "
                               f"raised from {total_timeout_s:.0f}s to {limit:.0f}s and the play took {elapsed:.0f}s")
    latched = [] if timed_out else await s.latched_errors()
    dialogs = [] if timed_out else await s.dialogs()
    errors = s.log.errors() + ([] if s.log.page_errors else [f"uncaught: {e}" for e in latched])
    return timed_out, errors + [f"blocking dialog: {d}" for d in dialogs], dialogs
