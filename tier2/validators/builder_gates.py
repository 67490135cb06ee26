"""The gates an offline table builder holds itself to, in-process and without a browser.

A genre's builder (``genres/<id>/builder.py``) derives its tables from a brief, then keeps the first of a bounded,
deterministic series of candidates that passes what the validator will judge:

* the data gates, run by the very function the validator runs (`genre_data_gates`: ``l1.data_schema`` and the
  genre's ``checks.py``);
* the latch split (``l1.latch_split``) when the genre ships a mirror of its game's rules (a Python port of
  ``template/src/state.js`` with a test that plays it against the real rules in node): the genre probe's own win
  and lose policies are played on the mirror by the gate's own loop (`tier2.validators.latch.plays`, `decide`),
  with the genre's bounds, and the outcomes are judged by the gate's own function (`runtime_gates.latch_split`).

No candidate within bounds passing raises `GatesNotHeld` (its ``failures`` say what failed): a builder never
returns tables the gates fail.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from tier2.errors import Tier2Error
from tier2.packs.genres import Genre, load_genres
from tier2.validators.base import ValidationResult
from tier2.validators.data.pack_checks import genre_data_gates
from tier2.validators.l1.runtime_gates import latch_split
from tier2.validators.latch import IDLE_MS, LatchReport, plays
from tier2.validators.trace import PlayTrace

__all__ = ["GatesNotHeld", "Mirror", "MirrorFactory", "gate_failures", "genre_at", "hold", "latch_gate",
           "mirror_latches"]


class GatesNotHeld(Tier2Error):
    """No candidate tables within the builder's bounds pass the gates (``failures``: those of the first one)."""

    def __init__(self, genre: str, tried: int, failures: list[str]) -> None:
        self.genre, self.tried, self.failures = genre, tried, failures
        super().__init__(f"the {genre} builder found no tables that pass its gates in {tried} candidate(s): "
                         + "; ".join(failures)[:600])


class Mirror(Protocol):
    """A genre's game rules in Python, driven the way the latch play drives the page."""

    def actions(self) -> dict[str, Any]:
        """The game's ``__TIER2__.actions()`` vocabulary for these tables."""

    def start(self) -> dict[str, Any]:
        """A fresh Play (``createState(tables)``): its ``state()`` snapshot (``scene``, ``outcome``, …)."""

    def act(self, name: str, frames: int) -> dict[str, Any]:
        """``name``'s first key held ``frames`` frames, released, one more frame (``wait``: the frames pass)."""

    def advance(self, ms: float) -> dict[str, Any]:
        """``ms`` of game time with no input."""

    def abandon(self) -> dict[str, Any]:
        """Escape in Play."""


MirrorFactory = Callable[[dict[str, Any]], Mirror]


@cache
def genre_at(root: Path) -> Genre:
    """The genre whose folder is ``root`` (``<pack>/genres/<id>``), loaded from its manifest as the pack loads it."""
    root = root.resolve()
    return load_genres(root.parent, root.parent.parent.name)[root.name]


def _play(mirror: Mirror, policy: Any, actions: dict[str, Any], tables: dict[str, Any], limit: int,
          frames: int) -> tuple[str | None, int, str | None]:
    state = mirror.start()
    steps = plays(policy, state, actions, tables, limit, frames)
    try:
        step = next(steps)
        while True:
            state = mirror.act(*step)
            step = steps.send(state)
    except StopIteration as stop:
        n, note = stop.value
    return state.get("outcome"), n, note


def mirror_latches(genre: Genre, tables: dict[str, Any], mirror_of: MirrorFactory) -> LatchReport:
    """`tier2.validators.latch.play_latches` on the mirror: idle, abandon, then the genre probe's win and lose plays,
    each from a fresh Play, within the genre's probe bounds."""
    rep = LatchReport(genre=genre.id)
    mirror = mirror_of(tables)
    actions = mirror.actions()
    mirror.start()
    rep.idle_outcome = mirror.advance(IDLE_MS).get("outcome")
    rep.abandon_outcome = mirror.abandon().get("outcome")
    win, lose = genre.probe_fns()
    bounds = genre.spec.probe
    for what, policy, limit in (("win", win, bounds.max_win_actions), ("lose", lose, bounds.max_lose_actions)):
        outcome, n, note = _play(mirror, policy, actions, tables, limit, bounds.action_frames)
        if note:
            rep.notes.append(f"{what} play: {note}")
        if what == "win":
            rep.win_outcome, rep.win_actions = outcome, n
        else:
            rep.lose_outcome, rep.lose_actions = outcome, n
    return rep


def latch_gate(genre: Genre, tables: dict[str, Any], mirror_of: MirrorFactory) -> ValidationResult:
    """``l1.latch_split`` as the gate judges it, on the mirror's plays."""
    rep = mirror_latches(genre, tables, mirror_of)
    latch = {"idle": rep.idle_outcome, "abandon": rep.abandon_outcome, "win": rep.win_outcome,
             "lose": rep.lose_outcome, "win_actions": rep.win_actions, "lose_actions": rep.lose_actions,
             "notes": rep.notes}
    return latch_split(PlayTrace(mode="contract", latch=latch))


def gate_failures(genre: Genre, tables: dict[str, Any], mirror_of: MirrorFactory | None = None) -> list[str]:
    """``"<gate id>: <summary>"`` of every gate these tables fail (data gates, then the latch split on the mirror
    when there is one); [] when they pass them all."""
    gates = genre_data_gates(genre, tables)
    failed = [f"{g.id}: {g.summary}" for g in gates if not g.passed]
    if mirror_of is not None and not failed:
        try:
            latch = latch_gate(genre, tables, mirror_of)
        except Exception as exc:  # a mirror that cannot play these tables fails them, it never crashes the build
            failed.append(f"l1.latch_split: the mirror could not play the tables ({type(exc).__name__}: {exc})")
        else:
            failed += [] if latch.passed else [f"{latch.id}: {latch.summary}"]
    return failed


def hold(genre: Genre, candidates: Iterable[dict[str, Any]], mirror_of: MirrorFactory | None = None,
         extra: Callable[[dict[str, Any]], list[str]] | None = None) -> dict[str, Any]:
    """The first candidate that passes `gate_failures` (and ``extra``, the builder's own invariants); raises
    `GatesNotHeld` when none does. ``candidates`` is the builder's bounded, deterministic adjustment series (the
    derived tables first)."""
    first: list[str] | None = None
    tried = 0
    for tables in candidates:
        tried += 1
        failed = (extra(tables) if extra else []) or gate_failures(genre, tables, mirror_of)
        if not failed:
            return tables
        first = failed if first is None else first
    raise GatesNotHeld(genre.id, tried, first or ["no candidate tables"])
