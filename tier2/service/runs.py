"""``/v1/runs`` and ``/v1/threads``: submit a brief (idempotently), list a tenant's runs, watch one (SSE with
ids), cancel it, fetch the delivery and the artifacts, read a thread.

HTTP only: each route turns the request into a use case call (`tier2.runs.submit`, `tier2.runs.queries`) and
the result into its response model (`tier2.service.schemas`, through the allow-list views; a view of a stored
record leaves out the fields the record does not have, ``response_model_exclude_unset``). Every read is
tenant-scoped in the store: another tenant's run is a 404. Errors are raised as tier2 errors and answered by
`tier2.service.errors`.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator
from pathlib import PurePosixPath
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from tier2.errors import BadInput, NotFound
from tier2.runs.queries import (
    cancel_run,
    follow_events,
    list_runs,
    require_run,
    run_delivery,
    run_details,
    thread_details,
)
from tier2.runs.run_files import artifact_file
from tier2.runs.submit import RunSubmission, submit_run
from tier2.service.auth import sign_stream_token
from tier2.service.deps import ApiKeysDep, IdempotencyKeyDep, RuntimeDep, StreamTenantDep, TenantDep
from tier2.service.errors import error_responses
from tier2.service.schemas import (
    CancelAccepted,
    DeliveryView,
    RunAccepted,
    RunCreate,
    RunView,
    StreamToken,
    ThreadView,
)
from tier2.service.schemas_browse import RunList
from tier2.service.schemas_plans import PlanList, PlanVersionView
from tier2.service.text import check_text
from tier2.service.views import (
    accepted_links,
    mask_for,
    public_delivery,
    public_event,
    public_plan_list,
    public_plan_version,
    public_run,
    public_run_summary,
    public_thread,
)
from tier2.store.lifecycle import RunStatus
from tier2.store.plans import PlanVersions
from tier2.store.records import ThreadRecord
from tier2.store.run_index import Cursor

__all__ = ["ARTIFACT_HEADERS", "router"]

router = APIRouter(prefix="/v1", tags=["runs"])
_HEARTBEAT_S = 15.0
_BLOCK_MS = 1000  # XREAD BLOCK: a new event reaches the client at once, an idle stream costs one call a second
_RETRY_MS = 500
_MAX_EVENT_ID = 2**53  # a Last-Event-ID / ?after= beyond any real event id
_EVENT_ID = re.compile(r"^[0-9]{1,16}$")
_BINARY = {"schema": {"type": "string", "format": "binary"}}
_SSE = {"schema": {"type": "string", "description": "text/event-stream frames: `id: <n>`, `event: <type>`, "
                                                     "`data: <event JSON>`; `: keep-alive` comments"}}


@router.post("/runs", status_code=202, response_model=RunAccepted, responses={
    **error_responses(403, 404, 409, 422, 429, 503, 507),
    202: {"description": "Accepted (or replayed: `Idempotent-Replayed: true`)", "headers": {
        "Idempotent-Replayed": {"description": "`true` when this answers a retry", "schema": {"type": "string"}}}}})
async def create_run(body: RunCreate, response: Response, rt: RuntimeDep, tenant: TenantDep,
                     idempotency_key: IdempotencyKeyDep) -> RunAccepted:
    """Accept a brief. With ``Idempotency-Key`` a retry with the same body returns the same run and response;
    the same key with a different body is a 409. The run record is durable before this returns."""
    result = await submit_run(rt, RunSubmission(
        tenant=tenant, brief=body.brief, model=body.model, project_id=body.project_id, thread_id=body.thread_id,
        budget=body.budget, idempotency_key=idempotency_key, pause_after=body.pause_after,
        workspace=body.workspace, pack=body.pack))
    if result.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    run = result.run
    return RunAccepted(run_id=run.run_id, project_id=run.project_id, thread_id=run.thread_id, status=run.status,
                       links=accepted_links(run.run_id))


def _cursor_text(cursor: Cursor) -> str:
    return base64.urlsafe_b64encode(json.dumps([cursor.at, cursor.run_id]).encode()).decode().rstrip("=")


def _parse_cursor(text: str) -> Cursor:
    """An opaque ``next_cursor`` back from the client (hostile input: any mistake is a 422)."""
    try:
        at, run_id = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        if not isinstance(at, int | float) or isinstance(at, bool) or not isinstance(run_id, str):
            raise ValueError
        return Cursor(float(at), check_text(run_id, "cursor"))
    except (ValueError, TypeError, json.JSONDecodeError, BadInput):
        raise BadInput("cursor is not a next_cursor this service returned") from None


@router.get("/runs", response_model=RunList, responses=error_responses(422))
async def get_runs(
    rt: RuntimeDep, tenant: TenantDep,
    status: Annotated[list[RunStatus] | None, Query(description="only runs in these statuses (repeatable)")] = None,
    q: Annotated[str | None, Query(max_length=200, description="text in the brief or the run id")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=400, description="next_cursor of the previous page")] = None,
) -> RunList:
    """The caller's runs, newest first, a page at a time (status, brief, cost so far, times)."""
    text = check_text(q, "q").strip() if q is not None else None
    page = await list_runs(rt, tenant, after=_parse_cursor(cursor) if cursor else None,
                           statuses=frozenset(status) if status else None, text=text or None, limit=limit)
    return RunList(runs=[public_run_summary(r, mask_for(rt.settings, r.project_dir)) for r in page.runs],
                   next_cursor=_cursor_text(page.next) if page.next is not None else None, scanned=page.scanned)


