"""The single-writer run: brief → project from the pack template → writer Agent loop → deterministic
verification → ``delivery.json``. The validators, not the model, decide whether the game is delivered."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentscope.event import ExceedMaxItersEvent
from agentscope.message import Msg, UserMsg

from tier2.assembly import build_writer
from tier2.errors import BadInput, RunLimitReached, StaleLease, Tier2Error
from tier2.events import AttemptStarted, GateResult, PhaseChanged, RunFinished, RunStarted, Tier2Event
from tier2.middleware.budget import spend_guard_of
from tier2.models.routing import build_fallback, build_model
from tier2.prompts import render_prompt
from tier2.runs.delivery import write_delivery
from tier2.runs.l3 import l3_scorer
from tier2.runs.layers import LayerContext, build_run_layers
from tier2.runs.owner import process_owner
from tier2.runs.progress import EventMapper, Usage
from tier2.runs.runtime import Runtime
from tier2.settings.loader import BriefLimits
from tier2.store.run_store import Fence
from tier2.telemetry import A, RunTrace
from tier2.validators import ValidationReport, ValidationRunner
from tier2.workspace import new_project, snapshot, workspace_home
from tier2.workspace.projects import read_project

__all__ = ["Resume", "RunRequest", "RunOutcome", "execute_run", "validate_brief", "new_run_id"]

log = logging.getLogger(__name__)
EventSink = Callable[[int, Tier2Event], Awaitable[None]]


@dataclass(frozen=True)
class Resume:
    """Where a new attempt continues: the newest checkpoint of the previous attempt."""

    checkpoint: int
    state_json: str
    round: int
    stage: str  # "turn": mid writer turn (continue it) | "turn_done": the turn ended (validate next)
    usage: dict[str, Any] = field(default_factory=dict)
    step: int = 0


@dataclass(frozen=True)
class RunRequest:
    brief: str
    out_dir: Path | None = None
    model: str | None = None
    project_id: str | None = None
    run_id: str | None = None
    #: set to request a stop; the run ends ``stopped`` at the next step (or at once, with Task.cancel())
    cancel: asyncio.Event | None = None
    #: work on this existing project directory (a loaded project) instead of a fresh template copy
    existing_project: Path | None = None
    #: the writer's AgentState (JSON) from the thread's previous run: a follow-up continues that conversation
    initial_state: str | None = None
    #: this attempt's lease (worker runs): every write checks it is still current; None for a foreground CLI run
    fence: Fence | None = None
    worker: str = ""
    #: continue a previous attempt after its newest checkpoint
    resume: Resume | None = None
    #: per-run options for the governance layers (e.g. ``{"budget": {"usd": 0.5, "tokens": 200000}}``)
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunOutcome:
    run_id: str
    project_id: str
    project_dir: str
    status: str
    stop_reason: str
    delivery_path: str | None
    delivery: dict[str, Any] = field(default_factory=dict)
    #: the writer's AgentState (JSON) at the end, for a follow-up run in the same thread
    agent_state: str | None = None


def new_run_id() -> str:
    return "r-" + uuid.uuid4().hex[:16]


def validate_brief(brief: object, limits: BriefLimits) -> str:
    """The stripped brief, or `BadInput` saying exactly what is wrong."""
    if not isinstance(brief, str):
        raise BadInput("brief must be a string")
    text = brief.strip()
    if not text:
        raise BadInput("brief is empty: describe the game in a sentence or two")
    if len(text) > limits.max_chars:
        raise BadInput(f"brief is {len(text)} characters; the limit is {limits.max_chars}")
    if len(text) < limits.min_chars:
        raise BadInput(f"brief is too short ({len(text)} characters, at least {limits.min_chars})")
    if "\x00" in text:
        raise BadInput("brief contains a NUL character")
    return text


class _Run:
    """One run's mutable bookkeeping (events, timings); lives only for the duration of `execute_run`."""

    def __init__(self, rt: Runtime, run_id: str, sink: EventSink | None, fence: Fence | None) -> None:
        self.rt, self.run_id, self.sink, self.fence = rt, run_id, sink, fence
        self.round = 0
        self.t0 = time.monotonic()
        self.marks: dict[str, float] = {}
        self.trace = RunTrace(run_id)  # OTel: the run span and one span per phase (no-op unless tracing is on)

    async def emit(self, event: Tier2Event) -> None:
        seq = await self.rt.store.append_event(event, self.fence)
        if self.sink is not None:
            await self.sink(seq, event)

    async def update(self, **fields: Any) -> None:
        await self.rt.store.update_run(self.run_id, self.fence, **fields)

    def mark(self, name: str) -> None:
        self.marks[name] = time.monotonic()

    def ms(self, a: str, b: str) -> int:
        return int((self.marks.get(b, time.monotonic()) - self.marks.get(a, self.t0)) * 1000)


