"""The delivery record (``delivery.json`` in the project): what was built, how it was verified, what it cost."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from tier2.hostio import ProjectDir, UnsafePath, is_host_file, read_file
from tier2.plan import file_versions, game_version, plan_metrics, spec_versions
from tier2.runs.loop.context import DesignOutcome
from tier2.store.keys import SCHEMA_VERSION
from tier2.store.lifecycle import TerminalStatus
from tier2.validators import ValidationReport
from tier2.workspace import snapshot

log = logging.getLogger(__name__)

__all__ = ["DELIVERY_FILE", "SCREENSHOT_FILE", "design_record", "load_delivery", "write_delivery"]

DELIVERY_FILE = "delivery.json"
SCREENSHOT_FILE = "screenshot.png"
#: keys every delivery record has had since v1
_REQUIRED = ("run_id", "project_id", "status", "stop_reason", "source", "build", "preview", "verification", "usage",
             "timings_ms")


def write_delivery(
    *, project: Path, run_id: str, project_id: str, status: TerminalStatus, stop_reason: str, brief: str, pack: str,
    model: dict[str, Any], report: ValidationReport | None, report_path: Path | None, usage: dict[str, Any],
    timings: dict[str, int], extra: dict[str, Any] | None = None, policy_hash: str | None = None,
    security_hash: str | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Write ``delivery.json`` (and ``screenshot.png``) into the project; return the path and the record.
    ``policy_hash``: the run's hot-policy snapshot; ``security_hash``: the security/build config it ran under.
    Every file is read and written through `ProjectDir` (nothing the sandbox planted at these names is followed:
    a link at ``delivery.json``/``screenshot.png`` is replaced, a screenshot that is no longer a regular file is
    left out)."""
    pdir = ProjectDir(project)
    screenshot = None
    if report is not None and report.screenshots:
        try:
            screenshot = pdir.write_bytes(SCREENSHOT_FILE, read_file(report.screenshots[-1]))
        except FileNotFoundError:
            pass
        except UnsafePath as exc:
            log.warning("delivery: screenshot not copied: %s", exc)
    if screenshot is None and pdir.lstat(SCREENSHOT_FILE) is not None and not pdir.is_file(SCREENSHOT_FILE):
        pdir.remove(SCREENSHOT_FILE)  # a link/FIFO the sandbox left at tier2's name: not the run's screenshot
    build = (report.build if report is not None else None) or {}
    preview = pdir.path("dist/index.html") if pdir.is_file("dist/index.html") else None
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "project_id": project_id,
        "status": status,
        "stop_reason": stop_reason,
        "brief": brief,
        "pack": pack,
        "model": model,
        "source": snapshot(project),
        "build": {
            "ok": bool(build.get("ok")),
            "bundle_path": build.get("bundle_path"),
            "bundle_sha256": build.get("bundle_sha256"),
            "bundle_bytes": build.get("bundle_bytes"),
        },
        "preview": {"path": str(preview) if preview else None, "url": preview.as_uri() if preview else None},
        "verification": {
            "passed": bool(report and report.passed),
            "gates": [g.gate_record() for g in report.gates] if report else [],
            "report": str(report_path) if report_path and is_host_file(report_path) else None,
        },
        "screenshot": str(screenshot) if screenshot else None,
        "usage": usage,
        "timings_ms": timings,
        "policy_hash": policy_hash,
        "security_hash": security_hash,
        "created_at": time.time(),
        **(extra or {}),  # template (the pack genre); the design phase: design, completion (N of M verified), plan
    }
    path = pdir.write_text(DELIVERY_FILE, json.dumps(record, indent=2, ensure_ascii=False))
    return path, record


