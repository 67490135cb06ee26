"""``/v1/runs``: submit a brief (idempotently), watch it (SSE with ids), cancel it, fetch the delivery.

Every route is tenant-scoped (`auth.tenant_of`): another tenant's run is a 404. Accepting a run commits its record
and its dispatch entry together (`RunStore.accept_run`); workers (`tier2.runs.worker`, in-process in
``tier2 serve`` and/or separate ``tier2 worker`` processes) execute it under a fenced lease.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from tier2.errors import ApiError, BadInput, ErrorCode
from tier2.events import TERMINAL_STATUSES, CancelRequested
from tier2.runs import Runtime, validate_brief
from tier2.runs.generate import new_run_id
from tier2.runs.tenancy import RouteNotAllowed, admit_run, refusal
from tier2.service.auth import sign_stream_token, stream_tenant, tenant_of
from tier2.service.limits import tenant_http_error
from tier2.service.projects import project_or_404
from tier2.service.text import IDENT_RE as _IDENT
from tier2.service.text import Ident, Line, Text, check_text
from tier2.service.views import PathMask, public_delivery, public_event, public_run, public_thread
from tier2.settings.loader import REPO_ROOT, BudgetOverride
from tier2.store.leases import LeaseStore
from tier2.workspace.projects import project_id_for

__all__ = ["router"]

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["runs"])
#: Files of a project that may be downloaded (anything under dist/ too).
_ARTIFACTS = {"delivery.json", "screenshot.png"}
_HEARTBEAT_S = 15.0
_BLOCK_MS = 1000  # XREAD BLOCK: a new event reaches the client at once, an idle stream costs one call a second
_RETRY_MS = 500
_MAX_EVENT_ID = 2**53  # a Last-Event-ID / ?after= beyond any real event id
_EVENT_ID = re.compile(r"^[0-9]{1,16}$")


class RunCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    brief: Annotated[Text, StringConstraints(max_length=100_000)] = Field(
        description="The game brief, a sentence or a few paragraphs (valid UTF-8 text, no NUL/control characters)")
    model: Annotated[Line, StringConstraints(max_length=128)] | None = Field(
        default=None, description="Model route from config/policy/models.yaml")
    project_id: Ident | None = Field(default=None,
                                     description="Run on a loaded project (POST /v1/projects) instead of a new one")
    thread_id: Ident | None = Field(default=None,
                                    description="A follow-up in this thread: same project, the conversation continues")
    budget: BudgetOverride | None = Field(default=None, description="This run's limits (usd, tokens, deadline_s); "
                                                                    "unset ones come from the hot config")
    pause_after: Literal["design"] | None = Field(
        default=None, description="Stop after this phase: the run ends `stopped` (paused after design) with "
        "docs/design/ and design/spec.json written; continue with a follow-up in the thread")


def _rt(request: Request) -> Runtime:
    return request.app.state.tier2


async def _run_or_404(rt: Runtime, run_id: str, tenant: str) -> dict[str, Any]:
    record = await rt.store.get_run(run_id) if re.match(_IDENT, run_id) else None
    if record is None or record.get("tenant") != tenant:  # another tenant's run does not exist for you
        raise ApiError(ErrorCode.NOT_FOUND, 404, "unknown run")
    return record


def _mask(rt: Runtime, record: dict[str, Any]) -> PathMask:
    st = rt.settings
    roots = [st.workspaces, st.home, st.packs_dir, st.config_dir, st.skills_dir, REPO_ROOT, Path(tempfile.gettempdir())]
    return PathMask(record.get("project_dir"), roots)


def _body_sha(body: RunCreate) -> str:
    return hashlib.sha256(json.dumps(body.model_dump(), sort_keys=True).encode()).hexdigest()


@router.post("/runs", status_code=202)
async def create_run(
    body: RunCreate, request: Request, response: Response, tenant: str = Depends(tenant_of),
    idempotency_key: str | None = Header(default=None, alias="Idempotency-Key", min_length=1, max_length=200),
) -> dict[str, Any]:
    """Accept a brief. With ``Idempotency-Key`` a retry with the same body returns the same run and response;
    the same key with a different body is a 409. The run record is durable before this returns."""
    rt = _rt(request)
    if idempotency_key is not None:
        check_text(idempotency_key, "Idempotency-Key")
    brief = validate_brief(body.brief, rt.security.brief)  # BadInput / ModelRouteError: 422 (service.errors)
    policy = rt.policies.snapshot()
    policy.route(body.model)
    try:
        admitted = admit_run(rt.security, policy, tenant, body.model, body.budget)
    except RouteNotAllowed as exc:
        raise ApiError(ErrorCode.FORBIDDEN, 403, str(exc)) from exc
    run_id = new_run_id()
    source_dir: str | None = None
    continues = False
    if body.thread_id is not None:
        thread = await _thread_or_404(rt, body.thread_id, tenant)
        thread_id, project_id = body.thread_id, thread["project_id"]
        source_dir, continues = thread["project_dir"], True
    elif body.project_id is not None:
        source_dir = (await project_or_404(rt, body.project_id, tenant))["path"]
        project_id, thread_id = body.project_id, "t-" + run_id[2:]
    else:
        project_id, thread_id = project_id_for(f"game-{run_id[2:14]}"), "t-" + run_id[2:]
    project_dir = source_dir or str(rt.settings.workspaces / "projects" / project_id)
    reply = {"run_id": run_id, "project_id": project_id, "thread_id": thread_id, "status": "queued",
             "links": {"self": f"/v1/runs/{run_id}", "events": f"/v1/runs/{run_id}/events",
                       "delivery": f"/v1/runs/{run_id}/delivery", "cancel": f"/v1/runs/{run_id}/cancel"}}
    record = {"status": "queued", "phase": "setup", "brief": brief, "project_id": project_id, "tenant": tenant,
              "model_route": body.model, "thread_id": thread_id, "dispatched": True, "project_dir": project_dir,
              "pause_after": body.pause_after,
              "source_dir": source_dir, "continues_thread": continues,
              "options": {**_options(body), **admitted.options}}
    accepted = await rt.store.accept_run(
        run_id, record, project_id=project_id, dispatch=True, tenant=tenant, idem_key=idempotency_key,
        body_sha=_body_sha(body), response=reply,
        thread=(thread_id, {"tenant": tenant, "project_id": project_id, "project_dir": project_dir}),
        admission=admitted.admission,
    )
    if (limited := refusal(accepted, admitted, time.time())) is not None:
        raise tenant_http_error(limited)
    if accepted.outcome == "replay":
        stored = accepted.idempotency or {}
        if stored.get("body_sha") != _body_sha(body):
            raise ApiError(ErrorCode.CONFLICT, 409, "Idempotency-Key was already used with a different request body")
        response.headers["Idempotent-Replayed"] = "true"
        return stored["response"]
    if accepted.outcome == "busy":
        raise ApiError(ErrorCode.CONFLICT, 409, f"project {project_id} already has a run in progress "
                                                f"({accepted.active_run}); one writer per project")
    return reply


def _options(body: RunCreate) -> dict[str, Any]:
    """Per-run options handed to the run's governance layers."""
    return {"budget": body.budget.model_dump(exclude_none=True)} if body.budget is not None else {}