@router.get("/threads/{thread_id}", response_model=ThreadView, response_model_exclude_unset=True,
            responses=error_responses(404, 422))
async def get_thread(thread_id: str, rt: RuntimeDep, tenant: TenantDep) -> ThreadView:
    """The thread (one project, one conversation) and its runs, oldest first."""
    found = await thread_details(rt, tenant, thread_id)
    mask = mask_for(rt.settings, found.thread.get("project_dir"))
    return public_thread(found.thread, found.thread_id, found.runs, mask)


async def _thread(rt: RuntimeDep, tenant: str, thread_id: str) -> ThreadRecord:
    """The tenant's thread (`RunStore.get_thread_for`: another tenant's is unknown), or `NotFound`."""
    thread = await rt.store.get_thread_for(tenant, thread_id)
    if thread is None:
        raise NotFound("unknown thread")
    return thread


@router.get("/threads/{thread_id}/plans", response_model=PlanList, responses=error_responses(404, 422))
async def get_thread_plans(thread_id: str, rt: RuntimeDep, tenant: TenantDep) -> PlanList:
    """The goal versions of the thread's project, oldest first: each with its author and text, the run that made
    it, how many requirements it added, changed and removed, how many plan nodes it invalidated and reused, and how
    it ended. Empty until a run of the thread stored its plan."""
    thread = await _thread(rt, tenant, thread_id)
    project_id = thread["project_id"]
    versions = await PlanVersions(rt.store.r, rt.store.keys).list(project_id)
    return public_plan_list([v.model_dump() for v in versions], thread_id, project_id,
                            mask_for(rt.settings, thread.get("project_dir")))


@router.get("/threads/{thread_id}/plan", response_model=PlanVersionView, responses=error_responses(404, 422))
async def get_thread_plan(
    thread_id: str, rt: RuntimeDep, tenant: TenantDep,
    version: Annotated[int | None, Query(ge=1, le=1_000_000, description="the goal version (default: the newest)")]
    = None,
) -> PlanVersionView:
    """One goal version of the thread's project (stored append-only: every earlier version stays readable): the
    goal and every goal so far, the plan diff (requirements added / changed / removed, nodes invalidated and why,
    nodes reused), the plan's nodes, the plan metrics and the end. 404 for a version that does not exist."""
    thread = await _thread(rt, tenant, thread_id)
    record = await PlanVersions(rt.store.r, rt.store.keys).get(thread["project_id"], version)
    if record is None:
        raise NotFound(f"no goal version {version} in this thread" if version is not None
                       else "no plan version in this thread yet")
    return public_plan_version(record.model_dump(mode="json"), thread_id,
                               mask_for(rt.settings, thread.get("project_dir")))


