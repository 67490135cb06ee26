"""The validation report: every gate verdict with evidence; written as report.json."""

from __future__ import annotations

import base64
import html
import json
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from pydantic import BaseModel, Field

from tier2.hostio import read_file, write_file
from tier2.validators.base import ProbeMode, ValidationResult

__all__ = ["ValidationReport"]


class ValidationReport(BaseModel):
    target: str
    mode: ProbeMode = "contract"
    passed: bool
    gates: list[ValidationResult] = Field(default_factory=list)
    screenshots: list[str] = Field(default_factory=list)
    build: dict[str, Any] | None = None
    duration_ms: int = 0
    notes: list[str] = Field(default_factory=list)
    report_path: str | None = None
    timings_ms: dict[str, int] = Field(default_factory=dict)
    #: generic targets: ``{kind: built|source, evidence: [...], entries: [...]}`` (how the folder was served)
    site: dict[str, Any] | None = None
    #: what the probe measured and decided: wall-clock budget (frame cost, raised?), discovered controls, sweep
    probe: dict[str, Any] = Field(default_factory=dict)
    #: findings, not verdicts: what a rule of hot policy ``verdicts:`` reports in this mode without failing
    #: (``{gate, rule, message, evidence?}``: a faint credit line of a game nobody here wrote, a blocked analytics
    #: request...)
    findings: list[dict[str, Any]] = Field(default_factory=list)

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
        """Write ``report.json`` and a self-contained ``report.html`` (screenshots inlined) beside it — through
        `tier2.hostio` (under a project's ``.tier2/``, no link the sandbox planted is followed)."""
        self.report_path = str(path)
        write_file(path, json.dumps(self.model_dump(mode="json"), indent=2))
        write_file(path.with_suffix(".html"), self.to_html())
        return path

    def to_html(self) -> str:
        rows = []
        for g in self.gates:
            cls = "pass" if g.passed else ("observe" if not g.blocking else "fail")
            label = "PASS" if g.passed else ("FAIL (observe)" if not g.blocking else "FAIL")
            findings = "".join(f"<li>{html.escape(f.message)}</li>" for f in g.findings[:8])
            rows.append(f"<tr><td><code>{html.escape(g.id)}</code></td><td>{g.layer}</td>"
                        f"<td class='s {cls}'>{label}</td><td>{html.escape(g.summary)}"
                        f"{'<ul>' + findings + '</ul>' if findings else ''}</td></tr>")
        shots = []
        for shot in self.screenshots:
            p = Path(shot)
            try:  # a regular file, never through a link (a planted link would inline another file)
                data = base64.b64encode(read_file(p, max_bytes=2_000_000)).decode()
            except OSError:
                continue
            shots.append(f"<figure><img alt='{html.escape(p.name)}' src='data:image/png;base64,{data}'>"
                         f"<figcaption>{html.escape(p.name)}</figcaption></figure>")
        notes = "".join(f"<p>{html.escape(n)}</p>" for n in self.notes)
        found = "".join(f"<li><code>{html.escape(str(f.get('rule')))}</code> {html.escape(str(f.get('message')))}"
                        + (f"<br><small>{html.escape(json.dumps(f['evidence'])[:400])}</small>" if f.get("evidence")
                           else "") + "</li>" for f in self.findings)
        findings = (f"<h2>Findings (not verdicts)</h2><ul class='findings'>{found}</ul>" if found else "")
        controls = self._controls_html()
        page = Template(resources.files("tier2.validators").joinpath("report_template.html").read_text())
        return page.substitute(target=html.escape(self.target), verdict="PASS" if self.passed else "FAIL",
                               mode=html.escape(self.mode), duration=self.duration_ms, rows="\n".join(rows),
                               notes=notes, shots="".join(shots), findings=findings, controls=controls)

    def _controls_html(self) -> str:
        """The controls the generic probe found and the actions it tried, with what each changed."""
        found, sweep = self.probe.get("controls") or {}, self.probe.get("sweep") or {}
        if not found and not sweep:
            return ""
        keys = ", ".join(found.get("keys") or []) or "none"
        rows = "".join(f"<tr><td><code>{html.escape(str(t.get('action')))}</code></td>"
                       f"<td>{'reacted' if t.get('reacted') else ('seen, undone' if t.get('transient') else '—')}"
                       f"</td><td>{html.escape(', '.join(t.get('changed') or [])[:200])}</td></tr>"
                       for t in sweep.get("tried", []))
        return (f"<h2>Controls found and tried</h2><p>keys: {html.escape(keys)}; pointer: "
                f"{'yes' if found.get('pointer') else 'no'}; interactive objects: "
                f"{found.get('interactive_objects', 0)}</p>"
                + (f"<table><thead><tr><th>action</th><th>result</th><th>what changed</th></tr></thead><tbody>{rows}"
                   "</tbody></table>" if rows else ""))
