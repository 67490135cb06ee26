"""The phases a run session walks, in order (`default_phases`: ``[DesignPhase(), ImplementPhase()]``).

A phase takes a `PhaseInput` and returns a `Verdict`: a terminal status when it decided the run (delivered,
failed), or ``status=None`` to hand over to the next phase. A design phase, say, goes in front of
``ImplementPhase`` in the list without touching it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agentscope.message import Msg, UserMsg

from tier2.packs import Pack
from tier2.prompts import render_prompt
from tier2.runs.library import library_round
from tier2.store.lifecycle import TerminalStatus
from tier2.validators import ValidationReport

if TYPE_CHECKING:
    from tier2.runs.session import RunSession

__all__ = ["ImplementPhase", "Phase", "PhaseInput", "Verdict", "default_phases"]


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


class Phase(Protocol):
    name: str

    async def run(self, session: RunSession, inp: PhaseInput) -> Verdict: ...


def run_request(pack: Pack, inp: PhaseInput) -> str:
    """The writer's task: the brief, and the pack genre the project holds (after the design chose it)."""
    genre = pack.genre_of(inp.project)
    spec = inp.project / "design" / "spec.json"
    return render_prompt(
        "run_request", brief=inp.brief, project=inp.project, pack=pack.ref, genre=genre.id,
        genre_title=genre.spec.title, genre_summary=genre.spec.summary, tables=", ".join(genre.spec.data_tables),
        behaviours=", ".join(genre.spec.behaviours),
        design_note=("The design is in docs/design/ and design/spec.json: every requirement there is checked by a "
                     "gate." if spec.is_file() else ""))


def _final_text(msg: Msg | None) -> str:
    return (msg.get_text_content() or "").strip() if msg is not None else ""


class ImplementPhase:
    """The writer builds the game; after each writer turn the session validates it; failing gates go back to the
    writer as a fix round, up to ``writer.max_fix_rounds``. A resumed attempt continues where its checkpoint was:
    mid turn (continue the turn) or after a turn (validate what it left)."""

    name = "implement"

    async def run(self, session: RunSession, inp: PhaseInput) -> Verdict:
        policy = session.policy
        await session.phase("implement", f"writer {session.route_name}")
        message: Msg = UserMsg("user", run_request(session.rt.pack, inp))
        resume = session.req.resume
        pending = resume.stage if resume else ""
        verdict = Verdict("failed", "the writer never ran")
        if session.library is not None:
            await session.library.baseline()
        for round_no in range(resume.round if resume else 0, policy.writer.max_fix_rounds + 1):
            session.round = round_no
            if pending == "turn_done":  # the turn ended before the crash: validate what it left
                turn = session.last_turn()
            else:  # None continues the interrupted turn from its last completed step
                turn = await session.writer_turn(None if pending else message)
            pending = ""
            said = _final_text(turn.final)
            session.mark("agent_done")
            await session.phase("validate", f"round {round_no + 1}")
            check = await session.validate()
            known = ""
            if not check.report.passed:  # the case library's turn first: a verified fix needs no model call
                check, known = await library_round(session, check)
            # the independent reviewer (policy): findings are advice for the next fix round, never the verdict
            review = await session.companions.review(check.report) if session.companions is not None else None
            if check.report.passed:
                return Verdict("delivered", "all L1 gates passed", check.report, check.report_path)
            if said.startswith("STOP:"):
                return Verdict("failed", "gates failing: " + _failing(check.report) + "; writer stopped: "
                               + said[5:].strip()[:1000], check.report, check.report_path)
            reason = "gates still failing: " + _failing(check.report)
            if turn.exceeded:
                reason = f"writer hit max_iters={policy.writer.max_iters}; " + reason
            verdict = Verdict("failed", reason, check.report, check.report_path)
            message = UserMsg("user", render_prompt("fix_round", feedback=check.report.feedback(),
                                                    known_fixes=("\n\n" + known) if known else "",
                                                    review=review.for_writer() if review is not None else ""))
            await session.phase("implement", f"fix round {round_no + 1}")
        return verdict


def default_phases() -> list[Phase]:
    from tier2.runs.design_phase import DesignPhase  # imports this module (Verdict, PhaseInput)

    return [DesignPhase(), ImplementPhase()]


def _failing(report: ValidationReport) -> str:
    """The blocking gates by id; an L2 gate with its summary (it names the design mismatch)."""
    return ", ".join(g.id if g.layer == "L1" else f"{g.id} ({g.summary[:300]})" for g in report.failures)
