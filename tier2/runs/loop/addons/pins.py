"""What a run pins in its agents' context (`tier2.context`): the goal, the design's requirements with their status,
the last failing gate with its evidence. Files written are tracked by the context layer itself (from the Write and
Edit calls it sees), so they survive a resume with the agent's state.
"""

from __future__ import annotations

import json

from tier2.context import Pins, PinsProvider
from tier2.runs.loop.context import RunView
from tier2.tools import ToolResults
from tier2.validators import ValidationReport

__all__ = ["failure_text", "pins_provider", "run_pins"]

EVIDENCE_CHARS = 400


def failure_text(report: ValidationReport) -> str:
    """The first blocking gate of a report with its evidence (empty when the report passed)."""
    for gate in report.failures:
        evidence = json.dumps(gate.evidence, sort_keys=True, default=str)[:EVIDENCE_CHARS] if gate.evidence else ""
        return f"{gate.id}: {gate.summary}" + (f" (evidence: {evidence})" if evidence else "")
    return ""


def run_pins(brief: str, view: RunView, results: ToolResults) -> Pins:
    """The run's pins as they stand now (called at each compression)."""
    design = view.design
    goal = (design.goal or brief) if design is not None else brief
    check = results.last_check()
    report = check.report if check is not None else (view.last_check.report if view.last_check else None)
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
    return Pins(goal=" ".join(goal.split())[:2000], requirements=requirements, last_failure=failure,
                task=view.task_text)


def pins_provider(brief: str, view: RunView, results: ToolResults) -> PinsProvider:
    """The writer's context layer's pins: the run's state read at each compression."""
    return lambda: run_pins(brief, view, results)
