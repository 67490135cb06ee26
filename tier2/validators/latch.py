"""Latch split (contract mode): scripted plays must end the game the right way, and the report tells
won / lost / abandoned apart.

In one page session, after the basic probes: an idle stretch must not end the game (an empty shell that just
ends fails); Escape must abandon; the genre probe the pack contributes (`tier2.packs.Genre.probe_fns`) must win
the game by playing and must lose it by playing — through real key presses of the game's own action vocabulary
(``__TIER2__.actions()``), reading only state snapshots and the project's tables, never the game's code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from tier2.browser import GameSession
from tier2.packs import Genre
from tier2.packs.genres import ProbePolicy

__all__ = ["FRAME_MS", "IDLE_MS", "LatchReport", "PlaySteps", "Policy", "decide", "play_latches", "plays"]

_HOOK = "window.__TIER2__"
_STEP = f"(ms) => {{ window.__tier2Clock.advance(ms); return JSON.parse(JSON.stringify({_HOOK}.state())); }}"
IDLE_MS = 2000
FRAME_MS = 1000 / 60
MAX_FRAMES_PER_ACTION = 600

#: a genre probe's decision function (the pack's type: `tier2.packs.genres.ProbePolicy`)
Policy = ProbePolicy


@dataclass
class LatchReport:
    idle_outcome: str | None = None
    abandon_outcome: str | None = None
    win_outcome: str | None = None
    win_actions: int = 0
    lose_outcome: str | None = None
    lose_actions: int = 0
    genre: str | None = None
    #: the numbers of the state when the win play started and when it ended (L2 play_event predicates)
    win_start: dict[str, float] = field(default_factory=dict)
    win_end: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def numbers(state: dict[str, Any]) -> dict[str, float]:
    """The top-level numbers of a snapshot (a list counts its length)."""
    out: dict[str, float] = {}
    for k, v in state.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = float(v)
        elif isinstance(v, list):
            out[k] = float(len(v))
    return dict(list(out.items())[:40])


def decide(policy: Policy, state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any],
           default_frames: int) -> tuple[str, int] | str:
    """The policy's next ``(action, frames)``, or a note (str) saying why the play stops."""
    try:
        raw = policy(state, actions, tables)
    except Exception as exc:  # a pack bug must not take the validation down: it is reported as a failed play
        return f"the genre probe raised {type(exc).__name__}: {exc}"
    if raw is None:
        return "the genre probe gave up (no action for this state)"
    name, frames = (raw, default_frames) if isinstance(raw, str) else (raw[0], raw[1])
    if not isinstance(name, str) or not isinstance(frames, int) or isinstance(frames, bool):
        return f"the genre probe returned {raw!r}: want an action name or (name, frames)"
    if name != "wait" and name not in actions:
        return f"the genre probe chose {name!r}, which the game's actions() does not offer"
    return name, max(1, min(frames, MAX_FRAMES_PER_ACTION))


async def _step(s: GameSession, ms: float) -> dict[str, Any]:
    """Advance the virtual clock ``ms`` and read the hook's state (a JSON object)."""
    state: dict[str, Any] = await s.evaluate(_STEP, ms)
    return state


async def _act(s: GameSession, actions: dict[str, Any], name: str, frames: int) -> dict[str, Any]:
    if name == "wait":
        return await _step(s, frames * FRAME_MS)
    key = str(actions[name]["keys"][0])
    await s.p.keyboard.down(key)
    await _step(s, frames * FRAME_MS)
    await s.p.keyboard.up(key)
    return await _step(s, FRAME_MS)


async def _press(s: GameSession, key: str, frames: int = 2) -> dict[str, Any]:
    await s.p.keyboard.press(key)
    return await _step(s, frames * FRAME_MS)


async def _to_play(s: GameSession, start: str) -> dict[str, Any]:
    state = await _step(s, 100)
    for _ in range(6):
        if state.get("scene") == "Play" and state.get("outcome") == "running":
            return state
        state = await _press(s, start, frames=6)
    return state


#: after these many actions of the win play, the probe's observer (the asset report) looks at the screen
OBSERVE_AT = frozenset({5, 20, 60, 150})


#: what `plays` yields: the next ``(action, frames)`` to play; what it is sent back: the state after it
PlaySteps = Generator[tuple[str, int], dict[str, Any], tuple[int, str | None]]


def plays(policy: Policy, state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any], limit: int,
          frames: int) -> PlaySteps:
    """One scripted play as a generator: yields each ``(action, frames)`` the policy decides and is sent the state
    after it, until the game is no longer running, ``limit`` actions were played or the policy stops; returns
    ``(actions played, the note saying why it stopped early or None)``. The browser play (`play_latches`) and
    the offline builders' mirror plays (`tier2.validators.builder_gates`) both drive this one loop."""
    n = 0
    while n < limit and state.get("outcome") == "running":
        step = decide(policy, state, actions, tables, frames)
        if isinstance(step, str):
            return n, step
        n += 1
        state = yield step
    return n, None


async def _play(s: GameSession, policy: Policy, state: dict[str, Any], actions: dict[str, Any],
                tables: dict[str, Any], limit: int, frames: int, rep: LatchReport, what: str,
                observe: Callable[[str], Awaitable[None]] | None = None) -> tuple[str | None, int]:
    if what == "win":
        rep.win_start = numbers(state)
    steps = plays(policy, state, actions, tables, limit, frames)
    done = 0
    try:
        step = next(steps)
        while True:
            state = await _act(s, actions, *step)
            done += 1
            if observe is not None and what == "win" and done in OBSERVE_AT and state.get("outcome") == "running":
                await observe(f"win play, action {done}")
            step = steps.send(state)
    except StopIteration as stop:
        n, note = stop.value
    if note:
        rep.notes.append(f"{what} play: {note}")
    if what == "win":
        rep.win_end = numbers(state)
    return state.get("outcome"), n


def _key(actions: dict[str, Any], name: str, default: str) -> str:
    keys = (actions.get(name) or {}).get("keys") or [default]
    return str(keys[0])


async def play_latches(s: GameSession, actions: dict[str, Any], genre: Genre | None,
                       tables: dict[str, Any] | None,
                       observe: Callable[[str], Awaitable[None]] | None = None) -> LatchReport:
    """Idle, abandon, then the genre probe's win and lose plays, each from a fresh Play. ``observe(screen)`` is
    called a few times during the win play (`OBSERVE_AT`), while it is still running."""
    rep = LatchReport(genre=genre.id if genre else None)
    start, abandon = _key(actions, "start", "Space"), _key(actions, "abandon", "Escape")
    state = await _to_play(s, start)
    rep.idle_outcome = (await _step(s, IDLE_MS)).get("outcome")
    rep.abandon_outcome = (await _press(s, abandon, frames=4)).get("outcome")
    if genre is None:
        rep.notes.append("win/lose plays skipped: the game's genre is unknown to the pack")
        return rep
    if tables is None:
        rep.notes.append("win/lose plays skipped: no tables to plan with")
        return rep
    win, lose = genre.probe_fns()
    bounds = genre.spec.probe
    state = await _to_play(s, start)
    rep.win_outcome, rep.win_actions = await _play(s, win, state, actions, tables, bounds.max_win_actions,
                                                   bounds.action_frames, rep, "win", observe)
    state = await _to_play(s, start)
    rep.lose_outcome, rep.lose_actions = await _play(s, lose, state, actions, tables, bounds.max_lose_actions,
                                                     bounds.action_frames, rep, "lose")
    return rep
