"""What a phase is and what it may do with its run.

A phase takes a `PhaseInput` and returns a `Verdict`: a terminal status when it decided the run (delivered,
failed, stopped), or ``status=None`` to hand over to the next phase. It drives the run through `RunControl` — the
steps the session offers (announce a phase, a writer turn, a validation, the add-ons' turns) — and never touches
the session's state itself. The session implements `RunControl`; phases import this module, never the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agentscope.agent import Agent
from agentscope.message import Msg

from tier2.events import Phase as PhaseName
from tier2.runs.loop.context import Check, DesignOutcome, RunContext, RunView, Turn
from tier2.store.lifecycle import TerminalStatus
from tier2.validators import ValidationReport

__all__ = ["Phase", "PhaseInput", "RunControl", "Verdict"]


@dataclass(frozen=True)
class Verdict:
    """Where a phase (or the whole run) ended: ``status`` None = not decided, go on with the next phase."""

    status: TerminalStatus | None
    reason: str = ""
    report: ValidationReport | None = None
    report_path: Path | None = None


@dataclass(frozen=True)
class PhaseInput:
    brief: str
    project: Path
    #: the previous phase's verdict (None for the first phase)
    previous: Verdict | None = None


class RunControl(Protocol):
    """The steps a phase may take in its run (`tier2.runs.loop.session.RunSession` implements them)."""

    @property
    def ctx(self) -> RunContext: ...

    @property
    def view(self) -> RunView: ...

    async def phase(self, phase: PhaseName, detail: str) -> None:
        """Announce a phase (record, event, trace span)."""

    async def update(self, **fields: Any) -> None:
        """Write fields of the run's record."""

    def mark(self, name: str) -> None:
        """A timing mark (``agent_done``...) for the delivery's timings."""

    def begin_round(self, round_no: int) -> None:
        """The implement phase's fix round (stored with every checkpoint)."""

    async def agent_turn(self, agent: Agent, role: str, message: Msg | None) -> Turn:
        """One turn of a run agent (a designer's), its events streamed as the run's under ``role``."""

    async def writer_turn(self, message: Msg | None) -> Turn:
        """One writer turn (``None`` continues an interrupted one)."""

    def last_turn(self) -> Turn:
        """The turn a previous attempt completed before it died."""

    async def validate(self) -> Check:
        """The L1 verdict on the project as it is now."""

    async def before_writer(self) -> None:
        """The add-ons' look at the project before the writer's first turn (the case library's baseline)."""

    async def after_failing_check(self, check: Check) -> tuple[Check, str]:
        """The add-ons' turn after a failing validation (the case library's fixers): the last check and a note
        for the writer."""

    async def review(self, report: ValidationReport) -> str:
        """The reviewer's advice on the turn just validated, as text for the writer (empty: none)."""

    def designed(self, outcome: DesignOutcome) -> None:
        """The design phase's outcome: L2 judges the build against it from now on."""

    async def writer_tasks(self, reopen: list[str] | None = None) -> str:
        """Give the writer its tasks — the plan's task nodes not verified, or ``reopen`` those again — in its
        state; the ``<tasks>`` block for its message (empty: no task, or no design)."""

    async def reconcile_tasks(self, report: ValidationReport) -> None:
        """Close the writer's tasks the evidence of ``report`` completed (a ticked task verifies nothing)."""

    async def record_plan(self, end: dict[str, Any] | None = None, metrics: dict[str, Any] | None = None) -> None:
        """Store the plan as it is now as a goal/plan version of the project (`tier2.store.plans`)."""

    async def replan(self, report: ValidationReport) -> list[str]:
        """Evidence: the failing gates of ``report`` invalidate the nodes that produced what they check; the
        writer tasks to reopen."""


class Phase(Protocol):
    name: str

    async def run(self, run: RunControl, inp: PhaseInput) -> Verdict: ...