def _final_text(msg: Msg | None) -> str:
    return (msg.get_text_content() or "").strip() if msg is not None else ""


async def execute_run(rt: Runtime, req: RunRequest, sink: EventSink | None = None) -> RunOutcome:
    """Run one brief to a terminal state. Raises only for bad input or broken setup found before the run
    starts; anything after that ends as a ``failed``/``stopped`` delivery with a reason."""
    brief = validate_brief(req.brief, rt.security.brief)
    policy = rt.policies.snapshot()
    route_name, route = policy.agent_route("writer", req.model)
    model = build_model(route_name, route, timeout_s=policy.timeouts.model_call_s)
    fallback = build_fallback(policy.route_chain(route_name)[1:], timeout_s=policy.timeouts.model_call_s)
    run_id = req.run_id or new_run_id()
    run = _Run(rt, run_id, sink, req.fence)
    try:
        return await _run_body(rt, req, run, brief, policy, route_name, route, model, fallback)
    except BaseException as exc:  # setup failed before the run's own handling: still close the run span
        run.trace.finish("failed", f"{type(exc).__name__}: {exc}")  # idempotent after a normal finish
        raise


async def _run_body(rt: Runtime, req: RunRequest, run: _Run, brief: str, policy: Any, route_name: str, route: Any,
                    model: Any, fallback: Any) -> RunOutcome:
    run_id = run.run_id
    dest = req.out_dir or (rt.settings.workspaces / "projects" / (req.project_id or f"game-{run_id[2:14]}"))
    info = read_project(req.existing_project) if req.existing_project else new_project(rt.pack, dest, req.project_id)
    project = Path(info.path)
    model_info = {"route": route_name, "kind": route.kind, "model": route.model}
    fields = {"status": "running", "phase": "setup", "brief": brief, "project_id": info.project_id,
              "project_dir": str(project), "model": model_info, "policy": policy.source_hash,
              "owner": process_owner()}
    if req.run_id is None:  # a fresh run from the CLI; the service wrote the accepted record already
        accepted = await rt.store.accept_run(run_id, fields, project_id=info.project_id, dispatch=False)
        if accepted.outcome == "busy":
            raise BadInput(f"project {info.project_id} already has a run in progress: {accepted.active_run}")
    previous = await rt.store.get_run(run_id) or {}
    await run.update(**fields, attempt=req.fence.token if req.fence else 1, started=True)
    run.trace.annotate(**{A.AGENT: "writer", A.ROUTE: route_name, A.REQUEST_MODEL: route.model,
                          A.BRIEF_CHARS: len(brief), "tier2.run.attempt": req.fence.token if req.fence else 1})
    if not previous.get("started"):
        await run.emit(RunStarted(run_id=run_id, brief=brief, project_id=info.project_id, project_dir=str(project),
                                  model_route=route_name, model=route.model, pack=rt.pack.ref))
    if req.fence is not None:
        resumed = req.resume
        await run.emit(AttemptStarted(run_id=run_id, attempt=req.fence.token, worker=req.worker,
                                      resumed_from=resumed.checkpoint if resumed else None,
                                      stage=resumed.stage if resumed else ""))
    reports = project / ".tier2" / "reports"
    runner = ValidationRunner(rt.pool, rt.pack, policy)
    mapper = EventMapper(run_id, route.model, policy.prices.get(route.model), prices=policy.prices,
                         redactor=rt.redactor)
    if req.resume is not None:  # cost and steps of the earlier attempts carry over
        mapper.usage = Usage(**req.resume.usage) if req.resume.usage else mapper.usage
        mapper.step = req.resume.step
    status, reason, report = "failed", "", None
    abandon = False
    handle = None
    report_path: Path | None = None
    try:
        cancel = req.cancel
        layers = build_run_layers(LayerContext(
            run_id=run_id, agent="writer", policy=policy, route_name=route_name, route=route, runtime=rt,
            options=dict(req.options), fence=req.fence,
            progress=lambda: {"round": run.round, "usage": asdict(mapper.usage), "step": mapper.step}))
        runner.spend_guard = spend_guard_of(layers.budget)  # the ledger's report goes into the delivery
        runner.l3_scorer = l3_scorer(policy, rt=rt, run_id=run_id, options=dict(req.options),
                                     cancelled=(lambda: cancel.is_set()) if cancel is not None else None)
        handle = await build_writer(project_id=info.project_id, project=project, pack=rt.pack, policy=policy,
                                    model=model, runner=runner, reports_dir=reports,
                                    cancelled=(lambda: cancel.is_set()) if cancel is not None else None,
                                    state_json=req.resume.state_json if req.resume else req.initial_state,
                                    layers=layers, fallback_model=fallback,
                                    home=workspace_home(rt.settings.workspaces, info.project_id),
                                    write_limit=rt.security.tools.max_write_bytes)
        run.mark("setup_done")
        await _phase(run, "implement", f"writer {route_name}", mapper)
        message: Msg = UserMsg("user", render_prompt("run_request", brief=brief, project=project))
        pending = req.resume.stage if req.resume else ""
        for round_no in range(req.resume.round if req.resume else 0, policy.writer.max_fix_rounds + 1):
            run.round = round_no
            if pending == "turn_done":  # the turn ended before the crash: validate what it left
                context = handle.agent.state.context
                final, exceeded = (context[-1] if context else None), False
            else:  # None continues the interrupted turn from its last completed step
                final, exceeded = await _writer_turn(run, handle.agent, None if pending else message, mapper)
            pending = ""
            said = _final_text(final)
            run.mark("agent_done")
            await _phase(run, "validate", f"round {round_no + 1}", mapper)
            report_path = reports / "final" / "report.json"
            tools = handle.tools
            if (tools.last_report is not None and tools.last_report.passed
                    and tools.last_report_source == snapshot(project)["sha256"]):
                # the writer's last RunGame ran every L1 gate on exactly these sources: same checks, same verdict
                report = await runner.finalize(tools.last_report, report_path.parent, brief)
            else:
                report = await runner.validate_project(project, report_path.parent, brief=brief)
            for gate in report.gates:
                await run.emit(GateResult(run_id=run_id, gate_id=gate.id, layer=gate.layer, passed=gate.passed,
                                          summary=gate.summary))
            run.mark("validated")
            if report.passed:
                status, reason = "delivered", "all L1 gates passed"
                break
            if said.startswith("STOP:"):
                status, reason = "failed", "writer stopped: " + said[5:].strip()[:1000]
                break
            reason = "L1 gates still failing: " + ", ".join(g.id for g in report.failures)
            if exceeded:
                reason = f"writer hit max_iters={policy.writer.max_iters}; " + reason
            message = UserMsg("user", render_prompt("fix_round", feedback=report.feedback()))
            await _phase(run, "implement", f"fix round {round_no + 1}", mapper)
    except asyncio.CancelledError:
        status, reason = "stopped", "cancelled by request"
        if req.cancel is None or not req.cancel.is_set():
            if req.fence is not None:
                abandon = True  # a worker shutting down or losing its lease: the next attempt resumes the run
            raise  # a shutdown, not a request: finish the record below, then let the task end cancelled
    except StaleLease:
        abandon = True  # another attempt owns the run now: write nothing more
        raise
    except RunLimitReached as exc:
        status, reason = "stopped", str(exc)
        report = _best_verified(handle, report)
    except Tier2Error as exc:
        status, reason = "failed", f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001 - no silent failure: every crash becomes a terminal reason
        log.exception("run %s crashed", run_id)
        status, reason = "failed", f"{type(exc).__name__}: {str(exc)[:500]}"
    finally:
        if not abandon:
            if runner.spend_guard is not None:  # the ledger's view (cap, spent, reserved, calls): usage.budget
                mapper.usage.budget = await runner.spend_guard.report()
            outcome = await _finish(run, project, info.project_id, brief, model_info, status, reason, report,
                                    report_path, mapper)
            if handle is not None:
                outcome.agent_state = handle.agent.state.model_dump_json()
        run.trace.finish("abandoned" if abandon else status, reason, usage=mapper.usage)
    return outcome


