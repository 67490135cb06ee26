"""What a tenant sees of stored records: explicit allow-lists, never the stored dicts as they are.

Stored run records, attempts, threads, events and ``delivery.json`` carry operator details — host names, pids,
worker names (``<host>-<pid>-…``), absolute server paths — that a tenant must not see. Each view here builds
the public dict from the fields it lists; a field added to a stored record stays private until it is added to
a view. Paths inside the project become project-relative (``dist/index.html``), files the API serves get their
artifact URL, worker names lose their host and pid, and remaining server roots or pids inside free text (a stop
reason, a tool summary) are masked.
"""

from __future__ import annotations

import hashlib
import re
import socket
from pathlib import Path
from typing import Any

__all__ = ["PathMask", "public_run", "public_attempt", "public_thread", "public_event", "public_delivery",
           "public_worker"]

_RUN_FIELDS = ("schema_version", "run_id", "status", "phase", "brief", "project_id", "thread_id", "tenant",
               "model_route", "model", "attempt", "stop_reason", "cancel_requested", "usage", "created_at",
               "updated_at", "finished_at", "timings_ms", "continues_thread", "options", "policy", "plan",
               "completion", "pause_after")
_ATTEMPT_FIELDS = ("attempt", "started_at", "ended_at", "outcome", "detail", "resumed_from", "stage")
_THREAD_FIELDS = ("thread_id", "tenant", "project_id", "created_at")
_THREAD_RUN_FIELDS = ("run_id", "status", "brief", "stop_reason", "created_at")
_DEFAULT_WORKER = re.compile(r"^.+-\d+-([0-9a-f]{6})$")
_HOST = socket.gethostname() if len(socket.gethostname()) >= 4 else ""
_PID = re.compile(r"\bpid[ =:]*\d+")
#: an absolute path of two or more components not covered by a known root: only its last component is shown
_ABS_PATH = re.compile(r"(?<![\w:/.~-])/(?!v1/)(?:[\w.@+~-]+/)+([\w.@+~-]*)")  # API URLs (/v1/...) stay


def public_worker(name: object) -> str | None:
    """A worker's name without host or pid: a default name (``<host>-<pid>-<hex6>``, `runs.worker.worker_name`)
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

    def relative(self, value: object) -> str | None:
        """A project-relative path for a path inside the project, else None."""
        if not isinstance(value, str) or not value:
            return None
        masked = self.text(value)
        return None if masked.startswith(("/", "…")) else masked.removeprefix("./")

    def deep(self, value: Any, keep: frozenset[str] = frozenset()) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: v if k in keep else self.deep(v, keep) for k, v in value.items()}
        if isinstance(value, list):
            return [self.deep(v, keep) for v in value]
        return value


def public_attempt(attempt: dict[str, Any], mask: PathMask) -> dict[str, Any]:
    out = {k: attempt[k] for k in _ATTEMPT_FIELDS if k in attempt}
    out["worker"] = public_worker(attempt.get("worker"))
    return mask.deep(out)


def public_run(record: dict[str, Any], attempts: list[dict[str, Any]], mask: PathMask) -> dict[str, Any]:
    run_id = record.get("run_id", "")
    out = {k: record[k] for k in _RUN_FIELDS if k in record}
    out = mask.deep(out, keep=frozenset({"brief"}))
    out["attempts"] = [public_attempt(a, mask) for a in attempts]
    out["links"] = {"self": f"/v1/runs/{run_id}", "events": f"/v1/runs/{run_id}/events",
                    "delivery": f"/v1/runs/{run_id}/delivery", "cancel": f"/v1/runs/{run_id}/cancel",
                    "game": f"/v1/runs/{run_id}/artifacts/dist/index.html"}
    return out


def public_thread(thread: dict[str, Any], thread_id: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    out = {k: thread[k] for k in _THREAD_FIELDS if k in thread}
    out["thread_id"] = thread_id
    out["runs"] = [{k: r.get(k) for k in _THREAD_RUN_FIELDS} for r in runs]
    return out


def public_event(event: dict[str, Any], mask: PathMask) -> dict[str, Any]:
    """An event's payload for SSE: no project directory, delivery path or worker name."""
    out = {k: v for k, v in event.items() if k not in ("project_dir", "delivery_path", "worker")}
    if "worker" in event:
        out["worker"] = public_worker(event["worker"])
    if event.get("delivery_path"):
        out["delivery"] = f"/v1/runs/{event.get('run_id', '')}/delivery"
    return mask.deep(out, keep=frozenset({"brief"}))


def public_delivery(delivery: dict[str, Any], run_id: str, mask: PathMask) -> dict[str, Any]:
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
    return mask.deep(out, keep=frozenset({"brief"}))
