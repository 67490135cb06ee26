"""The per-run log of what the Build and RunGame tools returned.

The run session owns one `ToolResults` per run and hands it to the tools; each tool call appends its result as a
value (`BuildRecord`, `CheckRecord`). The session decides delivery from this log — it never reads the tool
objects' own state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tier2.toolchain import BuildResult
from tier2.validators import ValidationReport

__all__ = ["BuildRecord", "CheckRecord", "ToolResult", "ToolResults"]


@dataclass(frozen=True)
class BuildRecord:
    """One Build call: the esbuild result."""

    result: BuildResult


@dataclass(frozen=True)
class CheckRecord:
    """One RunGame call: the L1 report and the source snapshot hash it was made on."""

    report: ValidationReport
    source_sha256: str


ToolResult = BuildRecord | CheckRecord


@dataclass
class ToolResults:
    """Append-only, in call order."""

    entries: list[ToolResult] = field(default_factory=list)

    def add(self, result: ToolResult) -> None:
        self.entries.append(result)

    def last_build(self) -> BuildResult | None:
        return next((e.result for e in reversed(self.entries) if isinstance(e, BuildRecord)), None)

    def last_check(self) -> CheckRecord | None:
        return next((e for e in reversed(self.entries) if isinstance(e, CheckRecord)), None)

    def last_passing_check(self) -> CheckRecord | None:
        """The last check, when it passed (a later failing check means the game no longer passes)."""
        last = self.last_check()
        return last if last is not None and last.report.passed else None
