"""``/v1/runs``: submit a brief, watch it (SSE with ids), fetch the delivery and its artifacts.

This is the skeleton's in-process version: runs execute as tasks of the serving process. Idempotency keys,
tenants, leases and crash recovery come with the durable run platform.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Header, HTTPException, Query, Request
from fastapi.responses import FileResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from tier2.errors import BadInput, ModelRouteError
from tier2.events import TERMINAL_STATUSES
from tier2.runs import RunRequest, Runtime, execute_run, validate_brief
from tier2.runs.generate import new_run_id
from tier2.workspace.projects import project_id_for

__all__ = ["router"]

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["runs"])
#: Files of a project that may be downloaded (anything under dist/ too).
_ARTIFACTS = {"delivery.json", "screenshot.png"}
_HEARTBEAT_S = 15.0


class RunCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    brief: str = Field(description="The game brief, a sentence or a few paragraphs")
    model: str | None = Field(default=None, description="Model route from config/policy/models.yaml")


def _rt(request: Request) -> Runtime:
    return request.app.state.tier2


async def _run_or_404(rt: Runtime, run_id: str) -> dict[str, Any]:
    record = await rt.store.get_run(run_id)
    if record is None:
        raise HTTPException(404, f"unknown run {run_id!r}")
    return record


@router.post("/runs", status_code=202)
async def create_run(body: RunCreate, request: Request) -> dict[str, Any]:
    rt = _rt(request)
    try:
        brief = validate_brief(body.brief, rt.security.brief)
        rt.policies.snapshot().route(body.model)
    except (BadInput, ModelRouteError) as exc:
        raise HTTPException(422, str(exc)) from exc
    run_id = new_run_id()
    project_id = project_id_for(f"game-{run_id[2:14]}")
    await rt.store.create_run(run_id, {"status": "queued", "phase": "setup", "brief": brief,
                                       "project_id": project_id})
    task = asyncio.create_task(_execute(rt, RunRequest(brief=brief, model=body.model, run_id=run_id,
                                                       project_id=project_id)))
    request.app.state.tier2_tasks[run_id] = task
    task.add_done_callback(lambda _t: request.app.state.tier2_tasks.pop(run_id, None))
    return {"run_id": run_id, "project_id": project_id, "status": "queued",
            "links": {"self": f"/v1/runs/{run_id}", "events": f"/v1/runs/{run_id}/events",
                      "delivery": f"/v1/runs/{run_id}/delivery"}}


async def _execute(rt: Runtime, req: RunRequest) -> None:
    try:
        await execute_run(rt, req)
    except Exception as exc:  # noqa: BLE001 - a run that dies before starting must still end visibly
        log.exception("run %s failed to start", req.run_id)
        from tier2.events import RunFinished

        assert req.run_id is not None
        await rt.store.update_run(req.run_id, status="failed", stop_reason=f"{type(exc).__name__}: {exc}")
        await rt.store.append_event(RunFinished(run_id=req.run_id, status="failed",
                                                stop_reason=f"{type(exc).__name__}: {exc}"))


@router.get("/runs/{run_id}")
async def get_run(run_id: str, request: Request) -> dict[str, Any]:
    return await _run_or_404(_rt(request), run_id)


@router.get("/runs/{run_id}/events")
async def run_events(
    run_id: str, request: Request, after: int | None = Query(default=None, ge=0),
    last_event_id: str | None = Header(default=None, alias="Last-Event-ID"),
) -> StreamingResponse:
    rt = _rt(request)
    await _run_or_404(rt, run_id)
    cursor = after if after is not None else int(last_event_id) if (last_event_id or "").isdigit() else 0

    async def frames() -> AsyncIterator[str]:
        pos = cursor
        idle = 0.0
        while True:
            batch = await rt.store.read_events(run_id, after=pos, count=500)
            for seq, event in batch:
                pos = seq
                yield f"id: {seq}\nevent: {event.type}\ndata: {event.model_dump_json()}\n\n"
                if event.type == "run_finished":
                    return
            if not batch:
                record = await rt.store.get_run(run_id) or {}
                if record.get("status") in TERMINAL_STATUSES and not await rt.store.read_events(run_id, after=pos):
                    return
                if await request.is_disconnected():
                    return
                await asyncio.sleep(0.1)
                idle += 0.1
                if idle >= _HEARTBEAT_S:
                    idle = 0.0
                    yield ": keep-alive\n\n"

    return StreamingResponse(frames(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _project_dir(record: dict[str, Any]) -> Path:
    if not record.get("project_dir"):
        raise HTTPException(409, "the run has not created its project yet")
    return Path(record["project_dir"])


@router.get("/runs/{run_id}/delivery")
async def get_delivery(run_id: str, request: Request) -> dict[str, Any]:
    record = await _run_or_404(_rt(request), run_id)
    path = _project_dir(record) / "delivery.json"
    if record.get("status") not in TERMINAL_STATUSES or not path.exists():
        raise HTTPException(409, f"run {run_id} is {record.get('status')}: no delivery yet")
    return json.loads(path.read_text())


@router.get("/runs/{run_id}/artifacts/{name:path}")
async def get_artifact(run_id: str, name: str, request: Request) -> FileResponse:
    record = await _run_or_404(_rt(request), run_id)
    root = _project_dir(record).resolve()
    target = (root / name).resolve()
    allowed = name in _ARTIFACTS or target.is_relative_to(root / "dist")
    if not allowed or not target.is_relative_to(root) or not target.is_file():
        raise HTTPException(404, f"no artifact {name!r} (available: delivery.json, screenshot.png, dist/*)")
    return FileResponse(target)