async def _thread_or_404(rt: Runtime, thread_id: str, tenant: str) -> dict[str, Any]:
    record = await rt.store.get_thread(thread_id) if re.match(_IDENT, thread_id) else None
    if record is None or record.get("tenant") != tenant:
        raise ApiError(ErrorCode.NOT_FOUND, 404, "unknown thread")
    return record


@router.get("/threads/{thread_id}")
async def get_thread(thread_id: str, request: Request, tenant: str = Depends(tenant_of)) -> dict[str, Any]:
    """The thread (one project, one conversation) and its runs, oldest first."""
    rt = _rt(request)
    thread = await _thread_or_404(rt, thread_id, tenant)
    runs = [await rt.store.get_run(run_id) or {} for run_id in await rt.store.thread_runs(thread_id)]
    return public_thread(thread, thread_id, [public_run(r, [], _mask(rt, r)) for r in runs])


@router.get("/runs/{run_id}")
async def get_run(run_id: str, request: Request, tenant: str = Depends(tenant_of)) -> dict[str, Any]:
    """Status, phase, attempt, cost so far (``usage``), stop reason, and every attempt (worker, outcome)."""
    rt = _rt(request)
    record = await _run_or_404(rt, run_id, tenant)
    return public_run(record, await LeaseStore(rt.store.r, rt.store.keys).attempts(run_id), _mask(rt, record))


@router.post("/runs/{run_id}/cancel", status_code=202)
async def cancel_run(run_id: str, request: Request, tenant: str = Depends(tenant_of)) -> dict[str, Any]:
    """Record "cancel requested" (an event and a field), then stop the run: the in-flight model call or tool is
    interrupted and no further step starts. "stopped" follows as the run's terminal event. The flag is durable:
    the worker holding the run sees it within its heartbeat, and a queued run stops as soon as a worker takes it."""
    rt = _rt(request)
    record = await _run_or_404(rt, run_id, tenant)
    if record.get("status") in TERMINAL_STATUSES:
        raise ApiError(ErrorCode.CONFLICT, 409, f"run {run_id} already ended: {record.get('status')}")
    await rt.store.request_cancel(run_id)
    await rt.store.update_run(run_id, cancel_requested=True)
    await rt.store.append_event(CancelRequested(run_id=run_id, by=tenant))
    return {"run_id": run_id, "status": "cancel_requested"}