def design_record(design: DesignOutcome, report: ValidationReport | None, reason: str, project: Path,
                  status: str = "failed") -> tuple[dict[str, Any], dict[str, Any]]:
    """The design phase's part of the delivery — the completion map (every requirement → the gates that verified it,
    or why not; ``structural`` and ``content`` ``{verified, total}`` and the ``content_summary`` line counted
    apart), the final plan with each verified node's state versions, and the plan metrics — and the run record's
    ``plan``/``completion`` fields. Requirement nodes are verified only by gates that passed, never by a ticked
    task; a writer task is verified when all its requirements are. ``reason``: why the run ended."""
    completion = design.completion(report, reason if report is None else "")
    plan, spec = design.plan, design.spec
    executed = set(design.executed)
    if report is not None:
        source = game_version(snapshot(project))  # what a requirement judged in play reads
        files = sorted({i.name.removeprefix("file:") for n in plan.nodes.values() for i in n.inputs
                        if i.name.startswith("file:")})
        current = spec_versions(spec) | file_versions(project, files) | {"source": source}
        verified = {row["id"] for row in completion["requirements"] if row["status"] == "verified"}
        # a writer task is done when its enforce-mode requirements are verified; an observe-mode one that is not
        # (offline cannot draw a backdrop) is reported in the completion map and on the task, never re-tasked
        observed = {row["id"] for row in completion["requirements"] if row.get("mode") == "observe"}
        for row in completion["requirements"]:
            node = f"req.{row['id']}"
            if node not in plan.nodes:
                continue
            now = {i.name: current.get(i.name, "") for i in plan.nodes[node].inputs}
            if row["status"] == "verified":
                reused = plan.nodes[node].versions == now  # same inputs as its last verification: nothing re-run
                plan.verify(node, now, gates=row["gates"] or None, reused=reused or None)
                if not reused:
                    executed.add(node)
            else:
                plan.set(node, "failed", gates=row["gates"] or None, reason=row["reason"] or None)
                executed.add(node)
        for task in [n for n in plan.nodes.values() if n.kind == "task"]:
            ids = [str(i) for i in task.predicate.get("ids") or []]
            if all(i in verified or i in observed for i in ids):
                if task.status != "verified" or task.versions != {i.name: current.get(i.name, "")
                                                                  for i in task.inputs}:
                    plan.verify(task.id, {i.name: current.get(i.name, "") for i in task.inputs},
                                requirements=ids, observed_unverified=[i for i in ids if i not in verified] or None)
            else:
                plan.set(task.id, "failed", unverified=[i for i in ids if i not in verified])
        built = bool(report.build and report.build.get("ok"))
        plan.verify("phase.implement", {"source": source}) if built else plan.set("phase.implement", "failed")
        plan.verify("phase.validate", {"source": source}) if report.passed else plan.set(
            "phase.validate", "failed", failed=[g.id for g in report.failures] or None)
        executed |= {"phase.implement", "phase.validate"}
    else:
        for row in completion["requirements"]:  # no build this run: what the last build verified stays verified
            node = f"req.{row['id']}"
            if node in plan.nodes and row["status"] != "verified" and plan.nodes[node].status != "blocked":
                plan.set(node, "blocked", reason=row["reason"] or None)
    if "delivery" in plan.nodes:
        executed.add("delivery")  # judged again by every run
        plan.set("delivery", "verified" if status == "delivered" else "blocked" if design.end else "failed",
                 reason=(reason or None) if status != "delivered" else None,
                 options=design.end.get("options") or None)
    ids = [str(r["id"]) for r in spec.get("requirements") or []]
    metrics = plan_metrics(plan, executed, ids, design.recovered)
    pending = sorted(n for n, node in plan.nodes.items() if node.status not in ("verified", "skipped"))
    end = design.end or {"kind": status, "reason": reason}
    summary = {**plan.summary(), "metrics": metrics, "pending": pending, "end": end}
    fields = {"plan": summary, "completion": {k: completion[k] for k in (
        "verified", "total", "summary", "genre", "buildable", "unsupported", "structural", "content",
        "content_summary") if k in completion}}
    extra = {"design": {"spec": "design/spec.json", "gdd": "docs/design/GDD.md", "genre": spec.get("genre"),
                        "scope": spec.get("scope"), "goal_version": plan.goal_version,
                        "plan_version": plan.plan_version, "reused": design.reused, "rerun": design.rerun,
                        "edited_by_person": design.edited,
                        "goal": plan.history[-1].model_dump(mode="json") if plan.history else None},
             "completion": completion, "plan": summary}
    return extra, fields


def load_delivery(source: Path | str) -> dict[str, Any]:
    """A ``delivery.json`` (a path, or its text) as a dict of the current version; `ValueError` when it is not a
    delivery record or is newer than this code. v1 (``schema_version`` 1 or absent) is the current version. A path
    is read with `ProjectDir` rules (never through a link, a regular file only)."""
    text = ProjectDir(source.parent).read_text(source.name) if isinstance(source, Path) else source
    record = json.loads(text)
    if not isinstance(record, dict):
        raise ValueError("delivery.json is not a JSON object")
    version = int(record.get("schema_version") or 1)
    if version > SCHEMA_VERSION:
        raise ValueError(f"delivery.json has schema_version {version}, newer than this code ({SCHEMA_VERSION})")
    missing = [k for k in _REQUIRED if k not in record]
    if missing:
        raise ValueError(f"delivery.json lacks {', '.join(missing)}")
    return {**record, "schema_version": SCHEMA_VERSION}
