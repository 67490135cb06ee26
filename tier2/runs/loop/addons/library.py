"""The debug case library in a run (`RunLibrary`): its `LibraryRun`, the writer's ``learning`` layer bound to the
run's real Build and RunGame tools, what it saw of each validation, and its turn between a failing validation and
the next fix round."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from redis.exceptions import RedisError

from tier2.learning import CaseLibraryMiddleware, LibraryRun, Recheck, Seen
from tier2.runs.loop.context import Check, RunContext, RunView
from tier2.runs.loop.layers import Additions
from tier2.store.trajectory import TrajectoryStore
from tier2.toolchain import BuildResult
from tier2.tools import BuildTool, GameToolContext, RunGameTool, ToolResults
from tier2.validators import ValidationReport

__all__ = ["RunLibrary", "RunToolChecks", "open_library"]

log = logging.getLogger(__name__)


class RunToolChecks:
    """`tier2.learning.ToolChecks` over the writer's own tools: a re-check is recorded in the run's `ToolResults`
    like any Build or RunGame (the session's final validation may reuse it). ``tools``: the writer's tool context
    once the writer exists (the library's layer is built before the writer it wraps)."""

    def __init__(self, results: ToolResults, tools: Callable[[], GameToolContext | None]) -> None:
        self.results, self.tools = results, tools

    def latest(self, tool: str) -> BuildResult | ValidationReport | None:
        if tool == "Build":
            return self.results.last_build()
        check = self.results.last_check()
        return check.report if check is not None else None

    async def again(self, tool: str) -> Recheck:
        ctx = self.tools()
        if ctx is None:
            raise RuntimeError("the case library's checks are not bound to the writer's tools")
        chunk = await BuildTool(ctx).call()
        build = self.results.last_build()
        text = "\n".join(getattr(b, "text", "") for b in chunk.content)
        if tool == "Build" or build is None or not build.ok:
            assert build is not None
            return Recheck(build, text, build.ok)
        chunk = await RunGameTool(ctx).call()
        check = self.results.last_check()
        text = "\n".join(getattr(b, "text", "") for b in chunk.content)
        if check is None:
            return Recheck(build, text, False)
        return Recheck(check.report, text, check.report.passed)


class RunLibrary:
    """The case library's part in one run: its writer layer (`additions`), what it saw of the last validation, and
    its turn after a failing one (`round`). An aid: its failure never fails the run."""

    def __init__(self, library: LibraryRun, checks: RunToolChecks, run_id: str, fixer_rounds: int) -> None:
        self.library, self.run_id, self.fixer_rounds = library, run_id, fixer_rounds
        self.additions = Additions(learning=(CaseLibraryMiddleware(library, checks),))
        self.last_seen: Seen | None = None  # the last validation as the library saw it

    async def baseline(self) -> None:
        await self.library.baseline()

    async def observe(self, report: ValidationReport) -> None:
        """After every validation of the run (the session's)."""
        self.last_seen = await self.library.observe_report_safely(report)

    async def round(self, check: Check, validate: Callable[[], Awaitable[Check]]) -> tuple[Check, str]:
        """Between a failing validation and the writer's next turn: apply the fixers of exact hits and validate
        again (``validate``: the session's, no model call), up to ``learning.fixer_rounds``; returns the last check
        and what the writer should read."""
        if check.report.passed:
            return check, ""
        latest = [check]

        async def again() -> Check:
            latest.append(await validate())
            return latest[-1]
        try:
            return await self._round(check, again)
        except (RedisError, OSError, ValueError) as exc:  # the library is an aid: its failure never fails the run
            log.warning("run %s: case library skipped: %s: %s", self.run_id, type(exc).__name__, exc)
            return latest[-1], ""

    async def _round(self, check: Check, validate: Callable[[], Awaitable[Check]]) -> tuple[Check, str]:
        library = self.library
        seen = self.last_seen or await library.observe_report(check.report)
        notes: list[str] = []
        for _ in range(max(1, self.fixer_rounds)):
            assist = await library.assist(seen)
            if not assist.applied:
                if note := library.message(assist):
                    notes.append(note)
                break
            check = await validate()
            seen = self.last_seen or await library.observe_report(check.report)
            await library.settle(assist, seen)
            notes.append(library.message(assist))
            if check.report.passed:
                break
        return check, "\n\n".join(n for n in notes if n)


def open_library(ctx: RunContext, view: RunView, results: ToolResults) -> RunLibrary | None:
    """The run's view of the library (None when the policy turns cases off or the run has no project yet)."""
    rt, opened = ctx.rt, view.opened
    if rt.cases is None or opened is None or not ctx.policy.learning.cases:
        return None

    def usage() -> tuple[int, int]:
        u = view.usage
        return u.model_calls, u.input_tokens + u.output_tokens

    library = LibraryRun(
        rt.cases, run_id=ctx.run_id, tenant=opened.tenant, pack=ctx.pack, project=opened.project, brief=ctx.brief,
        policy=ctx.policy.learning, emit=ctx.emit, redactor=rt.redactor, usage=usage,
        trajectory=TrajectoryStore(rt.store.r, rt.store.keys))
    checks = RunToolChecks(results, lambda: view.writer.handle.tools if view.writer is not None else None)
    return RunLibrary(library, checks, ctx.run_id, ctx.policy.learning.fixer_rounds)
