"""Progress of a run from its typed events (`tier2.events`): one renderer for ``tier2 generate`` (events of the
in-process run) and the service commands (``tier2 submit``, ``tier2 runs events``: events from the SSE stream).

On a terminal the display is **live**: one status line — phase, step, last tool, elapsed, cost (of the budget when
its cap is known), a bar of the plan's settled nodes — redrawn in place and ticking every half second, with the
notable events (run start, phases, builds and checks, failed tools, gates, the end) printed above it. Anywhere else
(a pipe, a file, CI) it degrades to **plain lines**: the same notable events, one per line, each with its elapsed
time, no control characters.
"""

from __future__ import annotations

import shutil
import threading
import time
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from pydantic import BaseModel, ValidationError

from tier2.events import Tier2Event

__all__ = ["ProgressDisplay", "RunState", "typed_event"]

_CLEAR = "\r\x1b[2K"
_LOUD_TOOLS = ("Build", "RunGame")
_SETTLED = ("verified", "failed", "blocked", "invalidated")
_MODELS: dict[str, type[BaseModel]] = {
    m.model_fields["type"].default: m for m in typing.get_args(typing.get_args(Tier2Event)[0])}


def typed_event(data: Mapping[str, Any]) -> Tier2Event | None:
    """An event as the service streams it (its public view: no project directory, a delivery URL instead of a
    path) as the typed event; None for a type this client does not know or a payload that does not fit."""
    cls = _MODELS.get(str(data.get("type")))
    if cls is None:
        return None
    known = {k: v for k, v in data.items() if k in cls.model_fields}
    for name, info in cls.model_fields.items():  # what the public view leaves out (``project_dir``) is blank
        if name not in known and info.is_required() and info.annotation in (str, "str"):
            known[name] = ""
    try:
        return typing.cast(Tier2Event, cls.model_validate(known))
    except ValidationError:
        return None


@dataclass
class RunState:
    """What the display knows of the run so far."""

    run_id: str = ""
    phase: str = "setup"
    step: int = 0
    tool: str = ""
    tool_state: str = ""
    cost_usd: float = 0.0
    priced: bool = True
    started_at: float | None = None
    last_at: float | None = None
    finished: tuple[str, str] | None = None
    plan: dict[str, str] = field(default_factory=dict)
    gates_failed: int = 0
    gates_passed: int = 0
    #: the writer's task list (`writer_tasks`): task id -> status
    tasks: dict[str, str] = field(default_factory=dict)