@router.get("/runs/{run_id}", response_model=RunView, response_model_exclude_unset=True,
            responses=error_responses(404, 422))
async def get_run(run_id: str, rt: RuntimeDep, tenant: TenantDep) -> RunView:
    """Status, phase, attempt, cost so far (``usage``), stop reason, and every attempt (worker, outcome)."""
    found = await run_details(rt, tenant, run_id)
    return public_run(found.record, found.attempts, mask_for(rt.settings, found.record.project_dir),
                      found.expires_at)


@router.post("/runs/{run_id}/cancel", status_code=202, response_model=CancelAccepted,
             responses=error_responses(404, 409, 422))
async def cancel(run_id: str, rt: RuntimeDep, tenant: TenantDep) -> CancelAccepted:
    """Record "cancel requested" (an event and a field), then stop the run: the in-flight model call or tool is
    interrupted and no further step starts. "stopped" follows as the run's terminal event. The flag is durable:
    the worker holding the run sees it within its heartbeat, and a queued run stops as soon as a worker takes it.
    409 once the run has ended."""
    await cancel_run(rt, tenant, run_id)
    return CancelAccepted(run_id=run_id)


@router.post("/runs/{run_id}/stream-token", response_model=StreamToken, responses=error_responses(404, 422))
async def stream_token(run_id: str, rt: RuntimeDep, keys: ApiKeysDep, tenant: TenantDep) -> StreamToken:
    """A short-lived token for ``GET /v1/runs/{id}/events?token=…``: a browser ``EventSource`` cannot send an
    Authorization header. The token is bound to this run and tenant; it grants nothing else."""
    await require_run(rt.store, tenant, run_id)
    token, expires = sign_stream_token(keys, tenant, run_id)
    return StreamToken(token=token, expires_at=expires, events=f"/v1/runs/{run_id}/events?token={token}")


class EventStreamResponse(StreamingResponse):
    media_type = "text/event-stream"


@router.get("/runs/{run_id}/events", response_class=EventStreamResponse,
            responses={200: {"description": "Server-sent events until `run_finished`", "content": {
                "text/event-stream": _SSE}}, **error_responses(404, 422, as_ref=True)})
