"""The typed run record (`RunRecord`) stored under `Keys.run`, and the loader that migrates older formats; the
thread (`ThreadRecord`, `Keys.thread`) and loaded-project (`ProjectRecord`, `Keys.project`) records beside it.

Formats:

* **v1** — every record written before this module existed: stamped ``schema_version: 1`` (or no
  ``schema_version`` at all). Same fields as v2; nothing recorded when or with what summary the run ended.
* **v2** — this model. Adds ``finished_at``, ``timings_ms`` and ``delivery`` (a summary of ``delivery.json``),
  written by the one finish (`tier2.store.finish.finish_run`).

`load_run_record` reads any of them; the stored JSON keeps the keys it had (``model_dump`` with
``exclude_unset``), so an old record read and written back changes only its ``schema_version``. Unknown keys are
kept (``extra="allow"``): a field added by another feature survives a round trip through this model.
The frozen corpus of v1 records lives in ``tests/fixtures/persisted/v1/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from tier2.store.lifecycle import RunStatus

__all__ = ["RUN_RECORD_VERSION", "DeliverySummary", "ProjectFields", "ProjectRecord", "RunRecord", "ThreadFields",
           "ThreadRecord", "load_run_record", "migrate_run_record", "stored_status"]

#: The version `RunRecord` writes (the other persisted payloads keep `tier2.store.keys.SCHEMA_VERSION`).
RUN_RECORD_VERSION: Final = 2

Phase = Literal["setup", "design", "implement", "validate", "deliver"]


class DeliverySummary(BaseModel):
    """What ``delivery.json`` says, in a line: enough for ``GET /v1/runs/{id}`` without reading the file."""

    model_config = ConfigDict(extra="allow")
    verified: bool = False
    failed_gates: list[str] = Field(default_factory=list)
    screenshot: str | None = None
    preview: str | None = None


class RunRecord(BaseModel):
    """One run as stored (and returned by ``GET /v1/runs/{id}``, plus its attempts)."""

    # a non-finite number stored behind the API's back stays visible ("Infinity"), never laundered into null:
    # the run's budget check then fails the run naming it
    model_config = ConfigDict(extra="allow", ser_json_inf_nan="strings")

    schema_version: Literal[2] = RUN_RECORD_VERSION
    run_id: str
    status: RunStatus = "queued"
    phase: Phase = "setup"
    brief: str = ""
    tenant: str | None = None
    project_id: str | None = None
    project_dir: str | None = None
    thread_id: str | None = None
    #: a loaded project or the thread's project the run works on (None: a fresh template copy)
    source_dir: str | None = None
    continues_thread: bool = False
    #: accepted by the service for a worker (False: a foreground ``tier2 generate`` run)
    dispatched: bool = False
    model_route: str | None = None
    #: stop after this phase (``design``: a person reads and edits the design, then continues the run)
    pause_after: str | None = None
    #: the writer's route as resolved when the run started: ``{route, kind, model}``
    model: dict[str, Any] | None = None
    #: the hash of the run's hot-policy snapshot (`tier2.runs.process.policy`): every attempt works under that snapshot
    policy: str | None = None
    #: the security/build config (`tier2.runs.process.runtime.security_build_hash`) of the process running its last
    #: attempt
    security_hash: str | None = None
    #: the process running it (foreground runs: the orphan sweep checks it)
    owner: dict[str, Any] | None = None
    attempt: int | None = None
    started: bool = False
    cancel_requested: bool = False
    options: dict[str, Any] = Field(default_factory=dict)
    usage: dict[str, Any] | None = None
    stop_reason: str = ""
    delivery_path: str | None = None
    delivery: DeliverySummary | None = None
    timings_ms: dict[str, int] | None = None
    created_at: float | None = None
    updated_at: float | None = None
    finished_at: float | None = None

    def dump(self) -> dict[str, Any]:
        """The stored form: only the keys that were set (an old record keeps its key set), JSON-ready."""
        return {"schema_version": self.schema_version, **self.model_dump(mode="json", exclude_unset=True)}


def _v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    """v1 → v2: same fields; only the version changes (v2's new fields are optional)."""
    return {**raw, "schema_version": 2}


#: version -> the step that lifts a record of that version to the next one.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}


def migrate_run_record(raw: dict[str, Any]) -> dict[str, Any]:
    """A stored record (any known version; none = v1) as a current-version dict."""
    data = dict(raw)
    version = int(data.get("schema_version") or 1)
    if version > RUN_RECORD_VERSION:
        raise ValueError(f"run record {data.get('run_id')!r} has schema_version {version}, newer than this code "
                         f"({RUN_RECORD_VERSION})")
    while version < RUN_RECORD_VERSION:
        data = MIGRATIONS[version](data)
        version = int(data["schema_version"])
    data["schema_version"] = RUN_RECORD_VERSION  # set explicitly, so it is always part of the stored form
    return data


def load_run_record(raw: str | bytes | dict[str, Any]) -> RunRecord:
    """Parse and migrate a stored run record (JSON text or an already decoded dict)."""
    data = json.loads(raw) if isinstance(raw, str | bytes) else raw
    return RunRecord.model_validate(migrate_run_record(data))


class ThreadFields(TypedDict):
    """What a run's submission says of its thread (one project, one conversation): `RunStore.accept_run`."""

    tenant: str
    project_id: str
    project_dir: str


class ThreadRecord(ThreadFields):
    """A thread as stored under `Keys.thread`: written once, with its first run (`RunStore.get_thread`)."""

    schema_version: int
    thread_id: str
    created_at: float


class ProjectFields(TypedDict):
    """A loaded project as `tier2.runs.projects` registers it (`RunStore.put_project`)."""

    tenant: str
    #: the server path of its files (never shown: `tier2.service.views.public_project`)
    path: str
    pack: str
    #: where it came from: ``{kind: "archive", bytes}`` or ``{kind: "directory", path}``
    source: dict[str, Any]
    files: int
    bytes: int | None
    stripped: list[str]


class ProjectRecord(ProjectFields):
    """A loaded project as stored under `Keys.project` (`RunStore.get_project`)."""

    schema_version: int
    project_id: str
    created_at: float


def stored_status(raw: str | bytes | None) -> str | None:
    """The ``status`` of a stored run record's JSON without validating the rest (bulk scans: the dispatch trim,
    the retention sweep); None when there is no record or it cannot be read."""
    if raw is None:
        return None
    try:
        status = json.loads(raw).get("status")
    except (ValueError, AttributeError):
        return None
    return status if isinstance(status, str) else None
