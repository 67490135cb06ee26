"""The run state machine as data: every allowed and refused move."""

from __future__ import annotations

from typing import get_args

import pytest

from tier2.events import TERMINAL_STATUSES, RunStatus
from tier2.store.lifecycle import (
    ACTIVE,
    TERMINAL,
    TRANSITIONS,
    IllegalTransition,
    allowed_from,
    can_transition,
    check_transition,
    is_terminal,
)

ALLOWED = {("queued", "running"), ("queued", "failed"), ("queued", "stopped"), ("running", "running"),
           ("running", "delivered"), ("running", "failed"), ("running", "stopped")}


def test_the_table_covers_every_status_and_matches_the_events() -> None:
    assert set(TRANSITIONS) == set(get_args(RunStatus))
    assert TERMINAL == TERMINAL_STATUSES == {"delivered", "failed", "stopped"}
    assert ACTIVE == {"queued", "running"}


@pytest.mark.parametrize("current", list(get_args(RunStatus)))
@pytest.mark.parametrize("new", list(get_args(RunStatus)))
def test_each_move_is_allowed_exactly_when_the_table_says(current: str, new: str) -> None:
    expected = (current, new) in ALLOWED
    assert can_transition(current, new) is expected
    if expected:
        check_transition(current, new)
    else:
        with pytest.raises(IllegalTransition):
            check_transition(current, new)


def test_terminal_statuses_have_no_way_out() -> None:
    for status in TERMINAL:
        assert is_terminal(status) and TRANSITIONS[status] == frozenset()
    assert not is_terminal("running") and not is_terminal(None)


def test_no_status_yet_counts_as_queued_and_unknown_statuses_are_refused() -> None:
    assert can_transition(None, "running") and not can_transition(None, "delivered")
    with pytest.raises(IllegalTransition, match="unknown run status"):
        check_transition("running", "paused")


def test_allowed_from_is_what_the_finish_script_accepts() -> None:
    assert allowed_from("delivered") == {"running"}
    assert allowed_from("failed") == allowed_from("stopped") == {"queued", "running"}