def _best_verified(handle: Any, report: ValidationReport | None) -> ValidationReport | None:
    """The best verified result so far when a limit stops the run: the writer's last passing check, if any."""
    if report is not None and report.passed:
        return report
    last = handle.tools.last_report if handle is not None else None
    return last if last is not None and last.passed else report


async def _phase(run: _Run, phase: str, detail: str, mapper: EventMapper | None = None) -> None:
    fields: dict[str, Any] = {"phase": phase}
    if mapper is not None:
        mapper.phase = phase
        fields["usage"] = mapper.usage.report()  # cost so far, visible on GET /v1/runs/{id}
    await run.update(**fields)
    await run.emit(PhaseChanged(run_id=run.run_id, phase=phase, detail=detail))  # type: ignore[arg-type]
    run.trace.phase(phase, detail)


async def _writer_turn(run: _Run, agent: Any, message: Msg | None, mapper: EventMapper) -> tuple[Msg | None, bool]:
    final: Msg | None = None
    exceeded = False
    async for item in agent.reply_stream(message):
        if isinstance(item, Msg):
            final = item
            continue
        if isinstance(item, ExceedMaxItersEvent):
            exceeded = True
        for event in mapper.map(item):
            await run.emit(event)
    if final is None and agent.state.context:
        final = agent.state.context[-1]
    return final, exceeded


