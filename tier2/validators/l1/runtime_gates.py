"""L1 runtime gates: pure functions of a `PlayTrace` (no browser here, so each is unit-testable)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tier2.validators.base import Finding, ValidationResult
from tier2.validators.trace import InputProbe, PixelStats, PlayTrace

__all__ = ["RUNTIME_GATES", "boots", "no_errors", "frames_advance", "canvas_not_blank", "input_changes_state",
           "state_delta"]

MIN_FRAME_DELTA = 10
MIN_COLORS = 3
MIN_NON_BACKGROUND = 0.002
#: State keys that are clocks, not game state: their change alone is not a reaction to input.
TIME_KEYS = frozenset({"elapsed_ms", "time", "time_ms", "frame", "frames", "clock", "now", "remaining_ms"})


def _fail(gate: str, summary: str, findings: list[str], **evidence: Any) -> ValidationResult:
    return ValidationResult(id=gate, layer="L1", passed=False, summary=summary,
                            findings=[Finding(message=f) for f in findings], evidence=evidence)


def _ok(gate: str, summary: str, **evidence: Any) -> ValidationResult:
    return ValidationResult(id=gate, layer="L1", passed=True, summary=summary, evidence=evidence)


def boots(t: PlayTrace) -> ValidationResult:
    gate = "l1.boots"
    if not t.loaded:
        return _fail(gate, "page did not load", t.errors[:5])
    if t.timed_out and not t.booted:
        return _fail(gate, "page stopped answering during boot", [t.timed_out])
    if not t.hook_present and t.mode == "contract":
        return _fail(gate, "window.__TIER2__ test hook missing", t.errors[:5])
    if not t.booted:
        return _fail(gate, f"game did not reach its first scene in {t.boot_virtual_ms:.0f} ms of game time",
                     t.errors[:5] or ["game.isBooted stayed false or the scene stayed in Boot/Preload"])
    return _ok(gate, f"booted into {t.first_scene!r} ({t.renderer})", first_scene=t.first_scene,
               renderer=t.renderer, boot_virtual_ms=t.boot_virtual_ms)


def no_errors(t: PlayTrace) -> ValidationResult:
    gate = "l1.no_errors"
    problems = list(t.errors) + ([t.timed_out] if t.timed_out else [])
    if problems:
        return _fail(gate, f"{len(problems)} error(s) during play", problems[:10], errors=problems[:20])
    return _ok(gate, "no uncaught errors, console errors, failed or blocked requests")


def frames_advance(t: PlayTrace) -> ValidationResult:
    gate = "l1.frames_advance"
    if len(t.frames) < 2:
        return _fail(gate, "frame counter not sampled (game did not boot)", [])
    delta = t.frames[-1] - t.frames[0]
    if delta < MIN_FRAME_DELTA:
        return _fail(gate, f"game loop advanced {delta} frames in 500 ms of game time", [], frames=t.frames)
    return _ok(gate, f"game loop advanced {delta} frames in 500 ms", frames=t.frames)


def canvas_not_blank(t: PlayTrace) -> ValidationResult:
    gate = "l1.canvas_not_blank"
    if not t.pixels:
        return _fail(gate, "no screenshot taken (game did not boot)", [])
    def is_blank(p: PixelStats) -> bool:
        return p.colors < MIN_COLORS or p.non_background_fraction < MIN_NON_BACKGROUND

    ev = {"screenshots": [p.path for p in t.pixels],
          "stats": [{"colors": p.colors, "non_background": p.non_background_fraction} for p in t.pixels]}
    last = t.pixels[-1]
    if is_blank(last):  # the game as played must show something; a blank title/loading screen alone is tolerated
        return _fail(gate, "the screen is blank during play",
                     [f"{last.path}: {last.colors} colours, {last.non_background_fraction:.2%} non-background"], **ev)
    blank_earlier = [p.path for p in t.pixels[:-1] if is_blank(p)]
    if blank_earlier:
        ev["blank_before_play"] = blank_earlier
    return _ok(gate, f"{len(t.pixels)} screenshots, the played screen shows content", **ev)


def state_delta(before: Any, after: Any, prefix: str = "") -> set[str]:
    """Dotted paths whose values differ between two JSON snapshots."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: set[str] = set()
        for key in set(before) | set(after):
            out |= state_delta(before.get(key), after.get(key), f"{prefix}{key}.")
        return out
    return set() if before == after else {prefix.rstrip(".") or "<root>"}


def _input_reaction(p: InputProbe) -> set[str]:
    drift = state_delta(p.before, p.idle_after)
    changed = state_delta(p.idle_after, p.after)
    return {k for k in changed - drift if k.split(".")[-1] not in TIME_KEYS}


def input_changes_state(t: PlayTrace) -> ValidationResult:
    gate = "l1.input_changes_state"
    if not t.inputs:
        return _fail(gate, "no input was scripted (game did not boot)", [])
    reactions = {p.label: sorted(_input_reaction(p)) for p in t.inputs}
    dead = [p for p in t.inputs if not reactions[p.label]]
    ev = {"inputs": [{"label": p.label, "key": p.key, "changed": reactions[p.label],
                      "frames_to_react": p.frames_to_react} for p in t.inputs]}
    if dead:
        return _fail(gate, "input ignored: " + ", ".join(f"{p.label} ({p.key})" for p in dead),
                     [f"{p.key}: state unchanged apart from clocks" for p in dead] + t.notes, **ev)
    return _ok(gate, "; ".join(f"{k} → {', '.join(v[:4])}" for k, v in reactions.items()), **ev)


RUNTIME_GATES: tuple[Callable[[PlayTrace], ValidationResult], ...] = (
    boots, no_errors, frames_advance, canvas_not_blank, input_changes_state,
)
