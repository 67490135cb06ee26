"""The debug case library in a run: its `LibraryRun`, the writer's ``learning`` layer bound to the run's real
Build and RunGame tools, and the library's turn between a failing validation and the next fix round."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from tier2.learning import CaseLibraryMiddleware, LibraryRun, Recheck
from tier2.middleware import RunLayers
from tier2.store.trajectory import TrajectoryStore
from tier2.toolchain import BuildResult
from tier2.tools import BuildTool, GameToolContext, RunGameTool, ToolResults
from tier2.validators import ValidationReport

if TYPE_CHECKING:
    from tier2.runs.session import Check, RunSession

__all__ = ["RunToolChecks", "attach_library", "library_round", "open_library"]

log = logging.getLogger(__name__)


class RunToolChecks:
    """`tier2.learning.ToolChecks` over the writer's own tools: a re-check is recorded in the run's `ToolResults`
    like any Build or RunGame (the session's final validation may reuse it)."""

    def __init__(self, results: ToolResults, ctx: GameToolContext | None = None) -> None:
        self.results, self.ctx = results, ctx  # ctx: bound once the writer's tools exist

    def latest(self, tool: str) -> BuildResult | ValidationReport | None:
        if tool == "Build":
            return self.results.last_build()
        check = self.results.last_check()
        return check.report if check is not None else None

    async def again(self, tool: str) -> Recheck:
        if self.ctx is None:
            raise RuntimeError("the case library's checks are not bound to the writer's tools")
        chunk = await BuildTool(self.ctx).call()
        build = self.results.last_build()
        text = "\n".join(getattr(b, "text", "") for b in chunk.content)
        if tool == "Build" or build is None or not build.ok:
            assert build is not None
            return Recheck(build, text, build.ok)
        chunk = await RunGameTool(self.ctx).call()
        check = self.results.last_check()
        text = "\n".join(getattr(b, "text", "") for b in chunk.content)
        if check is None:
            return Recheck(build, text, False)
        return Recheck(check.report, text, check.report.passed)


def open_library(session: RunSession, tenant: str | None) -> LibraryRun | None:
    """The run's view of the library (None when the policy turns cases off)."""
    rt, opened = session.rt, session.opened
    if rt.cases is None or opened is None or not session.policy.learning.cases:
        return None
    usage = session.mapper.usage
    return LibraryRun(
        rt.cases, run_id=session.run_id, tenant=tenant, pack=rt.pack, project=opened.project, brief=session.brief,
        policy=session.policy.learning, emit=session.emit, redactor=rt.redactor,
        usage=lambda: (usage.model_calls, usage.input_tokens + usage.output_tokens),
        trajectory=TrajectoryStore(rt.store.r, rt.store.keys))


def attach_library(session: RunSession, layers: RunLayers, results: ToolResults, tenant: str | None
                   ) -> RunToolChecks | None:
    """Open the run's library and put its layer in the writer's onion; the checks are bound to the writer's tools
    once they exist (`RunToolChecks.ctx`)."""
    session.library = open_library(session, tenant)
    if session.library is None:
        return None
    checks = RunToolChecks(results)
    layers.learning = [CaseLibraryMiddleware(session.library, checks)]
    return checks


async def library_round(session: RunSession, check: Check) -> tuple[Check, str]:
    """Between a failing validation and the writer's next turn: apply the fixers of exact hits and validate again
    (no model call), up to ``learning.fixer_rounds``; returns the last check and what the writer should read."""
    library = session.library
    if library is None or check.report.passed:
        return check, ""
    try:
        return await _round(session, library, check)
    except (RedisError, OSError, ValueError) as exc:  # the library is an aid: its failure never fails the run
        log.warning("run %s: case library skipped: %s: %s", session.run_id, type(exc).__name__, exc)
        return session.last_check or check, ""


async def _round(session: RunSession, library: LibraryRun, check: Check) -> tuple[Check, str]:
    seen = session.last_seen or await library.observe_report(check.report)
    notes: list[str] = []
    for _ in range(max(1, session.policy.learning.fixer_rounds)):
        assist = await library.assist(seen)
        if not assist.applied:
            if note := library.message(assist):
                notes.append(note)
            break
        check = await session.validate()
        seen = session.last_seen or await library.observe_report(check.report)
        await library.settle(assist, seen)
        notes.append(library.message(assist))
        if check.report.passed:
            break
    return check, "\n\n".join(n for n in notes if n)