async def _finish(
    run: _Run, project: Path, project_id: str, brief: str, model_info: dict[str, Any], status: str, reason: str,
    report: ValidationReport | None, report_path: Path | None, mapper: EventMapper,
) -> RunOutcome:
    await asyncio.shield(_phase(run, "deliver", status))
    usage = {**mapper.usage.report(), "estimated": model_info["kind"] == "offline"}
    loop_ms = run.ms("setup_done", "agent_done")
    tool_ms = mapper.usage.tool_ms
    timings = {"setup": run.ms("start", "setup_done"), "agent_loop": loop_ms - sum(tool_ms.values()),
               "build": tool_ms.get("Build", 0), "validation": tool_ms.get("RunGame", 0) + run.ms("agent_done",
               "validated"), "file_tools": sum(v for k, v in tool_ms.items() if k not in ("Build", "RunGame")),
               "total": run.ms("start", "end")}
    path, record = write_delivery(project=project, run_id=run.run_id, project_id=project_id, status=status,
                                  stop_reason=reason, brief=brief, pack=run.rt.pack.ref, model=model_info,
                                  report=report, report_path=report_path, usage=usage, timings=timings)
    await run.update(status=status, stop_reason=reason, delivery_path=str(path), usage=usage)
    await run.emit(RunFinished(run_id=run.run_id, status=status, stop_reason=reason,  # type: ignore[arg-type]
                               delivery_path=str(path)))
    await run.rt.store.release_project(project_id, run.run_id)
    return RunOutcome(run_id=run.run_id, project_id=project_id, project_dir=str(project), status=status,
                      stop_reason=reason, delivery_path=str(path), delivery=record)
