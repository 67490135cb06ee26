"""`RunSession.setup`'s parts: what plugs into a run's writer, each built complete and handed back to the session.

The writer's layers come from `RunContext.agent` (budget, breakers, checkpoints, operations, tracing, context with
the run's pins) plus the add-ons' `Additions` in the order `writer_additions` declares; the validation runner is
built with everything it needs (workspace launcher, cache, the run's spend guard, the L3 scorer, the design as it
stands); the writer agent last (`assemble_writer`), restored from the checkpoint an attempt resumes.
"""

from __future__ import annotations

from tier2.assembly import build_writer
from tier2.middleware import RunLayers
from tier2.middleware.budget import spend_guard_of
from tier2.runs.loop.addons.l3 import l3_scorer
from tier2.runs.loop.context import Opened, RunContext, WriterSetup
from tier2.runs.loop.layers import Additions
from tier2.runs.loop.sandboxing import RunWorkspace
from tier2.tools import ToolResults
from tier2.validators import ValidationRunner
from tier2.validators.runner import DesignSource
from tier2.workspace import workspace_home

__all__ = ["assemble_writer", "validation_runner", "writer_additions"]


def writer_additions(*, workspace: Additions = Additions(), docs: Additions = Additions(),
                     library: Additions = Additions(), companions: Additions = Additions()) -> list[Additions]:
    """The order the add-ons join the writer's slots: the workspace's snapshot layer inside the checkpoint layer
    (each write step's checkpoint names its snapshot); the engine-docs hints outside the case library in
    ``learning`` (they read the result the library leaves); the companions' stop layer after the breakers."""
    return [workspace, docs, library, companions]


def validation_runner(ctx: RunContext, ws: RunWorkspace, layers: RunLayers, design: DesignSource,
                      ) -> ValidationRunner:
    """The run's validation runner: builds in the run's workspace, the run's cache, the ledger's guard (its report
    goes into the delivery), the L3 scorer on the run's layers, and the run's design at each validation."""
    rt = ctx.rt
    return ValidationRunner(ws.pool or rt.pool, ctx.pack, ctx.policy, launcher=ws.launcher,
                            cache_dir=rt.settings.validation_cache, spend_guard=spend_guard_of(layers.budget),
                            l3_scorer=l3_scorer(ctx.policy, ctx), design=design)


async def assemble_writer(ctx: RunContext, opened: Opened, ws: RunWorkspace, layers: RunLayers,
                          runner: ValidationRunner, results: ToolResults, additions: list[Additions],
                          ) -> WriterSetup:
    """The writer agent with its layers and tools; a resumed attempt's files are restored from its checkpoint
    first (files and conversation agree), a fresh run's baseline snapshot is taken after."""
    rt, policy, req = ctx.rt, ctx.policy, ctx.req
    resume = req.resume
    if resume is not None:
        await ws.restore(resume.state_json)
    handle = await build_writer(
        project_id=opened.project_id, project=opened.project, pack=ctx.pack, policy=policy,
        model=ctx.writer.model, runner=runner, reports_dir=opened.project / ".tier2" / "reports",
        cancelled=ctx.cancelled, state_json=resume.state_json if resume else req.initial_state, layers=layers,
        fallback_model=ctx.writer.fallback, results=results,
        home=workspace_home(rt.settings.workspaces, opened.project_id),
        write_limit=min(rt.security.tools.max_write_bytes,
                        policy.tools.max_write_bytes or rt.security.tools.max_write_bytes),
        sandbox=ws.sandbox, commands=ws.commands, extra_tools=[t for a in additions for t in a.tools],
        docs_cache=rt.settings.docs_cache, max_project_bytes=rt.security.tools.max_project_bytes)
    if resume is None:
        await ws.baseline(handle.agent)
    return WriterSetup(handle=handle, runner=runner, results=results)
