"""The CLI's progress display (fed typed events, as `tier2 generate` and `tier2 runs events` feed it) and the SSE
frame parser."""

from __future__ import annotations

import io

from tier2.client.display import ProgressDisplay, typed_event
from tier2.client.sse import parse_frames
from tier2.events import (
    GateResult,
    ModelCalled,
    PhaseChanged,
    PlanChanged,
    PolicyRefused,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolStarted,
)

T0 = 1_700_000_000.0


def _run(display: ProgressDisplay) -> None:
    events = [
        RunStarted(run_id="r-1", brief="b", project_id="p-1", project_dir="", model_route="offline",
                   model="tier2-offline-policy-v1", pack="phaser@0.1.0", at=T0),
        PolicyRefused(run_id="r-1", policy="aaaa", refused="bbbb", reason="breakers.steps_per_run = 9 is above", at=T0),
        PlanChanged(run_id="r-1", node="design.brief", kind="design", status="verified", at=T0 + 0.5),
        PlanChanged(run_id="r-1", node="phase.implement", kind="phase", status="running", at=T0 + 0.6),
        PhaseChanged(run_id="r-1", phase="implement", detail="writer turn 1", at=T0 + 1),
        ModelCalled(run_id="r-1", step=1, model="m", input_tokens=100, output_tokens=20, cost_usd=0.0012,
                    at=T0 + 1.5),
        ToolStarted(run_id="r-1", step=1, tool="Write", call_id="c1", summary="data/items.json", at=T0 + 2),
        ToolFinished(run_id="r-1", step=1, tool="Write", call_id="c1", state="success", at=T0 + 2.1),
        ToolStarted(run_id="r-1", step=2, tool="Build", call_id="c2", at=T0 + 3),
        ToolFinished(run_id="r-1", step=2, tool="Build", call_id="c2", state="success", summary="BUILD OK",
                     at=T0 + 4),
        GateResult(run_id="r-1", gate_id="l1.boots", layer="L1", passed=True, summary="booted", at=T0 + 5),
        RunFinished(run_id="r-1", status="delivered", stop_reason="all L1 gates pass", at=T0 + 6.25),
    ]
    for seq, event in enumerate(events, 1):
        display.feed(seq, event)


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()  # not a tty: plain lines
    with ProgressDisplay(out) as display:
        assert display.live is False
        _run(display)
    text = out.getvalue()
    assert "\x1b" not in text and "\r" not in text
    lines = text.splitlines()
    assert lines[0] == "[   0.0s] run r-1 · project p-1 · model offline (tier2-offline-policy-v1)"
    assert "policy edit refused (bbbb)" in lines[1] and "this run uses policy aaaa" in lines[1]
    assert "[   1.0s] phase implement — writer turn 1" in lines
    assert "[   2.0s] implement · step 1 · Write data/items.json" in lines   # a plain tool start
    assert "[   4.0s] implement · step 2 · Build → success · BUILD OK" in lines
    assert "[   5.0s] validate · PASS l1.boots: booted" in lines
    assert lines[-1] == "[   6.2s] run finished: delivered — all L1 gates pass · $0.0012"
    assert not any("Write → success" in line for line in lines)             # quiet successes stay quiet


def test_live_status_line_on_a_terminal() -> None:
    out = io.StringIO()
    display = ProgressDisplay(out, live=True, budget_usd=0.5, tick_s=0)
    _run(display)
    status = display.status_line()
    display.close()
    text = out.getvalue()
    assert "\r\x1b[2K" in text                                                 # redrawn in place
    assert status.startswith("implement · step 2 · Build success · 6.2s · $0.0012 of $0.5")
    assert "[######------] 1/2 plan" in status and "gates 1 pass 0 fail" in status
    assert "implement · step 1 · Write data/items.json" not in text           # tool starts only move the line
    assert "run finished: delivered" in text and text.endswith("\r\x1b[2K")   # the status line is cleared at the end


def test_events_as_the_service_streams_them_become_typed_events() -> None:
    started = typed_event({"type": "run_started", "run_id": "r-1", "brief": "b", "project_id": "p",
                           "model_route": "offline", "model": "m", "pack": "phaser@0.1.0", "at": T0})
    assert started is not None and started.type == "run_started" and started.project_dir == ""
    finished = typed_event({"type": "run_finished", "run_id": "r-1", "status": "stopped", "stop_reason": "x",
                            "delivery": "/v1/runs/r-1/delivery", "at": T0})
    assert finished is not None and finished.type == "run_finished" and finished.delivery_path is None
    assert typed_event({"type": "from_the_future", "run_id": "r-1"}) is None
    assert typed_event({"type": "gate_result", "run_id": "r-1"}) is None      # does not fit: skipped, not a crash


def test_sse_frames_follow_the_spec() -> None:
    lines = ["retry: 500", "", ": keep-alive", "", "id: 1", "event: phase_changed", 'data: {"a":', "data: 1}", "",
             "id: 2\r", "data: second\r", "\r", "id: 3", "event: run_finished", "data: cut mid-fr"]
    frames = list(parse_frames(lines))
    assert [(f.id, f.event, f.data) for f in frames] == [
        (None, "message", ""), ("1", "phase_changed", '{"a":\n1}'), ("2", "message", "second")]
    assert frames[0].retry_ms == 500                                           # the unterminated frame 3 is dropped


def test_companion_calls_are_shown_and_their_cost_counted() -> None:
    from tier2.events import CompanionCalled

    out = io.StringIO()
    with ProgressDisplay(out) as display:
        display.feed(1, RunStarted(run_id="r-1", brief="b", project_id="p-1", project_dir="", model_route="offline",
                                   model="m", pack="phaser@0.1.0", at=T0))
        display.feed(2, ModelCalled(run_id="r-1", step=1, model="m", input_tokens=1, output_tokens=1,
                                    cost_usd=0.001, at=T0 + 1))
        display.feed(3, CompanionCalled(run_id="r-1", agent="explorer", trigger="where is Play defined",
                                        state="answered", model_calls=2, cost_usd=0.0005, at=T0 + 2))
        display.feed(4, CompanionCalled(run_id="r-1", agent="reviewer", trigger="failed_check", state="answered",
                                        model_calls=2, cost_usd=0.0005, findings=3, at=T0 + 3))
        display.feed(5, RunFinished(run_id="r-1", status="delivered", stop_reason="ok", at=T0 + 4))
    lines = out.getvalue().splitlines()
    assert "[   2.0s] explorer · answered · where is Play defined · 2 model call(s)" in lines
    assert "[   3.0s] reviewer · answered · failed_check · 3 finding(s) · 2 model call(s)" in lines
    assert lines[-1].endswith("$0.0020")  # the companions' cost is the run's cost too
