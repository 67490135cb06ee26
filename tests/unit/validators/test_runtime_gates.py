"""The L1 runtime gates are pure functions of a PlayTrace: each verdict, pass and fail, without a browser."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tier2.validators.l1.runtime_gates import (
    boots,
    canvas_not_blank,
    frames_advance,
    input_changes_state,
    no_errors,
    state_delta,
)
from tier2.validators.trace import InputProbe, PixelStats, PlayTrace


def good_trace() -> PlayTrace:
    return PlayTrace(
        loaded=True, hook_present=True, booted=True, first_scene="Menu", renderer="webgl", boot_virtual_ms=300,
        frames=[20, 50], pixels=[PixelStats(800, 600, 40, 0.3, "a.png")],
        inputs=[InputProbe("start", "Space", {"scene": "Menu", "elapsed_ms": 1}, {"scene": "Menu", "elapsed_ms": 9},
                           {"scene": "Play", "elapsed_ms": 12}, 2)],
    )


def test_good_trace_passes_every_gate() -> None:
    t = good_trace()
    for gate in (boots, no_errors, frames_advance, canvas_not_blank, input_changes_state):
        result = gate(t)
        assert result.passed, (result.id, result.summary)
        assert result.layer == "L1"


@pytest.mark.parametrize(
    ("change", "gate", "needle"),
    [
        ({"loaded": False}, boots, "did not load"),
        ({"hook_present": False}, boots, "hook missing"),
        ({"booted": False}, boots, "did not reach"),
        ({"errors": ["pageerror: boom"]}, no_errors, "1 error"),
        ({"timed_out": "stopped answering"}, no_errors, "error"),
        ({"frames": [10, 11]}, frames_advance, "stalled: 1 frames in 500 ms"),
        ({"frames": []}, frames_advance, "not sampled"),
        ({"pixels": [PixelStats(800, 600, 1, 0.0, "b.png")]}, canvas_not_blank, "blank"),
        ({"inputs": []}, input_changes_state, "no input"),
    ],
)
def test_each_gate_fails_on_its_defect(change: dict, gate, needle: str) -> None:
    result = gate(replace(good_trace(), **change))
    assert not result.passed
    assert needle in result.summary, result.summary


def test_a_ticking_timer_is_not_a_reaction_to_input() -> None:
    timer_only = InputProbe("buy", "Digit1",
                            before={"money": 10, "elapsed_ms": 0, "hud": {"clock": 1}},
                            idle_after={"money": 10, "elapsed_ms": 300, "hud": {"clock": 2}},
                            after={"money": 10, "elapsed_ms": 600, "hud": {"clock": 3}})
    result = input_changes_state(replace(good_trace(), inputs=[timer_only]))
    assert not result.passed and "input ignored" in result.summary


def test_state_that_drifts_by_itself_does_not_count_as_input() -> None:
    drifting = InputProbe("buy", "Digit1", before={"bob": 1, "money": 5}, idle_after={"bob": 2, "money": 5},
                          after={"bob": 3, "money": 5})
    assert not input_changes_state(replace(good_trace(), inputs=[drifting])).passed


def test_an_object_that_appeared_while_idle_and_goes_on_moving_is_not_a_reaction() -> None:
    ship = {"x": 400, "y": 560}
    spawned = InputProbe("left", "ArrowLeft", before={"objects": {"#1": ship}},
                         idle_after={"objects": {"#1": ship, "#9": {"x": 200, "y": 100}}},  # an enemy's bullet
                         after={"objects": {"#1": ship, "#9": {"x": 200, "y": 130}}}, frames_to_react=1)
    assert not input_changes_state(replace(good_trace(), inputs=[spawned])).passed
    moved = replace(spawned, after={"objects": {"#1": {"x": 380, "y": 560}, "#9": {"x": 200, "y": 130}}})
    result = input_changes_state(replace(good_trace(), inputs=[moved]))
    assert result.passed and result.evidence["inputs"][0]["changed"] == ["objects.#1.x"]


def test_state_delta_reports_nested_paths() -> None:
    assert state_delta({"a": {"b": 1, "c": 2}}, {"a": {"b": 1, "c": 3}, "d": 0}) == {"a.c", "d"}
    assert state_delta({"x": [1]}, {"x": [1]}) == set()


def test_activity_needs_state_drift_or_changing_pictures() -> None:
    from tier2.validators.l1.runtime_gates import activity

    frozen = replace(good_trace(), picture_hashes=["a", "a"],
                     inputs=[InputProbe("k", "Space", {"x": 1}, {"x": 1}, {"x": 2}, 1)])
    assert not activity(frozen).passed
    assert activity(replace(frozen, picture_hashes=["a", "b"])).passed


def test_control_responsiveness_bounds_the_reaction_frames() -> None:
    from tier2.validators.l1.runtime_gates import MAX_REACT_FRAMES, control_responsiveness

    slow = InputProbe("buy", "Digit1", {"m": 1}, {"m": 1}, {"m": 2}, MAX_REACT_FRAMES + 5)
    assert not control_responsiveness(replace(good_trace(), inputs=[slow])).passed
    assert control_responsiveness(good_trace()).passed


def test_latch_split_distinguishes_outcomes() -> None:
    from tier2.validators.l1.runtime_gates import latch_split

    ok = {"idle": "running", "abandon": "abandoned", "win": "won", "lose": "lost"}
    assert latch_split(replace(good_trace(), latch=ok)).passed
    shell = replace(good_trace(), latch={**ok, "idle": "won"})  # ends by itself: an empty shell
    assert not latch_split(shell).passed and "idle play ended 'won'" in latch_split(shell).summary
    assert not latch_split(replace(good_trace(), latch={**ok, "win": "running"})).passed
    assert not latch_split(replace(good_trace(), latch=None)).passed
    assert latch_split(replace(good_trace(), mode="generic", latch=None)).passed  # not applicable