class ProgressDisplay:
    """Feed it ``(id, event)`` pairs (`feed`, or `sink` as a run's `EventSink`); close it when the run ended."""

    def __init__(self, out: TextIO, *, live: bool | None = None, budget_usd: float | None = None,
                 t0: float | None = None, clock: Callable[[], float] = time.time, tick_s: float = 0.5) -> None:
        self.out, self.budget_usd, self.clock = out, budget_usd, clock
        self.live = _is_tty(out) if live is None else live
        self.state = RunState(started_at=t0)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self.live and tick_s > 0:
            self._ticker = threading.Thread(target=self._tick, args=(tick_s,), name="tier2-progress", daemon=True)
            self._ticker.start()

    # -- input ---------------------------------------------------------------------------------------------------

    def feed(self, seq: int, event: Tier2Event) -> None:
        with self._lock:
            line = self._apply(event)
            if line is not None:
                self._print(f"[{self._elapsed(event.at):6.1f}s] {line}")
            elif self.live:
                self._status()

    def feed_public(self, seq: int, data: Mapping[str, Any]) -> Tier2Event | None:
        """An event as the service streams it; returns it typed (None when unknown, and then skipped)."""
        event = typed_event(data)
        if event is not None:
            self.feed(seq, event)
        return event

    async def sink(self, seq: int, event: Tier2Event) -> None:
        """`tier2.runs.request.EventSink` of an in-process run."""
        self.feed(seq, event)

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2)
        with self._lock:
            if self.live:
                self.out.write(_CLEAR)
                self.out.flush()

    def __enter__(self) -> ProgressDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- state ---------------------------------------------------------------------------------------------------

    def _apply(self, e: Tier2Event) -> str | None:
        """Update the state; the permanent line the event deserves, if any."""
        s = self.state
        s.run_id = e.run_id or s.run_id
        s.started_at = s.started_at if s.started_at is not None else e.at
        s.last_at = e.at
        if e.type == "run_started":
            return f"run {e.run_id} · project {e.project_dir or e.project_id} · model {e.model_route} ({e.model})"
        if e.type == "attempt_started":
            resumed = f" (resumed after checkpoint {e.resumed_from})" if e.resumed_from else ""
            return f"attempt {e.attempt} on {e.worker or 'a worker'}{resumed}" if e.attempt > 1 or resumed else None
        if e.type == "policy_refused":
            return f"policy edit refused ({e.refused}): {e.reason} — this run uses policy {e.policy}"
        if e.type == "phase_changed":
            s.phase = e.phase
            return f"phase {e.phase}" + (f" — {e.detail}" if e.detail else "")
        if e.type == "model_called":
            s.step = max(s.step, e.step)
            if e.cost_usd is None:
                s.priced = False
            else:
                s.cost_usd += e.cost_usd
            return None
        if e.type == "tool_started":
            s.step, s.tool, s.tool_state = max(s.step, e.step), e.tool, "…"
            loud = self.live or e.tool in _LOUD_TOOLS
            return None if loud else f"{s.phase} · step {e.step} · {e.tool} {e.summary}"
        if e.type == "tool_finished":
            s.tool, s.tool_state = e.tool, e.state
            if e.tool in _LOUD_TOOLS or e.state != "success":
                return f"{s.phase} · step {e.step} · {e.tool} → {e.state}" + (f" · {e.summary}" if e.summary else "")
            return None
        if e.type == "gate_result":
            if e.passed:
                s.gates_passed += 1
            else:
                s.gates_failed += 1
            return f"validate · {'PASS' if e.passed else 'FAIL'} {e.gate_id}: {e.summary}"
        if e.type == "plan_changed":
            s.plan[e.node] = e.status
            return None
        if e.type == "goal_versioned":
            req = e.diff.get("requirements") or {}
            counts = " ".join(f"{sign}{len(req.get(k) or [])}" for sign, k in (("+", "added"), ("~", "changed"),
                                                                               ("-", "removed")))
            return (f"goal v{e.goal_version} ({e.author}): {e.text[:100]} · requirements {counts} · "
                    f"{len(e.diff.get('invalidated') or {})} invalidated · {len(e.diff.get('reused') or [])} reused")
        if e.type == "writer_tasks":
            s.tasks = {t.id: t.status for t in e.tasks}
            now = [t.subject for t in e.tasks if t.status == "in_progress"]
            done = sum(1 for t in e.tasks if t.status == "completed")
            return f"writer · tasks {done}/{len(e.tasks)} done" + (f" · now: {now[0][:80]}" if now else "")
        if e.type == "case_hit" and e.action == "applied":
            return f"library · {e.fixer} for {e.gate} → {'fixed' if e.fixed else 'not fixed'}"
        if e.type == "context_compressed":
            return (f"context · {e.agent} compressed (#{e.seq}): {e.tokens_before} → {e.tokens_after} tokens "
                    f"(budget {e.budget_tokens})")
        if e.type == "companion_called":  # its model calls are not model_called events: its cost counts here
            if e.cost_usd is not None:
                s.cost_usd += e.cost_usd
            elif e.model_calls:
                s.priced = False
            found = f" · {e.findings} finding(s)" if e.agent == "reviewer" and e.state == "answered" else ""
            return f"{e.agent} · {e.state} · {e.trigger[:100]}{found} · {e.model_calls} model call(s)"
        if e.type == "docs_hint":
            return f"docs · {e.tool} result + {', '.join(e.sections)}"
        if e.type == "cancel_requested":
            return f"cancel requested{f' by {e.by}' if e.by else ''}"
        if e.type == "run_finished":
            s.finished = (e.status, e.stop_reason)
            return f"run finished: {e.status} — {e.stop_reason} · {self._cost()}"
        return None

    # -- output --------------------------------------------------------------------------------------------------

    def _elapsed(self, at: float | None = None) -> float:
        s = self.state
        if s.started_at is None:
            return 0.0
        now = at if at is not None else (s.last_at if s.finished or not self.live else self.clock())
        return max(0.0, (now or s.started_at) - s.started_at)

    def _cost(self) -> str:
        s = self.state
        spent = f"${s.cost_usd:.4f}" + ("" if s.priced else " (some calls unpriced)")
        return spent + (f" of ${self.budget_usd:g}" if self.budget_usd else "")

    def status_line(self) -> str:
        """The live line: phase · step · last tool · elapsed · cost [· plan bar]."""
        s = self.state
        parts = [s.phase, f"step {s.step}"]
        if s.tool:
            parts.append(f"{s.tool} {s.tool_state}".strip())
        parts += [f"{self._elapsed():.1f}s", self._cost()]
        if s.plan:
            done = sum(1 for v in s.plan.values() if v in _SETTLED)
            width = 12
            filled = round(width * done / len(s.plan))
            parts.append(f"[{'#' * filled}{'-' * (width - filled)}] {done}/{len(s.plan)} plan")
        if s.tasks:
            parts.append(f"tasks {sum(1 for v in s.tasks.values() if v == 'completed')}/{len(s.tasks)}")
        if s.gates_passed or s.gates_failed:
            parts.append(f"gates {s.gates_passed} pass {s.gates_failed} fail")
        return " · ".join(parts)

    def _status(self) -> None:
        width = shutil.get_terminal_size((100, 24)).columns
        self.out.write(_CLEAR + self.status_line()[: max(10, width - 1)])
        self.out.flush()

    def _print(self, line: str) -> None:
        if self.live:
            self.out.write(_CLEAR + line + "\n")
            self._status()
        else:
            self.out.write(line + "\n")
            self.out.flush()

    def _tick(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            with self._lock:
                if self.state.started_at is not None and self.state.finished is None:
                    self._status()


def _is_tty(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
