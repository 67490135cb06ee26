"""The reviewer's findings: structured, bounded, parsed strictly from its answer (a model's text is hostile)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["Finding", "parse_findings", "render_findings"]


class Finding(BaseModel):
    """One finding: where (file, line if known), which rule, what, how bad. Advice for the writer, never a verdict."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    file: str = Field(default="", max_length=300)
    line: int | None = Field(default=None, ge=1, le=10_000_000)
    rule: str = Field(min_length=1, max_length=80)
    message: str = Field(min_length=1, max_length=600)
    severity: Literal["error", "warning", "info"] = "warning"

    def show(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line else (self.file or "project")
        return f"[{self.severity}] {where} ({self.rule}): {self.message}"


def _first_object(text: str) -> Any:
    """The first JSON value that parses starting at a ``{`` or ``[`` of ``text`` (fences and prose around it
    ignored); None when there is none."""
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(text, i)
            except (json.JSONDecodeError, RecursionError):
                continue
            return value
    return None


def parse_findings(text: str, limit: int = 20) -> tuple[list[Finding], str]:
    """``(findings, problem)``: the findings of an answer ``{"findings": [...]}`` (or a bare list), at most
    ``limit``; ``problem`` says what was dropped or why nothing parsed ("" when everything parsed)."""
    value = _first_object(text or "")
    if isinstance(value, dict):
        value = value.get("findings")
    if not isinstance(value, list):
        return [], "the reviewer's answer holds no JSON findings list"
    out: list[Finding] = []
    dropped = 0
    for item in value:
        if len(out) >= limit:
            dropped += 1
            continue
        try:
            out.append(Finding.model_validate(item))
        except ValidationError:
            dropped += 1
    return out, (f"{dropped} finding(s) dropped (invalid or over the limit of {limit})" if dropped else "")


def render_findings(findings: list[Finding], limit_chars: int = 6000) -> str:
    """Findings as lines for the writer's next message, bounded."""
    lines: list[str] = []
    used = 0
    for f in findings:
        line = f"- {f.show()}"
        if used + len(line) > limit_chars:
            lines.append(f"- ... {len(findings) - len(lines)} more finding(s) cut")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)
