"""The run's companions (seed 004 §6.2): the explorer the writer asks through ``Explore``, and the reviewer of each
writer turn. Both are read-only agents of the run, built fresh per call (`tier2.assembly.companions`).

One model-call path for every agent: each call's models and layers come from `RunContext.agent` (the ``agents:``
route of its role, ``explorer`` or ``reviewer``, and its fallbacks; the run's one budget ledger, breakers, tracing
and trajectory, records under the role's name, with cost), its turn is driven by `drive_turn`, and its usage is
handed to the session (``add_usage``: ``usage.cost_by_agent``) and announced as a ``companion_called`` event.

Limits: ``companions.<role>.max_calls_per_run`` (beyond it: a refusal, no model call), ``max_iters`` per call,
output bounded. A run limit a companion hits (budget, deadline, breakers) stops the run like any other: the
reviewer's raises in the phase; the explorer's (inside the writer's tool call) is raised before the writer's next
model call (`tier2.companions.stop`). Neither decides completion: the reviewer's findings are advice for the next
fix round; the verdict stays the gates'.
"""

from __future__ import annotations

import asyncio
import difflib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentscope.message import Msg, TextBlock, ToolCallBlock, ToolResultBlock, UserMsg
from agentscope.tool import ToolBase

from tier2.assembly.companions import CompanionRole, build_companion, companion_tools
from tier2.companions import Finding, parse_findings, render_findings
from tier2.companions.stop import CompanionStopMiddleware
from tier2.companions.tools import ExploreTool
from tier2.errors import RunLimitReached, StaleLease
from tier2.events import CompanionCalled
from tier2.hostio import ProjectDir
from tier2.runs.loop.context import RunContext, RunView
from tier2.runs.loop.layers import Additions
from tier2.runs.loop.turns import drive_turn
from tier2.runs.loop.usage import EventMapper, Usage
from tier2.tools import BuildRecord, CheckRecord
from tier2.validators import ValidationReport

__all__ = ["CompanionCall", "Review", "RunCompanions", "turn_diff"]

CallState = Literal["answered", "refused", "failed", "stopped"]
_DIFF_TOPS = ("src", "data")
_MAX_FILE = 200_000
_MAX_FILES = 300


@dataclass
class CompanionCall:
    """One companion call: its answer (or why there is none) and what it cost."""

    role: CompanionRole
    state: CallState
    text: str
    usage: Usage = field(default_factory=Usage)
    duration_ms: int = 0


@dataclass
class Review:
    """The reviewer's view of one writer turn: findings (advice) and the text for the writer's next message."""

    trigger: str
    findings: list[Finding]
    note: str = ""
    call: CompanionCall | None = None

    def for_writer(self, limit_chars: int = 6000) -> str:
        if not self.findings:
            return ""
        return ("\n\nAn independent reviewer read your last change and these verdicts. Its findings are advice "
                "(only the gates decide when the game is done):\n" + render_findings(self.findings, limit_chars))


def _texts(project: Path) -> dict[str, str]:
    """The project's sources and data as text (bounded), for the turn's diff."""
    out: dict[str, str] = {}
    pdir = ProjectDir(project)  # never through a link (tier2.hostio)
    for top in (*_DIFF_TOPS, "index.html"):
        found = pdir.text_files(top, max_bytes=_MAX_FILE, skip=frozenset({"node_modules"})) if pdir.is_dir(top) \
            else [(top, text) for text in _text(pdir, top)]
        for rel, text in found:
            if len(out) >= _MAX_FILES:
                return out
            out[rel] = text
    return out


def _text(pdir: ProjectDir, rel: str) -> list[str]:
    try:
        return [pdir.read_text(rel, max_bytes=_MAX_FILE, errors="replace")] if pdir.is_file(rel) else []
    except OSError:
        return []


def turn_diff(before: dict[str, str], after: dict[str, str], limit: int) -> str:
    """A unified diff of every changed file (new and deleted ones included), cut at ``limit`` characters."""
    parts: list[str] = []
    for rel in sorted(set(before) | set(after)):
        a, b = before.get(rel), after.get(rel)
        if a == b:
            continue
        old, new = "/dev/null" if a is None else f"a/{rel}", "/dev/null" if b is None else f"b/{rel}"
        parts += difflib.unified_diff((a or "").splitlines(), (b or "").splitlines(), old, new, n=2, lineterm="")
    text = "\n".join(parts)
    return text if len(text) <= limit else text[:limit] + f"\n[... diff cut at {limit} characters]"


