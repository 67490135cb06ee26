"""`RunSession.setup`: what plugs into a run's writer — the run's layers (budget, breakers, checkpoints, operations,
tracing, context), its workspace kind, the validation runner, the debug case library, the engine-doc hints, the
context pins, the companions (explorer tool, reviewer) — assembled in one place, in the order the layers need."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from tier2.assembly import build_writer
from tier2.assembly.writer import WriterHandle
from tier2.middleware.budget import spend_guard_of
from tier2.runs.companions import attach_companions
from tier2.runs.context import attach_pins
from tier2.runs.docs import attach_docs
from tier2.runs.l3 import l3_scorer
from tier2.runs.layers import LayerContext, build_run_layers
from tier2.runs.library import attach_library
from tier2.runs.sandboxing import open_run_workspace
from tier2.tools import ToolResults
from tier2.validators import ValidationRunner
from tier2.workspace import workspace_home

if TYPE_CHECKING:
    from tier2.runs.session import Opened, RunSession

__all__ = ["WriterSetup", "setup_writer"]


@dataclass(frozen=True)
class WriterSetup:
    """`RunSession.setup`: the writer agent with its layers, the validation runner and the tools' results log."""

    handle: WriterHandle
    runner: ValidationRunner
    results: ToolResults


async def setup_writer(s: RunSession, opened: Opened) -> WriterSetup:
    """Build the writer of session ``s`` (sets ``s.workspace`` and ``s.runner`` on the way: a failure later in
    setup still closes the workspace and reports the runner's ledger)."""
    cancel = s.req.cancel
    layers = build_run_layers(LayerContext(
        run_id=s.run_id, agent="writer", policy=s.policy, route_name=s.route_name, route=s.route,
        runtime=s.rt, options=dict(s.req.options), fence=s.fence, project=opened.project, emit=s.emit,
        progress=lambda: {"round": s.round, "usage": asdict(s.mapper.usage), "step": s.mapper.step}))
    ws = s.workspace = await open_run_workspace(s.rt, s.run_id, s.policy, dict(s.req.options),
                                                opened.project, opened.project_id, tenant=s.tenant)
    if layers.checkpoint:  # inside the checkpoint layer: each write step's checkpoint names its snapshot
        layers.checkpoint = [*layers.checkpoint, ws.middleware()]
    runner = s.runner = ValidationRunner(ws.pool or s.rt.pool, s.rt.pack, s.policy)
    runner.launcher = ws.launcher
    runner.cache_dir = s.rt.settings.validation_cache
    runner.spend_guard = spend_guard_of(layers.budget)  # the ledger's report goes into the delivery
    runner.l3_scorer = l3_scorer(s.policy, rt=s.rt, run_id=s.run_id, options=dict(s.req.options),
                                 cancelled=(lambda: cancel.is_set()) if cancel is not None else None)
    results = ToolResults()
    checks = attach_library(s, layers, results, s.tenant)
    attach_pins(s, layers, results)  # the context layer's pinned goal, requirements, last failing gate
    companions = attach_companions(s, layers)
    attach_docs(s, layers)  # engine-doc hints on failing results, outside the library's layer
    resume = s.req.resume
    if resume is not None:  # files and conversation agree: the files of the checkpoint this attempt resumes
        await ws.restore(resume.state_json)
    handle = await build_writer(
        project_id=opened.project_id, project=opened.project, pack=s.rt.pack, policy=s.policy,
        model=s.model, runner=runner, reports_dir=s.reports_dir(opened),
        cancelled=(lambda: cancel.is_set()) if cancel is not None else None,
        state_json=resume.state_json if resume else s.req.initial_state, layers=layers,
        fallback_model=s.fallback, results=results,
        home=workspace_home(s.rt.settings.workspaces, opened.project_id),
        write_limit=min(s.rt.security.tools.max_write_bytes,
                        s.policy.tools.max_write_bytes or s.rt.security.tools.max_write_bytes),
        sandbox=ws.sandbox, commands=ws.commands, extra_tools=companions,
        docs_cache=s.rt.settings.docs_cache, max_project_bytes=s.rt.security.tools.max_project_bytes)
    if checks is not None:
        checks.ctx = handle.tools
    if resume is None and layers.checkpoint:
        await ws.baseline(handle.agent)
    return WriterSetup(handle=handle, runner=runner, results=results)