@router.post("/runs/{run_id}/stream-token")
async def stream_token(run_id: str, request: Request, tenant: str = Depends(tenant_of)) -> dict[str, Any]:
    """A short-lived token for ``GET /v1/runs/{id}/events?token=…``: a browser ``EventSource`` cannot send an
    Authorization header. The token is bound to this run and tenant; it grants nothing else."""
    await _run_or_404(_rt(request), run_id, tenant)
    token, expires = sign_stream_token(request.app.state.tier2_api_keys, tenant, run_id)
    return {"token": token, "expires_at": expires, "events": f"/v1/runs/{run_id}/events?token={token}"}


@router.get("/runs/{run_id}/events")
async def run_events(
    run_id: str, request: Request, after: int | None = Query(default=None, ge=0, le=_MAX_EVENT_ID),
    limit: int | None = Query(default=None, ge=1, le=100_000, description="end the stream after N frames"),
    last_event_id: str | None = Header(default=None, alias="Last-Event-ID", max_length=200),
    tenant: str = Depends(stream_tenant),
) -> StreamingResponse:
    """Typed events with monotonic ids. A reconnecting client's ``Last-Event-ID`` wins over ``?after=`` (an
    EventSource keeps its original URL), so resuming never repeats or skips an event. A ``Last-Event-ID`` that is
    not an event id (not decimal digits) is ignored, as the SSE spec lets a server do."""
    rt = _rt(request)
    record = await _run_or_404(rt, run_id, tenant)
    mask = _mask(rt, record)
    if last_event_id is not None and _EVENT_ID.match(last_event_id.strip()):
        cursor = min(int(last_event_id.strip()), _MAX_EVENT_ID)
    else:
        cursor = after or 0

    async def frames() -> AsyncIterator[str]:
        pos = cursor
        idle = 0.0
        sent = 0
        yield f"retry: {_RETRY_MS}\n\n"
        while True:
            batch = await rt.store.wait_events(run_id, after=pos, block_ms=_BLOCK_MS, count=500)
            for seq, event in batch:
                pos = seq
                data = json.dumps(public_event(event.model_dump(mode="json"), mask), ensure_ascii=False)
                yield f"id: {seq}\nevent: {event.type}\ndata: {data}\n\n"
                sent += 1
                if event.type == "run_finished" or (limit is not None and sent >= limit):
                    return
            if not batch:
                record = await rt.store.get_run(run_id) or {}
                if record.get("status") in TERMINAL_STATUSES and not await rt.store.read_events(run_id, after=pos):
                    return
                if await request.is_disconnected():
                    return
                idle += _BLOCK_MS / 1000
                if idle >= _HEARTBEAT_S:
                    idle = 0.0
                    yield ": keep-alive\n\n"

    return StreamingResponse(frames(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _project_dir(record: dict[str, Any]) -> Path:
    if not record.get("project_dir"):
        raise ApiError(ErrorCode.CONFLICT, 409, "the run has not created its project yet")
    return Path(record["project_dir"])


@router.get("/runs/{run_id}/delivery")
async def get_delivery(run_id: str, request: Request, tenant: str = Depends(tenant_of)) -> dict[str, Any]:
    """The delivery record, with project-relative paths and artifact URLs (``preview.url`` is the game)."""
    rt = _rt(request)
    record = await _run_or_404(rt, run_id, tenant)
    path = _project_dir(record) / "delivery.json"
    if record.get("status") not in TERMINAL_STATUSES or not path.exists():
        raise ApiError(ErrorCode.CONFLICT, 409, f"run {run_id} is {record.get('status')}: no delivery yet")
    return public_delivery(json.loads(path.read_text()), run_id, _mask(rt, record))


def _artifact_name(name: str) -> str | None:
    """``name`` when it can name a file at all (short, clean text, relative), else None."""
    if not name or len(name) > 512 or name.startswith("/"):
        return None
    try:
        return check_text(name, "artifact name")
    except BadInput:
        return None


@router.get("/runs/{run_id}/artifacts/{name:path}")
async def get_artifact(run_id: str, name: str, request: Request, tenant: str = Depends(tenant_of)) -> Response:
    """A file of the run's project: ``dist/*`` (the game), ``screenshot.png``, ``delivery.json`` (the public
    view, as ``GET /v1/runs/{id}/delivery``)."""
    if name == "delivery.json":
        return JSONResponse(await get_delivery(run_id, request, tenant))
    record = await _run_or_404(_rt(request), run_id, tenant)
    missing = ApiError(ErrorCode.NOT_FOUND, 404, "no such artifact (available: delivery.json, screenshot.png, dist/*)")
    if _artifact_name(name) is None:
        raise missing
    root = _project_dir(record).resolve()
    target = (root / name).resolve()
    allowed = name in _ARTIFACTS or target.is_relative_to(root / "dist")
    if not allowed or not target.is_relative_to(root) or not target.is_file():
        raise missing
    return FileResponse(target)