def _gates_text(report: ValidationReport) -> str:
    lines = [f"validation after the turn: {'PASSED' if report.passed else 'FAILED'}"]
    for g in report.gates:
        if not g.passed:
            lines.append(f"- {g.id} ({g.layer}, {g.mode}) FAILED: {g.summary[:300]}")
            lines += [f"    {f.message[:300]}" for f in g.findings[:4]]
    lines.append(f"({sum(g.passed for g in report.gates)} gate(s) passed)")
    return "\n".join(lines)


def _answer(msg: Msg | None) -> str:
    """The text of the agent's last step (its reply message also holds the earlier steps' texts, tool calls and
    results): the text blocks after the last tool block, or all of it when it made no tool call."""
    if msg is None:
        return ""
    if not isinstance(msg.content, list):
        return str(msg.content or "").strip()
    tail: list[str] = []
    for block in msg.content:
        if isinstance(block, TextBlock):
            tail.append(block.text)
        elif isinstance(block, ToolCallBlock | ToolResultBlock):
            tail = []
    return "\n".join(tail).strip() or (msg.get_text_content() or "").strip()


class RunCompanions:
    """The companions of one run. ``add_usage``: the session's, to count a call's usage in the run's."""

    def __init__(self, ctx: RunContext, view: RunView, add_usage: Callable[[Usage], None]) -> None:
        self.ctx, self.view, self.add_usage = ctx, view, add_usage
        self.policy = ctx.policy.companions
        self.calls: dict[str, int] = {"explorer": 0, "reviewer": 0}
        self.tripped: RunLimitReached | None = None
        self._before: dict[str, str] = {}
        self._mark = 0

    # --- wiring -------------------------------------------------------------------------------------------------

    def writer_tools(self) -> list[ToolBase]:
        """``Explore`` for the writer, when the explorer is on."""
        p = self.policy.explorer
        return [ExploreTool(self.explore, p.max_question_chars)] if p.enabled else []

    def additions(self) -> Additions:
        """For the writer: the stop layer joins its breakers, `writer_tools` its toolkit."""
        return Additions(breakers=(CompanionStopMiddleware(lambda: self.tripped),), tools=tuple(self.writer_tools()))

    def turn_started(self) -> None:
        """Remember the project and the tools' log as the turn starts: the reviewer reads the change since."""
        opened, writer = self.view.opened, self.view.writer
        project = opened.project if opened else None
        self._before = _texts(project) if project is not None and self.policy.reviewer.enabled else {}
        self._mark = len(writer.results.entries) if writer is not None else 0

    # --- the explorer ---------------------------------------------------------------------------------------------

    async def explore(self, question: str) -> tuple[bool, str]:
        p = self.policy.explorer
        call = await self._call("explorer", UserMsg("user", f"<question>\n{question}\n</question>"), question,
                                p.max_calls_per_run, p.max_iters)
        text = call.text if len(call.text) <= p.max_answer_chars else \
            call.text[:p.max_answer_chars] + f"\n[... answer cut at {p.max_answer_chars} characters]"
        return call.state == "answered", text

    # --- the reviewer ---------------------------------------------------------------------------------------------

    def _turn_failures(self) -> list[str]:
        writer = self.view.writer
        entries = writer.results.entries[self._mark:] if writer is not None else []
        out: list[str] = []
        for e in entries:
            if isinstance(e, BuildRecord) and not e.result.ok:
                out.append("Build FAILED: " + "; ".join(str(x) for x in e.result.errors[:3])[:400])
            elif isinstance(e, CheckRecord) and not e.report.passed:
                out.append("RunGame FAILED: " + ", ".join(f"{g.id}: {g.summary[:160]}" for g in e.report.failures))
        return out

    def trigger(self, report: ValidationReport) -> str | None:
        """Why the reviewer runs after this turn (None: it does not)."""
        p = self.policy.reviewer
        if not p.enabled:
            return None
        if p.trigger == "every_turn":
            return "every_turn"
        if not report.passed:
            return "failed_validation"
        return "failed_check" if p.trigger == "failed_check" and self._turn_failures() else None

    async def review(self, report: ValidationReport) -> Review | None:
        """After a writer turn and its validation: the reviewer's findings, or None when the policy says no review.
        A run limit the reviewer hits propagates (the run stops); any other failure is a review without findings."""
        why = self.trigger(report)
        if why is None:
            return None
        p = self.policy.reviewer
        project = self.view.opened.project if self.view.opened else None
        after = await asyncio.to_thread(_texts, project) if project is not None else {}
        diff = turn_diff(self._before, after, p.max_diff_chars) or "(no file changed in this turn)"
        during = self._turn_failures()
        message = (f"<trigger>{why}</trigger>\n<gates>\n{_gates_text(report)}\n</gates>\n"
                   + ("<checks-during-turn>\n" + "\n".join(during) + "\n</checks-during-turn>\n" if during else "")
                   + f"<diff>\n{diff}\n</diff>\nReview this change. Answer with the findings JSON only.")
        call = await self._call("reviewer", UserMsg("user", message), why, p.max_calls_per_run, p.max_iters)
        if call.state == "stopped" and self.tripped is not None:
            raise RunLimitReached(self.tripped.limit, self.tripped.detail)
        findings, note = parse_findings(call.text, p.max_findings) if call.state == "answered" else ([], call.text)
        return Review(why, findings, note, call)

    # --- one call -------------------------------------------------------------------------------------------------

    async def _call(self, role: CompanionRole, message: Msg, trigger: str, max_calls: int, max_iters: int,
                    ) -> CompanionCall:
        t0 = time.monotonic()
        if self.tripped is not None:
            call = CompanionCall(role, "refused", f"{role} refused: the run already hit a limit ({self.tripped})")
        elif self.calls[role] >= max_calls:
            call = CompanionCall(role, "refused", f"{role} refused: this run's {max_calls} {role} call(s) are used up "
                                 f"(companions.{role}.max_calls_per_run); work from what you have")
        else:
            self.calls[role] += 1
            call = await self._run(role, message, max_iters)
        call.duration_ms = int((time.monotonic() - t0) * 1000)
        await self._account(call, trigger)
        return call

    async def _run(self, role: CompanionRole, message: Msg, max_iters: int) -> CompanionCall:
        ctx = self.ctx
        project = self.view.opened.project if self.view.opened else None
        if project is None:
            return CompanionCall(role, "failed", f"{role} failed: the run has no project yet")
        parts = ctx.agent(role)
        m = parts.models
        tools = companion_tools(role, project, ctx.pack.adapter)
        agent = build_companion(role=role, project=project, pack=ctx.pack, model=m.model, tools=tools,
                                max_iters=max_iters, fallback_model=m.fallback, layers=parts.layers,
                                cancelled=ctx.cancelled)
        mapper = EventMapper(ctx.run_id, m.route.model, agent=role, redactor=ctx.rt.redactor)

        async def meter(item: Any) -> None:  # a companion's steps are metered, not streamed (one summary event)
            mapper.map(item)
        try:
            turn = await drive_turn(agent, message, meter)
        except (asyncio.CancelledError, StaleLease):
            raise
        except RunLimitReached as exc:
            self.tripped = self.tripped or RunLimitReached(exc.limit, f"{exc.detail} (the {role}'s call)")
            return CompanionCall(role, "stopped", f"{role} stopped: {exc}", mapper.usage)
        except Exception as exc:  # noqa: BLE001 - a companion's failure is reported to its caller, never a crash
            return CompanionCall(role, "failed", f"{role} failed: {type(exc).__name__}: {str(exc)[:300]}",
                                 mapper.usage)
        text = _answer(turn.final)
        return CompanionCall(role, "answered" if text else "failed", text or f"{role} gave no answer", mapper.usage)

    async def _account(self, call: CompanionCall, trigger: str) -> None:
        ctx, u = self.ctx, call.usage
        self.add_usage(u)
        findings = 0
        if call.role == "reviewer" and call.state == "answered":
            findings = len(parse_findings(call.text, self.policy.reviewer.max_findings)[0])
        first = call.text.strip().splitlines()[0] if call.text.strip() else ""
        await ctx.emit(CompanionCalled(
            run_id=ctx.run_id, agent=call.role, trigger=ctx.rt.redactor.summary(trigger, 300), state=call.state,
            duration_ms=call.duration_ms, model_calls=u.model_calls, input_tokens=u.input_tokens,
            output_tokens=u.output_tokens, cost_usd=round(u.cost_usd, 6) if u.priced else None, findings=findings,
            summary=ctx.rt.redactor.summary(first, 200)))