async def run_events(
    run_id: str, request: Request, rt: RuntimeDep, tenant: StreamTenantDep,
    after: Annotated[int | None, Query(ge=0, le=_MAX_EVENT_ID, description="resume after this event id")] = None,
    limit: Annotated[int | None, Query(ge=1, le=100_000, description="end the stream after N frames")] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=200)] = None,
) -> StreamingResponse:
    """Typed events with monotonic ids. A reconnecting client's ``Last-Event-ID`` wins over ``?after=`` (an
    EventSource keeps its original URL), so resuming never repeats or skips an event. A ``Last-Event-ID`` that is
    not an event id (not decimal digits) is ignored, as the SSE spec lets a server do."""
    record = await require_run(rt.store, tenant, run_id)
    mask = mask_for(rt.settings, record.project_dir)
    if last_event_id is not None and _EVENT_ID.match(last_event_id.strip()):
        cursor = min(int(last_event_id.strip()), _MAX_EVENT_ID)
    else:
        cursor = after or 0

    async def frames() -> AsyncIterator[str]:
        idle, sent = 0.0, 0
        yield f"retry: {_RETRY_MS}\n\n"
        async for item in follow_events(rt.store, run_id, cursor, request.is_disconnected, _BLOCK_MS):
            if item is None:
                idle += _BLOCK_MS / 1000
                if idle >= _HEARTBEAT_S:
                    idle = 0.0
                    yield ": keep-alive\n\n"
                continue
            seq, event = item
            data = json.dumps(public_event(event.model_dump(mode="json"), mask), ensure_ascii=False)
            yield f"id: {seq}\nevent: {event.type}\ndata: {data}\n\n"
            sent += 1
            if limit is not None and sent >= limit:
                return

    return EventStreamResponse(frames(), headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.get("/runs/{run_id}/delivery", response_model=DeliveryView, response_model_exclude_unset=True,
            responses=error_responses(404, 409, 422))
async def get_delivery(run_id: str, rt: RuntimeDep, tenant: TenantDep) -> DeliveryView:
    """The delivery record, with project-relative paths and artifact URLs (``preview.url`` is the game); 409 until
    the run has ended."""
    record, delivery = await run_delivery(rt, tenant, run_id)
    return public_delivery(delivery, run_id, mask_for(rt.settings, record.project_dir))


#: A run's files are the tenant's (and the model's) content: served on the API's origin as a page, a game would run
#: with the API's origin and the user's browser (local mode: no key needed) and could read and start runs. So every
#: artifact is a sandboxed download: no script runs in it, no MIME sniffing, a navigation saves it.
ARTIFACT_HEADERS: dict[str, str] = {
    "Content-Security-Policy": "sandbox", "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "same-origin", "Cache-Control": "private, no-store",
}
_ARTIFACT_HEADERS_DOC: dict[str, Any] = {
    "Content-Security-Policy": {"description": "`sandbox`: the file never runs as a page",
                                "schema": {"type": "string"}},
    "Content-Disposition": {"description": "`attachment; filename=…`: a download (play the game with a play token)",
                            "schema": {"type": "string"}},
    "X-Content-Type-Options": {"description": "`nosniff`", "schema": {"type": "string"}},
}
_ARTIFACT_CONTENT: dict[str, Any] = {
    "text/html": {"schema": {"type": "string"}}, "text/javascript": {"schema": {"type": "string"}},
    "image/png": _BINARY, "application/octet-stream": _BINARY,
    "application/json": {"schema": {"$ref": "#/components/schemas/DeliveryView"}},
}


@router.get("/runs/{run_id}/artifacts/{name:path}", response_class=Response,
            responses={200: {"description": "The file: `dist/index.html` (the game), `dist/*` (its bundle and "
                                            "assets), `screenshot.png`, the validation report's screenshots "
                                            "(`.tier2/reports/<check>/*.png`), `delivery.json` (as GET .../delivery); "
                                            "always as a sandboxed download",
                             "content": _ARTIFACT_CONTENT, "headers": _ARTIFACT_HEADERS_DOC},
                       **error_responses(404, 409, 422)})
async def get_artifact(run_id: str, name: str, rt: RuntimeDep, tenant: TenantDep) -> Response:
    """A file of the run's project: ``dist/*`` (the game), ``screenshot.png``, the PNGs of its validation report
    (``GET /v1/runs/{id}/report`` lists them), ``delivery.json`` (the public view, as ``GET
    /v1/runs/{id}/delivery``). Always a download, never a page of this origin (`ARTIFACT_HEADERS`): the game is
    played through ``POST /v1/runs/{id}/play-token`` (``links.play``)."""
    if name == "delivery.json":
        view = await get_delivery(run_id, rt, tenant)
        return JSONResponse(view.model_dump(mode="json", exclude_unset=True), headers={
            **ARTIFACT_HEADERS, "Content-Disposition": 'attachment; filename="delivery.json"'})
    found = await artifact_file(rt, tenant, run_id, name)  # read without following links (tier2.hostio)
    filename = PurePosixPath(found.path).name
    disposition = f'attachment; filename="{filename}"' if quote(filename) == filename else \
        f"attachment; filename*=utf-8''{quote(filename)}"
    return Response(found.data, media_type=found.media_type,
                    headers={**ARTIFACT_HEADERS, "Content-Disposition": disposition})
