"""The writer's Build and RunGame tools (thin adapters: parse, call the runner, format the result)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentscope.message import TextBlock, ToolResultState
from agentscope.permission import PermissionBehavior, PermissionContext, PermissionDecision
from agentscope.tool import ToolBase, ToolChunk

from tier2.packs import Pack
from tier2.toolchain import run_build
from tier2.toolchain.esbuild import Launcher
from tier2.tools.results import BuildRecord, CheckRecord, ToolResults
from tier2.validators import ValidationRunner
from tier2.workspace import snapshot

__all__ = ["GameToolContext", "BuildTool", "RunGameTool", "make_game_tools"]


@dataclass
class GameToolContext:
    """Per-run binding of the tools to one project. Each call's result is appended to ``results`` (the run
    session's log); the tools keep no other state."""

    project: Path
    pack: Pack
    runner: ValidationRunner
    reports_dir: Path
    build_timeout_s: float = 60.0
    results: ToolResults = field(default_factory=ToolResults)
    runs: int = 0
    #: the workspace sandbox's launcher: builds run inside it (None: on the host)
    launcher: Launcher | None = None


def _allow(name: str) -> PermissionDecision:
    return PermissionDecision(behavior=PermissionBehavior.ALLOW, message=f"{name} is always allowed")


class BuildTool(ToolBase):
    name = "Build"
    description = (
        "Bundle the project with esbuild (src/main.js -> dist/bundle.js, plus dist/index.html). "
        "Returns OK with the bundle size, or every error with file:line:column."
    )
    input_schema: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    is_concurrency_safe = False
    is_read_only = False

    def __init__(self, ctx: GameToolContext) -> None:
        super().__init__()
        self.ctx = ctx

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> PermissionDecision:
        return _allow(self.name)

    async def call(self, **_: Any) -> ToolChunk:
        self.ctx.runner.pool.warm()  # RunGame comes next: the browser launches while esbuild works
        result = await run_build(self.ctx.pack, self.ctx.project, timeout_s=self.ctx.build_timeout_s,
                                 launcher=self.ctx.launcher)
        self.ctx.results.add(BuildRecord(result))
        if result.ok:
            text = f"BUILD OK in {result.duration_ms} ms: {result.bundle_path} ({result.bundle_bytes} bytes)."
            return ToolChunk(content=[TextBlock(text=text)], state=ToolResultState.SUCCESS, metadata={"ok": True})
        lines = [f"BUILD FAILED ({len(result.errors)} error(s)):"] + [f"- {e}" for e in result.errors[:10]]
        return ToolChunk(content=[TextBlock(text="\n".join(lines))], state=ToolResultState.ERROR,
                         metadata={"ok": False, "errors": [str(e) for e in result.errors]})


class RunGameTool(ToolBase):
    name = "RunGame"
    description = (
        "Load the built game (dist/index.html) in headless Chromium on a virtual clock, play a short script "
        "and run the L1 gates. Returns boot status, each gate's verdict, errors, and screenshot paths. "
        "Call Build first."
    )
    input_schema: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    is_concurrency_safe = False
    is_read_only = True

    def __init__(self, ctx: GameToolContext) -> None:
        super().__init__()
        self.ctx = ctx

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> PermissionDecision:
        return _allow(self.name)

    async def call(self, **_: Any) -> ToolChunk:
        ctx = self.ctx
        build = ctx.results.last_build()
        if build is None or not build.ok:
            return ToolChunk(content=[TextBlock(text="No successful build yet: call Build first.")],
                             state=ToolResultState.ERROR)
        ctx.runs += 1
        out = ctx.reports_dir / f"check-{ctx.runs:02d}"
        source = snapshot(ctx.project)["sha256"]
        report = await ctx.runner.validate_project(ctx.project, out, build=build)
        ctx.results.add(CheckRecord(report, source))
        lines = [f"GAME {'PASSED' if report.passed else 'FAILED'} the L1 gates ({report.duration_ms} ms)."]
        for g in report.gates:
            lines.append(f"- {'PASS' if g.passed else 'FAIL'} {g.id}: {g.summary}")
            lines += [f"    {f.message}" for f in g.findings[:5]]
        if report.screenshots:
            lines.append("Screenshots: " + ", ".join(report.screenshots))
        return ToolChunk(content=[TextBlock(text="\n".join(lines))],
                         state=ToolResultState.SUCCESS if report.passed else ToolResultState.ERROR,
                         metadata={"ok": report.passed, "failed": [g.id for g in report.failures]})


def make_game_tools(ctx: GameToolContext) -> list[ToolBase]:
    return [BuildTool(ctx), RunGameTool(ctx)]
