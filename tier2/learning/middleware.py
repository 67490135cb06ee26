"""The case library in the writer's onion (slot ``learning``, `tier2.middleware.order`): between a failing Build or
RunGame and the writer's next model call.

After the tool ran, the library observes its result (cases get recorded when a gate passes again). When it
failed, exact hits with a fixer are applied and the same check runs again — no model call — up to
``learning.fixer_rounds`` times; the writer then reads the final result with a note of what the library did, the
known fixes it offers and the near matches it recalled. The response's metadata says whether files changed
(``files_changed``: the snapshot layer then snapshots the project for the step's checkpoint).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from agentscope.message import TextBlock, ToolResultState
from agentscope.tool import ToolResponse
from redis.exceptions import RedisError

from tier2.learning.library import LibraryRun, Seen
from tier2.middleware.after_tool import AfterToolMiddleware, response_text
from tier2.toolchain import BuildResult
from tier2.validators import ValidationReport

__all__ = ["CaseLibraryMiddleware", "Recheck", "ToolChecks", "CHECK_TOOLS"]

log = logging.getLogger(__name__)

CHECK_TOOLS = frozenset({"Build", "RunGame"})


@dataclass(frozen=True)
class Recheck:
    """A check run again by the library (not by the model): its outcome and the tool's own text."""

    outcome: BuildResult | ValidationReport
    text: str
    ok: bool


class ToolChecks(Protocol):
    """The run's Build and RunGame, as the library uses them (`tier2.runs.loop.addons.library` binds the real tools)."""

    def latest(self, tool: str) -> BuildResult | ValidationReport | None: ...

    async def again(self, tool: str) -> Recheck: ...


async def observe(run: LibraryRun, outcome: BuildResult | ValidationReport) -> Seen:
    if isinstance(outcome, BuildResult):
        return await run.observe_build(outcome)
    return await run.observe_report(outcome)


class CaseLibraryMiddleware(AfterToolMiddleware):
    def __init__(self, run: LibraryRun, checks: ToolChecks) -> None:
        self.run, self.checks = run, checks

    def applies(self, call: Any) -> bool:
        return call.name in CHECK_TOOLS

    async def after(self, call: Any, final: ToolResponse) -> ToolResponse:
        outcome = self.checks.latest(call.name)
        if outcome is None or (final.metadata or {}).get("replayed"):
            return final
        try:
            return await self._assist(call.name, final, outcome)
        except (RedisError, OSError, ValueError) as exc:  # the library is an aid: its failure never fails the tool
            log.warning("case library skipped after %s: %s: %s", call.name, type(exc).__name__, exc)
            return final

    async def _assist(self, tool: str, final: ToolResponse, outcome: BuildResult | ValidationReport) -> ToolResponse:
        run = self.run
        seen = await observe(run, outcome)
        if seen.ok:
            return final
        text, ok, changed = response_text(final), False, False
        notes: list[str] = []
        applied: list[dict[str, Any]] = []
        for _ in range(max(1, run.policy.fixer_rounds)):
            assist = await run.assist(seen, recall=not changed)
            if not assist.applied:
                if note := run.message(assist):
                    notes.append(note)
                break
            changed = True
            again = await self.checks.again(tool)
            seen = await observe(run, again.outcome)
            await run.settle(assist, seen)
            applied += [{"fixer": a.plan.fixer, "gate": a.signature.gate, "signature": a.signature.key,
                         "files": sorted(a.plan.files), "fixed": a.fixed} for a in assist.applied]
            notes.append(run.message(assist))
            text, ok = again.text, again.ok
            if ok:
                break
        if not changed and not notes:
            return final
        body = text + ("\n\n" + "\n\n".join(notes) if notes else "")
        state = ToolResultState.SUCCESS if ok else final.state if not changed else ToolResultState.ERROR
        meta = {**(final.metadata or {}), "files_changed": changed,
                "case_library": {"applied": applied, "notes": len(notes)}}
        if changed:
            meta["ok"] = ok
        return final.model_copy(update={"content": [TextBlock(text=body)], "state": state, "metadata": meta})
