"""The validation report: every gate verdict with evidence; written as report.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tier2.validators.base import ValidationResult

__all__ = ["ValidationReport"]


class ValidationReport(BaseModel):
    target: str
    mode: str = "contract"
    passed: bool
    gates: list[ValidationResult] = Field(default_factory=list)
    screenshots: list[str] = Field(default_factory=list)
    build: dict[str, Any] | None = None
    duration_ms: int = 0
    notes: list[str] = Field(default_factory=list)

    @property
    def failures(self) -> list[ValidationResult]:
        return [g for g in self.gates if g.blocking]

    def feedback(self) -> str:
        """Agent-facing summary of what blocks delivery (fed back to the writer)."""
        if self.passed:
            return "All L1 gates passed."
        lines = ["These gates FAILED (fix them, rebuild, run the game again):"]
        for g in self.failures:
            lines.append(f"- {g.id}: {g.summary}")
            lines += [f"    {f.message}" for f in g.findings[:6]]
        return "\n".join(lines)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.model_dump(mode="json"), indent=2))
        return path
