"""What a tenant sees of stored records: explicit allow-lists, never the stored dicts as they are.

Stored run records, attempts, threads, events and ``delivery.json`` carry operator details — host names, pids,
worker names (``<host>-<pid>-…``), absolute server paths — that a tenant must not see. Each view here builds
its response model (`tier2.service.schemas`, ``extra="forbid"``) from the fields the model declares (`allowed`);
a field added to a stored record stays private until it is added to a model. Paths inside the project become
project-relative (``dist/index.html``), files the API serves get their artifact URL, worker names lose their host
and pid, and remaining server roots or pids inside free text (a stop reason, a tool summary) are masked.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import tempfile
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from tier2.service.schemas import (
    AcceptedLinks,
    AttemptView,
    CaseCallView,
    DeliveryView,
    ModelCallView,
    ProjectView,
    RunLinks,
    RunView,
    ThreadView,
    ToolCallView,
    TrajectorySummary,
    TrajectoryView,
)
from tier2.service.schemas_browse import DesignView, ReportView, RunSummary
from tier2.service.schemas_plans import PlanList, PlanVersionView
from tier2.settings.loader import REPO_ROOT, Settings
from tier2.store.records import RunRecord, load_run_record
from tier2.store.trajectory import CallRecord

__all__ = ["PathMask", "accepted_links", "allowed", "mask_for", "public_attempt", "public_delivery", "public_design",
           "public_event", "public_plan_list", "public_plan_version", "public_project", "public_report", "public_run",
           "public_run_summary", "public_thread", "public_trajectory", "public_worker", "scrub"]

M = TypeVar("M", bound=BaseModel)
_DEFAULT_WORKER = re.compile(r"^.+-\d+-([0-9a-f]{6})$")
_HOST = socket.gethostname() if len(socket.gethostname()) >= 4 else ""
_PID = re.compile(r"\bpid[ =:]*\d+")
#: an absolute path of two or more components not covered by a known root: only its last component is shown
_ABS_PATH = re.compile(r"(?<![\w:/.~-])/(?!v1/)(?:[\w.@+~-]+/)+([\w.@+~-]*)")  # API URLs (/v1/...) stay


def public_worker(name: object) -> str | None:
    """A worker's name without host or pid: a default name (``<host>-<pid>-<hex6>``, `runs.process.worker.worker_name`)
    becomes ``worker-<hex6>``; a name the operator chose (``tier2 worker --name w1``) is shown as it is, unless it
    holds this host's name, then it becomes an opaque hash."""
    if not name:
        return None
    text = str(name)
    default = _DEFAULT_WORKER.match(text)
    if default:
        return f"worker-{default.group(1)}"
    if _HOST and _HOST in text:
        return "w-" + hashlib.sha256(text.encode()).hexdigest()[:12]
    return text


class PathMask:
    """Turns server paths inside strings into project-relative paths or placeholders."""

    def __init__(self, project_dir: str | None, roots: list[Path]) -> None:
        pairs: list[tuple[str, str]] = []
        if project_dir:
            pairs += [(project_dir.rstrip("/") + "/", ""), (project_dir.rstrip("/"), ".")]
        for root in {str(r) for r in roots} | {str(r.resolve()) for r in roots}:
            text = root.rstrip("/")
            if len(text) > 1:
                pairs += [(text + "/", "…/"), (text, "…")]
        self.pairs = sorted(pairs, key=lambda p: -len(p[0]))  # the longest (most specific) prefix first

    def text(self, value: str) -> str:
        for prefix, repl in self.pairs:
            if prefix in value:
                value = value.replace(prefix, repl)
        value = _ABS_PATH.sub(lambda m: "…/" + m.group(1), value)
        return _PID.sub("pid (hidden)", value)

    def known(self, value: str) -> str:
        """Only the known roots replaced (the project directory, the server's roots): for a document whose other
        slashes are content (a design document), not paths."""
        for prefix, repl in self.pairs:
            if prefix in value:
                value = value.replace(prefix, repl)
        return value

    def relative(self, value: object) -> str | None:
        """A project-relative path for a path inside the project, else None."""
        if not isinstance(value, str) or not value:
            return None
        masked = self.text(value)
        return None if masked.startswith(("/", "…")) else masked.removeprefix("./")

    def deep(self, value: Any, keep: frozenset[str] = frozenset()) -> Any:
        """``value`` with every string inside masked (the keys in ``keep`` left as they are)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: v if k in keep else self.deep(v, keep) for k, v in value.items()}
        if isinstance(value, list):
            return [self.deep(v, keep) for v in value]
        return value


_NO_ROOTS = PathMask(None, [])


def scrub(text: str) -> str:
    """Free text for a client (an error message): absolute paths cut to their last component, pids hidden."""
    return _NO_ROOTS.text(text)


def mask_for(settings: Settings, project_dir: str | None) -> PathMask:
    """The mask for one run: its project directory becomes relative, every server root a placeholder."""
    roots = [settings.workspaces, settings.home, settings.packs_dir, settings.config_dir,
             *([settings.skills_dir] if settings.skills_dir else []), REPO_ROOT, Path(tempfile.gettempdir())]
    return PathMask(project_dir, roots)


# -- allow-lists ---------------------------------------------------------------------------------------------


def _models_in(annotation: Any) -> tuple[type[BaseModel] | None, type[BaseModel] | None, type[BaseModel] | None]:
    """(model, list item model, dict value model) found in a field's annotation (Optional unwrapped)."""
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            found = _models_in(arg)
            if any(found):
                return found
        return None, None, None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, None, None
    if origin is list and args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
        return None, args[0], None
    if origin is dict and len(args) == 2 and isinstance(args[1], type) and issubclass(args[1], BaseModel):
        return None, None, args[1]
    return None, None, None


