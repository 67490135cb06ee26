"""One run as a session of steps: open → setup → phases → (validate, per phase) → deliver.

Each step is a method with typed input and output. The session is the only writer of the run's mutable state
(`RunView`: opened, writer, design, last check, usage); phases drive it through `RunControl`, add-ons get the
frozen `RunContext` and read the state through `RunView` — none of them imports this module. The Build/RunGame
tools report through the `ToolResults` log (values they return), never through their own attributes. Every way
the run ends — delivered, failed (an exception), stopped (cancel, breaker, budget) — goes through `deliver`, which
writes ``delivery.json`` and then ends the run with the one fenced `tier2.store.finish.finish_run`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agentscope.agent import Agent
from agentscope.message import Msg

from tier2.design.planning import producers
from tier2.errors import BadInput, RunLimitReached, StaleLease, Tier2Error
from tier2.events import (
    AttemptStarted,
    GateResult,
    PhaseChanged,
    PlanChanged,
    PolicyRefused,
    RunStarted,
    Tier2Event,
    WriterTask,
    WriterTasks,
)
from tier2.events import Phase as PhaseName
from tier2.models.openai_compat import endpoint_failure
from tier2.models.routing import agent_models
from tier2.runs.loop.addons.companions import RunCompanions
from tier2.runs.loop.addons.docs_hints import docs_hints
from tier2.runs.loop.addons.library import RunLibrary, open_library
from tier2.runs.loop.addons.pins import pins_provider
from tier2.runs.loop.context import Check, DesignOutcome, Opened, RunContext, Turn, WriterSetup
from tier2.runs.loop.delivery import design_record, write_delivery
from tier2.runs.loop.layers import Additions
from tier2.runs.loop.phases.base import Phase, PhaseInput, Verdict
from tier2.runs.loop.phases.design import DesignPhase, store_plan
from tier2.runs.loop.phases.implement import ImplementPhase
from tier2.runs.loop.plan_record import record_plan
from tier2.runs.loop.sandboxing import RunWorkspace, ensure_project_meta, open_run_workspace
from tier2.runs.loop.setup import assemble_writer, validation_runner, writer_additions
from tier2.runs.loop.tasks import reconcile, render_tasks, reopen_tasks, seed_tasks, task_rows
from tier2.runs.loop.turns import drive_turn
from tier2.runs.loop.usage import EventMapper, Usage
from tier2.runs.process.owner import process_owner
from tier2.runs.process.policy import RunPolicy, current_policy
from tier2.runs.process.runtime import Runtime
from tier2.runs.projects import genre_for_brief, run_pack_of
from tier2.runs.request import EventSink, RunOutcome, RunRequest, crash_reason, new_run_id
from tier2.runs.tenancy import check_run_route, settle_storage
from tier2.sandbox import SandboxOwner
from tier2.settings.tenants import LOCAL_TENANT
from tier2.store.checkpoints import RunPosition
from tier2.store.finish import RunEnd, finish_run
from tier2.store.lifecycle import TerminalStatus
from tier2.store.plans import PlanVersionRefused, PlanVersions
from tier2.store.policies import PolicySnapshots
from tier2.store.quotas import QuotaStore
from tier2.store.records import DeliverySummary
from tier2.store.snapshot_gc import SnapshotGC
from tier2.telemetry import A, RunTrace
from tier2.tools import ToolResults
from tier2.validators import ValidationReport, ValidationRunner
from tier2.workspace import new_project, snapshot
from tier2.workspace.projects import read_project

__all__ = ["Check", "Opened", "RunSession", "Turn", "WriterSetup", "default_phases"]

log = logging.getLogger(__name__)


def default_phases() -> list[Phase]:
    """Design, then implement: a phase goes in front of another in the list without touching it."""
    return [DesignPhase(), ImplementPhase()]


class RunSession:
    """One run (one attempt of it, for worker runs); lives for the duration of `execute_run`."""

    def __init__(self, rt: Runtime, req: RunRequest, brief: str, sink: EventSink | None = None,
                 phases: list[Phase] | None = None, policy: RunPolicy | None = None) -> None:
        self.rt, self.req, self.brief, self.sink = rt, req, brief, sink
        self.phases = phases if phases is not None else default_phases()
        run_policy = policy if policy is not None else current_policy(rt)
        self.policy = run_policy.policy
        self.run_id = req.run_id or new_run_id()
        writer = agent_models(self.policy, "writer", req.model, req.scripted_models)
        #: the run as its parts see it (frozen); the state below is written by this session only
        self.ctx = RunContext(rt=rt, req=req, brief=brief, run_id=self.run_id, run_policy=run_policy,
                              emit=self.emit, writer=writer, pack=run_pack_of(rt, req))
        self.fence = req.fence
        self.round = 0
        self.t0 = time.monotonic()
        self.marks: dict[str, float] = {}
        self.trace = RunTrace(self.run_id)  # OTel: the run span and one span per phase (no-op unless tracing is on)
        self.mapper = EventMapper(self.run_id, writer.route.model, redactor=rt.redactor)
        if req.resume is not None and req.resume.usage:  # cost and steps of the earlier attempts carry over
            self.mapper.usage = Usage(**req.resume.usage)
        if req.resume is not None:
            self.mapper.step = req.resume.step
        self.opened: Opened | None = None
        self.writer: WriterSetup | None = None
        self.runner: ValidationRunner | None = None  # set in setup before the writer (its budget guard is reported)
        self.last_check: Check | None = None
        #: the design phase's outcome (spec, plan, goal): L2 gates, the completion map and the plan in the delivery
        self.design: DesignOutcome | None = None
        self.workspace: RunWorkspace | None = None  # the workspace kind's sandbox, command sessions, browser
        self.library: RunLibrary | None = None  # the debug case library's part in this run
        self.companions: RunCompanions | None = None  # explorer + reviewer
        #: the writer's task message (the run request), once sent
        self.task_text = ""

    # --- the state, read-only (RunView) and for phases (RunControl) ------------------------------------------

    @property
    def view(self) -> RunSession:
        return self

    @property
    def usage(self) -> Usage:
        return self.mapper.usage

    @property
    def current_phase(self) -> str:
        return self.mapper.phase

    def add_usage(self, usage: Usage) -> None:
        """A companion call's usage, counted in the run's (under its agent, in the current phase)."""
        self.mapper.usage.add(usage, self.mapper.phase)

    def begin_round(self, round_no: int) -> None:
        self.round = round_no

    def designed(self, outcome: DesignOutcome) -> None:
        self.design = outcome

    async def writer_tasks(self, reopen: list[str] | None = None) -> str:
        design, writer = self.design, self.writer
        if design is None or writer is None or not any(n.kind == "task" for n in design.plan.nodes.values()):
            return ""
        state = writer.handle.agent.state
        given = (seed_tasks(state, design.plan, design.spec) if reopen is None
                 else reopen_tasks(state, design.plan, design.spec, reopen))
        for node in given:
            design.plan.set(node, "ready")
            design.executed.add(node)
            await self._announce(node)
        await self._tasks_changed()
        await self.update(plan=design.plan.summary())
        return render_tasks(state, given)

    async def reconcile_tasks(self, report: ValidationReport) -> None:
        design, writer = self.design, self.writer
        if design is None or writer is None:
            return
        passed = {g.id.removeprefix("l2.req.") for g in report.gates if g.id.startswith("l2.req.") and g.passed}
        if reconcile(writer.handle.agent.state, design.plan, passed, report.passed):
            await self._tasks_changed()

    async def _tasks_changed(self) -> None:
        if self.writer is not None:
            rows = task_rows(self.writer.handle.agent.state)
            await self.emit(WriterTasks(run_id=self.run_id, tasks=[WriterTask(**t) for t in rows]))

    async def _announce(self, node: str) -> None:
        design = self.design
        if design is None or node not in design.plan.nodes:
            return
        n = design.plan.nodes[node]
        await self.emit(PlanChanged(run_id=self.run_id, node=node, kind=n.kind, status=n.status,
                                    goal_version=design.plan.goal_version, plan_version=design.plan.plan_version,
                                    evidence=n.evidence))

    async def record_plan(self, end: dict[str, Any] | None = None, metrics: dict[str, Any] | None = None) -> None:
        design, opened = self.design, self.opened
        if design is None or opened is None:
            return
        try:
            await record_plan(PlanVersions(self.rt.store.r, self.rt.store.keys), opened.project_id, self.run_id,
                              design, self.fence, end, metrics)
        except PlanVersionRefused as exc:  # the store is ahead of this project's state file: keep the run going
            log.warning("run %s: plan version not stored: %s", self.run_id, exc)

    async def replan(self, report: ValidationReport) -> list[str]:
        design = self.design
        if design is None:
            return []
        reasons: dict[str, str] = {}
        for gate in report.failures:
            reasons.update({n: why for n, why in producers(gate.id, design.plan, design.spec).items()
                            if n not in reasons})
        if not reasons:
            return []
        designs = {n: w for n, w in reasons.items() if n.startswith("design.")}
        work = {n: w for n, w in reasons.items() if not n.startswith("design.")}
        # the designs are re-checked by the same gates on the next build (not re-run inside this run): no cascade
        hit = design.plan.invalidate(designs, "evidence", follow=False) if designs else {}
        hit |= design.plan.invalidate(work, "evidence", cause="; ".join(sorted(set(work.values())))[:300])
        design.recovered |= set(hit)
        for node in hit:
            await self._announce(node)
        return sorted(n for n in hit if n.startswith("task."))

    def _design_source(self) -> tuple[dict[str, Any], str] | None:
        return (self.design.spec, self.design.goal) if self.design is not None else None

    def _position(self) -> RunPosition:
        return {"round": self.round, "usage": asdict(self.mapper.usage), "step": self.mapper.step}

    # --- bookkeeping -------------------------------------------------------------------------------------------

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

    async def phase(self, phase: PhaseName, detail: str) -> None:
        self.mapper.phase = phase
        await self.update(phase=phase, usage=self.mapper.usage.report())  # cost so far, on GET /v1/runs/{id}
        await self.emit(PhaseChanged(run_id=self.run_id, phase=phase, detail=detail))
        self.trace.phase(phase, detail)

    # --- the steps ---------------------------------------------------------------------------------------------

    async def execute(self) -> RunOutcome:
        """Run to a terminal state. Raises only for setup found broken before the run started (`open`);
        anything after that ends as a ``failed``/``stopped`` delivery with a reason."""
        try:
            opened = await self.open()
            return await self._run(opened)
        except BaseException as exc:  # setup failed before the run's own handling: still close the run span
            self.trace.finish("failed", f"{type(exc).__name__}: {exc}")  # idempotent after a normal finish
            raise

    async def open(self) -> Opened:
        """Create (or reopen) the project, write the running record and announce the run (and the attempt)."""
        req, run_id, route_name, route = self.req, self.run_id, self.ctx.writer.route_name, self.ctx.writer.route
        dest = req.out_dir or (self.rt.settings.workspaces / "projects" / (req.project_id or f"game-{run_id[2:14]}"))
        if req.existing_project and req.resume is not None:  # its directory may have been lost with the sandbox
            ensure_project_meta(req.existing_project, req.project_id, self.ctx.pack.ref)
        pack = self.ctx.pack
        info = read_project(req.existing_project) if req.existing_project else new_project(
            pack, dest, req.project_id, genre=genre_for_brief(pack, self.brief))
        project = Path(info.path)
        model_info = {"route": route_name, "kind": route.kind, "model": route.model}
        if self.ctx.run_policy.fresh:  # the run's snapshot, stored before its hash is recorded: every attempt loads it
            await PolicySnapshots(self.rt.store.r, self.rt.store.keys).put(self.policy)
        fields = {"status": "running", "phase": "setup", "brief": self.brief, "project_id": info.project_id,
                  "project_dir": str(project), "model": model_info, "policy": self.policy.source_hash,
                  "security_hash": self.rt.security_hash, "owner": process_owner()}
        if req.run_id is None:  # a fresh run from the CLI; the service wrote the accepted record already
            # the local tenant's: a local `tier2 serve` (no API keys) and its Studio show it, no keyed tenant does
            accepted = await self.rt.store.accept_run(run_id, {**fields, "tenant": LOCAL_TENANT},
                                                      project_id=info.project_id, dispatch=False, tenant=LOCAL_TENANT)
            if accepted.outcome == "busy":
                raise BadInput(f"project {info.project_id} already has a run in progress: {accepted.active_run}")
        previous = await self.rt.store.get_record(run_id)
        attempt = req.fence.token if req.fence else 1
        await self.update(**fields, attempt=attempt, started=True)
        self.trace.annotate(**{A.PACK: pack.ref, A.TEMPLATE: pack.genre_of(project).id})
        self.trace.annotate(**{A.AGENT: "writer", A.ROUTE: route_name, A.REQUEST_MODEL: route.model,
                               A.BRIEF_CHARS: len(self.brief), "tier2.run.attempt": attempt})
        if previous is None or not previous.started:
            await self.emit(RunStarted(run_id=run_id, brief=self.brief, project_id=info.project_id,
                                       project_dir=str(project), model_route=route_name, model=route.model,
                                       pack=pack.ref))
        refused = self.ctx.run_policy.refused
        if refused is not None:  # the edit on disk did not take effect: say so where the run is watched
            await self.emit(PolicyRefused(run_id=run_id, policy=self.policy.source_hash, refused=refused.digest,
                                          reason=refused.reason))
        if req.fence is not None:
            resumed = req.resume
            await self.emit(AttemptStarted(run_id=run_id, attempt=req.fence.token, worker=req.worker,
                                           resumed_from=resumed.checkpoint if resumed else None,
                                           stage=resumed.stage if resumed else ""))
        self.opened = Opened(project, info.project_id, model_info, previous.tenant if previous is not None else None)
        return self.opened

    async def setup(self, opened: Opened) -> WriterSetup:
        """The writer with its layers (budget, breakers, checkpoints, operations, tracing, context with the run's
        pins) and the add-ons' (case library, engine-docs hints, companions), its workspace and the validation
        runner (`tier2.runs.loop.setup`). The workspace and the runner are the session's as soon as they exist: a
        failure later in setup still closes the one and reports the other's ledger."""
        ctx = self.ctx
        check_run_route(ctx.policy, ctx.writer.route_name, ctx.options)  # before any workspace is opened
        owner = (SandboxOwner(self.run_id, self.fence.token, self.rt.store.keys.prefix) if self.fence is not None
                 else None)
        ws = self.workspace = await open_run_workspace(self.rt, self.run_id, self.policy, ctx.options,
                                                       opened.project, opened.project_id, ctx.pack,
                                                       tenant=opened.tenant,
                                                       attempt=owner)
        results = ToolResults()
        self.library = open_library(ctx, self, results)
        self.companions = RunCompanions(ctx, self, self.add_usage)
        additions = writer_additions(
            workspace=ws.additions(), docs=docs_hints(ctx),
            library=self.library.additions if self.library is not None else Additions(),
            companions=self.companions.additions())
        parts = ctx.agent("writer", durable=True, project=opened.project, progress=self._position,
                          pins=pins_provider(self.brief, self, results), additions=additions, models=ctx.writer)
        runner = self.runner = validation_runner(ctx, ws, parts.layers, self._design_source)
        self.writer = await assemble_writer(ctx, opened, ws, parts.layers, runner, results, additions)
        self.mark("setup_done")
        return self.writer

    async def run_phases(self, opened: Opened) -> Verdict:
        """Walk the phases in order; the first one that decides the run ends the walk."""
        verdict: Verdict | None = None
        for phase in self.phases:
            verdict = await phase.run(self, PhaseInput(brief=self.brief, project=opened.project, previous=verdict))
            if verdict.status is not None:
                return verdict
            if self.workspace is not None and self.writer is not None:
                # what this phase wrote (the design) belongs to the files the writer's next checkpoint names: a
                # resume restores them with it (content-addressed: an unchanged tree is the same snapshot)
                await self.workspace.baseline(self.writer.handle.agent)
        return verdict if verdict is not None and verdict.status else Verdict("failed", "no phase decided the run")

    async def agent_turn(self, agent: Agent, role: str, message: Msg | None) -> Turn:
        """One turn of one of the run's agents; its events become run events under ``role``."""
        async def relay(item: Any) -> None:
            self.mapper.agent = role  # sync with the map: no other agent's event is mapped in between
            try:
                events = self.mapper.map(item)
            finally:
                self.mapper.agent = "writer"  # the run's default: the writer's calls are never billed to a role
            for event in events:
                await self.emit(event)
        return await drive_turn(agent, message, relay)

    async def writer_turn(self, message: Msg | None) -> Turn:
        """One writer reply (a build-fix loop); its events become run events. ``None`` continues a turn."""
        agent = self._writer().handle.agent
        if message is not None and not self.task_text:  # the run request: pinned verbatim through compressions
            self.task_text = message.get_text_content() or ""
        if self.companions is not None:  # the reviewer reads the change from here on
            self.companions.turn_started()
        return await self.agent_turn(agent, "writer", message)

    def last_turn(self) -> Turn:
        """The turn a previous attempt completed before it died (its last message, from the restored state)."""
        context = self._writer().handle.agent.state.context
        return Turn(context[-1] if context else None, False)

    async def validate(self) -> Check:
        """The L1 verdict on the project as it is now. The writer's last RunGame check is reused when it passed on
        exactly these sources (same checks, same verdict)."""
        opened, writer = self._opened(), self._writer()
        report_path = self.reports_dir(opened) / "final" / "report.json"
        last = writer.results.last_passing_check()
        if last is not None and last.source_sha256 == snapshot(opened.project)["sha256"]:
            report = await writer.runner.finalize(last.report, report_path.parent, self.brief)
        else:
            report = await writer.runner.validate_project(opened.project, report_path.parent, brief=self.brief)
        for gate in report.gates:
            await self.emit(GateResult(run_id=self.run_id, gate_id=gate.id, layer=gate.layer, passed=gate.passed,
                                       summary=gate.summary))
        if self.library is not None:
            await self.library.observe(report)
        self.mark("validated")
        self.last_check = Check(report, report_path)
        return self.last_check

    async def before_writer(self) -> None:
        if self.library is not None:
            await self.library.baseline()

    async def after_failing_check(self, check: Check) -> tuple[Check, str]:
        if self.library is None:
            return check, ""
        return await self.library.round(check, self.validate)

    async def review(self, report: ValidationReport) -> str:
        if self.companions is None:
            return ""
        found = await self.companions.review(report)
        return found.for_writer() if found is not None else ""

    def best_verified(self) -> Verdict:
        """When a limit stops the run: the best verified result so far (the session's last passing validation,
        else the writer's last check if it passed, else the last validation)."""
        check = self.last_check
        if check is not None and check.report.passed:
            return Verdict(None, "", check.report, check.report_path)
        tool_check = self.writer.results.last_passing_check() if self.writer is not None else None
        if tool_check is not None:
            return Verdict(None, "", tool_check.report, check.report_path if check else None)
        return Verdict(None, "", check.report if check else None, check.report_path if check else None)

    async def deliver(self, opened: Opened, verdict: Verdict) -> RunOutcome:
        """Write ``delivery.json``, then end the run (status, reason, usage, timings, summary, ``run_finished``,
        the project's marker) in one fenced `finish_run`. `StaleLease` when another attempt owns the run."""
        status = verdict.status or "failed"
        guard = self.runner.spend_guard if self.runner is not None else None
        if guard is not None:  # the ledger's view (cap, spent, reserved, calls): usage.budget
            self.mapper.usage.budget = await guard.report()
        await asyncio.shield(self.phase("deliver", status))
        usage = {**self.mapper.usage.report(),  # estimated: offline, or a server that sent no usage for a call
                 "estimated": opened.model_info["kind"] == "offline" or self.mapper.usage.estimated_calls > 0}
        timings = self._timings()
        report = verdict.report
        design = await self._design_record(verdict, report)
        path, record = write_delivery(
            project=opened.project, run_id=self.run_id, project_id=opened.project_id, status=status,
            stop_reason=verdict.reason, brief=self.brief, pack=self.ctx.pack.ref, model=opened.model_info,
            report=report, report_path=verdict.report_path, usage=usage, timings=timings,
            extra={"template": self.ctx.pack.genre_of(opened.project).id, **(design or {})},
            policy_hash=self.policy.source_hash, security_hash=self.rt.security_hash)
        summary = DeliverySummary(verified=bool(report and report.passed),
                                  failed_gates=[g.id for g in report.failures] if report else [],
                                  screenshot=record.get("screenshot"), preview=(record.get("preview") or {}).get("url"),
                                  **({"completion": design["completion"]["summary"]} if design else {}))
        done = await finish_run(self.rt.store, self.run_id, RunEnd(
            status=status, stop_reason=verdict.reason, delivery_path=str(path), usage=usage, timings_ms=timings,
            delivery=summary), self.fence)
        await asyncio.shield(settle_storage(QuotaStore(self.rt.store.r, self.rt.store.keys),
                                            SnapshotGC(self.rt.store.r, self.rt.store.keys),
                                            opened.tenant or LOCAL_TENANT, opened.project_id, opened.project))
        if done.event is not None and done.seq is not None and self.sink is not None:
            await self.sink(done.seq, done.event)
        elif done.outcome != "finished":
            log.warning("run %s had already ended (%s): delivery written, record left as it was", self.run_id,
                        done.status)
        return RunOutcome(run_id=self.run_id, project_id=opened.project_id, project_dir=str(opened.project),
                          status=status, stop_reason=verdict.reason, delivery_path=str(path), delivery=record)

    async def _design_record(self, verdict: Verdict, report: ValidationReport | None) -> dict[str, Any] | None:
        """The design phase's part of the delivery (completion map, final plan); its summary goes on the record."""
        if self.design is None:
            return None
        extra, fields = design_record(self.design, report, verdict.reason, self._opened().project,
                                      verdict.status or "failed")
        await self.update(**fields)
        store_plan(self._opened().project, self.design.plan)  # the next goal version starts from this plan
        self.design.plan.plan_version += 1  # the run's result is a change of the plan: its own plan version
        await self.record_plan(end=extra["plan"]["end"], metrics=extra["plan"]["metrics"])
        return extra

    # --- the run, with every way it can end --------------------------------------------------------------------

    async def _run(self, opened: Opened) -> RunOutcome:
        verdict = Verdict("failed", "")
        abandon = False
        try:
            await self.setup(opened)
            verdict = await self.run_phases(opened)
        except asyncio.CancelledError:
            verdict = self._with_last_check("stopped", "cancelled by request")
            if self.req.cancel is None or not self.req.cancel.is_set():
                if self.fence is not None:
                    abandon = True  # a worker shutting down or losing its lease: the next attempt resumes the run
                raise  # a shutdown, not a request: finish the record below, then let the task end cancelled
        except StaleLease:
            abandon = True  # another attempt owns the run now: write nothing more
            raise
        except RunLimitReached as exc:
            best = self.best_verified()
            verdict = Verdict("stopped", str(exc), best.report, best.report_path)
        except Tier2Error as exc:
            verdict = self._with_last_check("failed", f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # noqa: BLE001 - no silent failure: every crash becomes a terminal reason
            endpoint = endpoint_failure(exc)  # a model server's failure: a short reason, the details in the log
            if endpoint is None:
                log.exception("run %s crashed", self.run_id)
            else:
                log.warning("run %s: %s: %s", self.run_id, type(exc).__name__, str(exc)[:2000])
            verdict = self._with_last_check("failed", endpoint or crash_reason("internal_error", exc))
        finally:
            if self.workspace is not None:
                await asyncio.shield(self.workspace.close())
            if not abandon:
                outcome = await self.deliver(opened, verdict)
                if self.writer is not None:
                    outcome.agent_state = self.writer.handle.agent.state.model_dump_json()
            self.trace.finish("abandoned" if abandon else (verdict.status or "failed"), verdict.reason,
                              usage=self.mapper.usage)
        return outcome

    def _with_last_check(self, status: TerminalStatus, reason: str) -> Verdict:
        """An error verdict that still carries the last validation (as the delivery always has)."""
        check = self.last_check
        return Verdict(status, reason, check.report if check else None, check.report_path if check else None)

    def _timings(self) -> dict[str, int]:
        loop_ms = self.ms("setup_done", "agent_done")
        tool_ms = self.mapper.usage.tool_ms
        return {"setup": self.ms("start", "setup_done"), "agent_loop": loop_ms - sum(tool_ms.values()),
                "build": tool_ms.get("Build", 0),
                "validation": tool_ms.get("RunGame", 0) + self.ms("agent_done", "validated"),
                "file_tools": sum(v for k, v in tool_ms.items() if k not in ("Build", "RunGame")),
                "total": self.ms("start", "end")}

    def reports_dir(self, opened: Opened) -> Path:
        return opened.project / ".tier2" / "reports"

    def _opened(self) -> Opened:
        if self.opened is None:
            raise RuntimeError("the run session is not open")
        return self.opened

    def _writer(self) -> WriterSetup:
        if self.writer is None:
            raise RuntimeError("the run session has no writer yet")
        return self.writer
