"""The run state machine: which statuses a run may have and which moves between them are allowed.

::

    queued (accepted) ──► running ──► delivered | failed | stopped
        │                    ▲ │
        │                    └─┘ a new attempt (worker reclaim) keeps it running
        └──► failed | stopped     (gave up before any attempt ran / cancelled before start)

``cancel_requested`` is a flag on the record (and a durable key), not a status: the holder of the run reacts to
it and the run ends ``stopped`` through the one finish (`tier2.store.finish.finish_run`).

The table is data (`TRANSITIONS`); the Lua finish script receives the allowed source statuses from it, so Python
and Redis enforce the same rules. Terminal statuses have no way out: a second finish is a no-op.
"""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

from tier2.events import RunStatus

__all__ = [
    "ACTIVE",
    "IllegalTransition",
    "RunStatus",
    "TERMINAL",
    "TRANSITIONS",
    "TerminalStatus",
    "allowed_from",
    "can_transition",
    "check_transition",
    "is_run_status",
    "is_terminal",
]

TerminalStatus = Literal["delivered", "failed", "stopped"]

#: status -> the statuses it may move to (a status absent from its own set may not be re-entered).
TRANSITIONS: dict[str, frozenset[str]] = {
    "queued": frozenset({"running", "failed", "stopped"}),
    "running": frozenset({"running", "delivered", "failed", "stopped"}),
    "delivered": frozenset(),
    "failed": frozenset(),
    "stopped": frozenset(),
}
TERMINAL: frozenset[str] = frozenset(get_args(TerminalStatus))
ACTIVE: frozenset[str] = frozenset(s for s in TRANSITIONS if s not in TERMINAL)


class IllegalTransition(ValueError):
    """A write tried to move a run between two statuses the state machine does not connect."""


def is_terminal(status: str | None) -> TypeGuard[TerminalStatus]:
    return status in TERMINAL


def is_run_status(value: str | None) -> TypeGuard[RunStatus]:
    return value in TRANSITIONS


def can_transition(current: str | None, new: str) -> bool:
    """Whether a run in ``current`` (None: no status recorded yet, treated as ``queued``) may move to ``new``."""
    return new in TRANSITIONS.get(current or "queued", frozenset())


def check_transition(current: str | None, new: str) -> None:
    """`IllegalTransition` unless `can_transition`."""
    if new not in TRANSITIONS:
        raise IllegalTransition(f"unknown run status {new!r}")
    if not can_transition(current, new):
        raise IllegalTransition(f"a run cannot go from {current or 'queued'!r} to {new!r}")


def allowed_from(new: str) -> frozenset[str]:
    """Every status from which a run may move to ``new`` (what the finish script accepts)."""
    return frozenset(s for s, targets in TRANSITIONS.items() if new in targets)
