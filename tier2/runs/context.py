"""What a run pins in its agents' context (`tier2.context`): the goal, the design's requirements with their status,
the last failing gate with its evidence. Files written are tracked by the context layer itself (from the Write and
Edit calls it sees), so they survive a resume with the agent's state.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tier2.context import ContextMiddleware, Pins
from tier2.middleware import RunLayers
from tier2.tools import ToolResults
from tier2.validators import ValidationReport

if TYPE_CHECKING:
    from tier2.runs.session import RunSession

__all__ = ["attach_pins", "failure_text", "run_pins"]

EVIDENCE_CHARS = 400


def failure_text(report: ValidationReport) -> str:
    """The first blocking gate of a report with its evidence (empty when the report passed)."""
    for gate in report.failures:
        evidence = json.dumps(gate.evidence, sort_keys=True, default=str)[:EVIDENCE_CHARS] if gate.evidence else ""
        return f"{gate.id}: {gate.summary}" + (f" (evidence: {evidence})" if evidence else "")
    return ""


def run_pins(session: RunSession, results: ToolResults) -> Pins:
    """The run's pins as they stand now (called at each compression)."""
    design = session.design
    goal = (getattr(design, "goal", "") or session.brief) if design is not None else session.brief
    check = results.last_check()
    report = check.report if check is not None else (session.last_check.report if session.last_check else None)
    requirements: dict[str, str] = {}
    if design is not None:
        for row in design.completion(report, "")["requirements"]:
            requirements[str(row["id"])] = f"{row['status']} — {' '.join(str(row.get('text', '')).split())[:160]}"
    build = results.last_build()
    failure = ""
    if build is not None and not build.ok:
        failure = "Build: " + "; ".join(str(e) for e in build.errors[:3])[:EVIDENCE_CHARS]
    elif report is not None:
        failure = failure_text(report)
    return Pins(goal=" ".join(goal.split())[:2000], requirements=requirements, last_failure=failure)


def attach_pins(session: RunSession, layers: RunLayers, results: ToolResults) -> None:
    """Give the run's context layer its pins provider."""
    for layer in layers.context:
        if isinstance(layer, ContextMiddleware):
            layer.pins = lambda: run_pins(session, results)
