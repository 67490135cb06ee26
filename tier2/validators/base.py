"""The validator result model. Validators never decide consequences; `runner` owns policy."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Layer", "Mode", "Finding", "ValidationResult"]

Layer = Literal["L1", "L2", "L3"]
Mode = Literal["observe", "enforce"]
#: how a game is played: through its ``window.__TIER2__`` hook, or by engine introspection
ProbeMode = Literal["contract", "generic"]


class Finding(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    message: str
    severity: Literal["error", "warning", "info"] = "error"
    #: the rule of hot policy ``verdicts:`` this finding belongs to (None: a defect, always a verdict); the runner
    #: makes it a warning where that rule is a finding in the validation's mode
    rule: str | None = None


class ValidationResult(BaseModel):
    """What one gate saw: pass/fail plus findings and evidence (paths, numbers)."""

    model_config = ConfigDict(extra="forbid")
    id: str
    layer: Layer
    mode: Mode = "enforce"
    passed: bool
    summary: str = ""
    findings: list[Finding] = Field(default_factory=list)
    evidence: dict[str, Any] = Field(default_factory=dict)
    duration_ms: int = 0

    @property
    def blocking(self) -> bool:
        """True when this result must stop delivery (failed and enforced, never L3)."""
        return (not self.passed) and self.mode == "enforce" and self.layer != "L3"

    def gate_record(self) -> dict[str, Any]:
        """The compact form stored in delivery.json."""
        return {
            "id": self.id, "layer": self.layer, "mode": self.mode, "passed": self.passed,
            "summary": self.summary, "evidence": self.evidence,
        }