def _select(cls: type[BaseModel], data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, info in cls.model_fields.items():
        if name not in data:
            continue
        value = data[name]
        model, item, entry = _models_in(info.annotation)
        if model is not None and isinstance(value, Mapping):
            value = _select(model, value)
        elif item is not None and isinstance(value, list):
            value = [_select(item, v) if isinstance(v, Mapping) else v for v in value]
        elif entry is not None and isinstance(value, Mapping):
            value = {k: _select(entry, v) if isinstance(v, Mapping) else v for k, v in value.items()}
        out[name] = value
    return out


def allowed(cls: type[M], data: Mapping[str, Any]) -> M:
    """``cls`` built from the fields it declares (nested models too): everything else in ``data`` is left out."""
    return cls.model_validate(_select(cls, data))


# -- views ---------------------------------------------------------------------------------------------------


def public_attempt(attempt: Mapping[str, Any], mask: PathMask) -> AttemptView:
    out = {k: v for k, v in attempt.items() if k != "worker"}
    return allowed(AttemptView, {**mask.deep(out), "worker": public_worker(attempt.get("worker"))})


def accepted_links(run_id: str) -> AcceptedLinks:
    base = f"/v1/runs/{run_id}"
    return AcceptedLinks(self=base, events=f"{base}/events", delivery=f"{base}/delivery", cancel=f"{base}/cancel")


def _json_ready(record: RunRecord, stored_only: bool = False) -> dict[str, Any]:
    """The record as JSON values (a non-finite number stays visible as ``"Infinity"``): every field, or with
    ``stored_only`` the keys the stored record has (a view built from it leaves the others unset: absent)."""
    data = json.loads(record.model_dump_json(exclude_unset=stored_only))
    assert isinstance(data, dict)
    return {**data, "schema_version": record.schema_version}


def public_run(record: RunRecord | Mapping[str, Any], attempts: list[dict[str, Any]], mask: PathMask,
               expires_at: float | None = None) -> RunView:
    """The run as its tenant sees it; fields the stored record lacks stay unset (the route leaves them out)."""
    run = record if isinstance(record, RunRecord) else load_run_record(dict(record))
    always = {"run_id": run.run_id, "status": run.status, "phase": run.phase, "brief": run.brief,
              **({"policy_hash": run.policy} if run.policy else {})}
    out = mask.deep({**_json_ready(run, stored_only=True), **always}, keep=frozenset({"brief"}))
    base = f"/v1/runs/{run.run_id}"
    links = RunLinks(**accepted_links(run.run_id).model_dump(), game=f"{base}/artifacts/dist/index.html",
                     play=f"{base}/play-token")
    shown = [public_attempt(a, mask).model_dump(exclude_unset=True) for a in attempts]
    extra = {"expires_at": expires_at} if expires_at is not None else {}
    return allowed(RunView, {**out, **extra, "attempts": shown, "links": links.model_dump()})


def public_thread(thread: Mapping[str, Any], thread_id: str, runs: list[RunRecord], mask: PathMask) -> ThreadView:
    shown = [mask.deep(_json_ready(r), keep=frozenset({"brief"})) for r in runs]
    return allowed(ThreadView, {**thread, "thread_id": thread_id, "runs": shown})


def public_event(event: dict[str, Any], mask: PathMask) -> dict[str, Any]:
    """An event's payload for SSE: no project directory, delivery path or worker name."""
    out = {k: v for k, v in event.items() if k not in ("project_dir", "delivery_path", "worker")}
    if "worker" in event:
        out["worker"] = public_worker(event["worker"])
    if event.get("delivery_path"):
        out["delivery"] = f"/v1/runs/{event.get('run_id', '')}/delivery"
    masked = mask.deep(out, keep=frozenset({"brief"}))
    assert isinstance(masked, dict)
    return masked


def public_delivery(delivery: Mapping[str, Any], run_id: str, mask: PathMask) -> DeliveryView:
    """``delivery.json`` for the API: project-relative paths, and artifact URLs for the files served."""
    out = dict(delivery)
    base = f"/v1/runs/{run_id}/artifacts"
    build = dict(out.get("build") or {})
    build["bundle_path"] = mask.relative(build.get("bundle_path"))
    out["build"] = build
    preview = mask.relative((out.get("preview") or {}).get("path"))
    out["preview"] = {"path": preview, "url": f"{base}/{preview}" if preview else None}
    verification = dict(out.get("verification") or {})
    verification["report"] = mask.relative(verification.get("report"))
    out["verification"] = verification
    shot = mask.relative(out.get("screenshot"))
    out["screenshot"] = shot
    out["screenshot_url"] = f"{base}/{shot}" if shot else None
    return allowed(DeliveryView, mask.deep(out, keep=frozenset({"brief"})))


def public_trajectory(run_id: str, total: int, offset: int, limit: int, summary: Mapping[str, Any],
                      calls: list[CallRecord], mask: PathMask) -> TrajectoryView:
    """A page of the run's calls; free text (error, argument summary) masked."""
    shown: list[ModelCallView | ToolCallView | CaseCallView] = []
    for call in calls:
        data = mask.deep(call.model_dump(mode="json"))
        if call.kind == "model":
            shown.append(allowed(ModelCallView, data))
        elif call.kind == "case":
            shown.append(allowed(CaseCallView, data))
        else:
            shown.append(allowed(ToolCallView, data))
    return TrajectoryView(run_id=run_id, total=total, offset=offset, limit=limit,
                          summary=allowed(TrajectorySummary, summary), calls=shown)


def public_project(record: Mapping[str, Any]) -> ProjectView:
    """A loaded project: id, tenant, pack, source, file count — not its server path."""
    return allowed(ProjectView, record)


def public_run_summary(record: RunRecord, mask: PathMask) -> RunSummary:
    """A run in a list: its status, brief, cost so far and times."""
    data = mask.deep(_json_ready(record), keep=frozenset({"brief"}))
    cost = (record.usage or {}).get("cost_usd")
    return allowed(RunSummary, {**data, "cost_usd": cost if isinstance(cost, int | float) else None})


def public_design(run_id: str, docs: list[dict[str, Any]], spec: dict[str, Any] | None, spec_error: str | None,
                  mask: PathMask) -> DesignView:
    """The design documents (only the server's own paths masked: the rest of a document is content) and the spec."""
    shown = [{**d, "text": mask.known(str(d.get("text", "")))} for d in docs]
    out: dict[str, Any] = {"run_id": run_id, "docs": shown}
    if spec is not None:
        out["spec"] = mask.deep(spec, keep=frozenset({"brief"}))
    if spec_error is not None:
        out["spec_error"] = spec_error
    return allowed(DesignView, out)


def public_report(run_id: str, path: str, report: Mapping[str, Any], mask: PathMask) -> ReportView:
    """A validation report: gates with findings and evidence, the screenshots as artifact URLs; paths masked."""
    shots = []
    for shot in report.get("screenshots") or []:
        rel = mask.relative(shot)
        if rel:
            shots.append({"name": rel.rsplit("/", 1)[-1], "path": rel, "url": f"/v1/runs/{run_id}/artifacts/{rel}"})
    data = mask.deep({k: v for k, v in report.items() if k in ("mode", "passed", "gates", "notes", "site",
                                                                "duration_ms")})
    return allowed(ReportView, {**data, "run_id": run_id, "path": path, "screenshots": shots})


_PEOPLE = ("user", "person")


def _goal_texts(masked: dict[str, Any], record: Mapping[str, Any]) -> None:
    """What a person wrote (a user's follow-up, a person's edit) is shown as written, like a run's brief; a goal the
    leader or evidence wrote stays masked."""
    pairs = [(record.get("goal"), masked.get("goal")),
             *zip(record.get("goals") or [], masked.get("goals") or [], strict=False)]
    for goal, shown in pairs:
        if isinstance(goal, Mapping) and goal.get("author") in _PEOPLE and isinstance(shown, dict):
            shown["text"] = goal.get("text")


def public_plan_version(record: Mapping[str, Any], thread_id: str, mask: PathMask) -> PlanVersionView:
    """One stored goal/plan version (`tier2.store.plans`): every string masked (evidence, reasons) except the
    goal texts people wrote."""
    masked = mask.deep(dict(record))
    assert isinstance(masked, dict)
    _goal_texts(masked, record)
    return allowed(PlanVersionView, {**masked, "thread_id": thread_id})


def public_plan_list(summaries: list[Mapping[str, Any]], thread_id: str, project_id: str,
                     mask: PathMask) -> PlanList:
    """The goal versions of a thread's project (`PlanVersions.list`): a leader's or evidence's text masked."""
    shown = [{**mask.deep(dict(s)), **({"text": s.get("text")} if s.get("author") in _PEOPLE else {})}
             for s in summaries]
    return allowed(PlanList, {"thread_id": thread_id, "project_id": project_id, "versions": shown})
