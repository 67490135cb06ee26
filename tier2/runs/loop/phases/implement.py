"""The implement phase: the writer builds the game, the session validates each turn, failing gates go back as fix
rounds (`ImplementPhase`). Its task message is `run_request`."""

from __future__ import annotations

from agentscope.message import Msg, UserMsg

from tier2.packs import Pack
from tier2.prompts import render_prompt
from tier2.runs.loop.context import DesignOutcome
from tier2.runs.loop.phases.base import PhaseInput, RunControl, Verdict
from tier2.runs.loop.turns import text_of
from tier2.validators import ValidationReport

__all__ = ["ImplementPhase", "PhaseInput", "Verdict", "run_request"]


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


class ImplementPhase:
    """The writer builds the game, its work given as tasks (the plan's task nodes not verified: on a follow-up,
    only what the change invalidated); after each writer turn the session validates it; failing gates invalidate
    the nodes that produced what they check and go back to the writer as a fix round with those tasks reopened,
    up to ``writer.max_fix_rounds``: a turn that ends with tasks the evidence did not complete is not finished.
    A resumed attempt continues where its checkpoint was:
    mid turn (continue the turn) or after a turn (validate what it left)."""

    name = "implement"

    async def run(self, run: RunControl, inp: PhaseInput) -> Verdict:
        ctx = run.ctx
        policy = ctx.policy
        await run.phase("implement", f"writer {ctx.writer.route_name}")
        resume = ctx.req.resume
        tasks = await run.writer_tasks() if resume is None else ""  # a resumed writer keeps its tasks
        design = run.view.design  # the writer works from the whole goal (every version), not the last words
        goal = PhaseInput(brief=design.goal, project=inp.project, previous=inp.previous) if design else inp
        message: Msg = UserMsg("user", run_request(ctx.pack, goal) + ("\n" + tasks if tasks else ""))
        pending = resume.stage if resume else ""
        verdict = Verdict("failed", "the writer never ran")
        if resume is None and not tasks and _build_reusable(design):
            # nothing the writer does was invalidated and the build it made still has its inputs: no writer turn,
            # no model call — L1 (and every requirement) is judged again on it all the same
            await run.phase("validate", "no task invalidated: the verified build, validated again")
            check = await run.validate()
            await run.reconcile_tasks(check.report)
            if check.report.passed:
                return Verdict("delivered", "all L1 gates passed (the verified build, nothing to redo)",
                               check.report, check.report_path)
            reopened = await run.replan(check.report)  # it no longer passes: the evidence says what to redo
            tasks = await run.writer_tasks(reopen=reopened) if reopened else ""
            message = UserMsg("user", run_request(ctx.pack, goal) + ("\n" + tasks if tasks else ""))
        await run.before_writer()
        for round_no in range(resume.round if resume else 0, policy.writer.max_fix_rounds + 1):
            run.begin_round(round_no)
            if pending == "turn_done":  # the turn ended before the crash: validate what it left
                turn = run.last_turn()
            else:  # None continues the interrupted turn from its last completed step
                turn = await run.writer_turn(None if pending else message)
            pending = ""
            said = text_of(turn.final)
            run.mark("agent_done")
            await run.phase("validate", f"round {round_no + 1}")
            check = await run.validate()
            known = ""
            if not check.report.passed:  # the case library's turn first: a verified fix needs no model call
                check, known = await run.after_failing_check(check)
            # the independent reviewer (policy): findings are advice for the next fix round, never the verdict
            review = await run.review(check.report)
            await run.reconcile_tasks(check.report)  # the evidence closes tasks, never the writer's tick
            if check.report.passed:
                return Verdict("delivered", "all L1 gates passed", check.report, check.report_path)
            if said.startswith("STOP:"):
                return Verdict("failed", "gates failing: " + _failing(check.report) + "; writer stopped: "
                               + said[5:].strip()[:1000], check.report, check.report_path)
            reason = "gates still failing: " + _failing(check.report)
            if turn.exceeded:
                reason = f"writer hit max_iters={policy.writer.max_iters}; " + reason
            verdict = Verdict("failed", reason, check.report, check.report_path)
            reopened = await run.replan(check.report)  # evidence: only the work that produced what failed
            block = await run.writer_tasks(reopen=reopened) if reopened else ""
            message = UserMsg("user", render_prompt("fix_round", feedback=check.report.feedback(),
                                                    known_fixes=("\n\n" + known) if known else "",
                                                    review=review) + ("\n" + block if block else ""))
            await run.phase("implement", f"fix round {round_no + 1}")
        return verdict


def _build_reusable(design: DesignOutcome | None) -> bool:
    """The design's plan still holds a verified build and validation (their inputs did not change)."""
    if design is None:
        return False
    nodes = design.plan.nodes
    return all(n in nodes and nodes[n].status == "verified" for n in ("phase.implement", "phase.validate"))


def _failing(report: ValidationReport) -> str:
    """The blocking gates by id; an L2 gate with its summary (it names the design mismatch)."""
    return ", ".join(g.id if g.layer == "L1" else f"{g.id} ({g.summary[:300]})" for g in report.failures)
