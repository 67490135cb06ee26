"""``GET /v1/runs/{id}/trajectory``: every model and tool call of a run, for later analysis.

Tenant-scoped like every run route (another tenant's run is a 404). Calls come in the order they first started,
with step numbers, durations, tokens, cost and the model that answered (fallbacks included); tool calls carry an
argument summary and hashes of the arguments and the result, not the contents.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from tier2.service.auth import tenant_of
from tier2.service.runs import _rt, _run_or_404
from tier2.store.trajectory import TrajectoryStore

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["runs"])


@router.get("/runs/{run_id}/trajectory")
async def get_trajectory(
    run_id: str, request: Request, tenant: str = Depends(tenant_of),
    kind: Literal["model", "tool"] | None = Query(default=None, description="only model calls or only tool calls"),
    offset: int = Query(default=0, ge=0), limit: int = Query(default=500, ge=1, le=5000),
) -> dict[str, Any]:
    rt = _rt(request)
    await _run_or_404(rt, run_id, tenant)
    calls = await TrajectoryStore(rt.store.r, rt.store.keys).read(run_id)
    summary = TrajectoryStore.summarize(calls)
    selected = [c for c in calls if kind is None or c.kind == kind]
    page = selected[offset:offset + limit]
    return {"run_id": run_id, "total": len(selected), "offset": offset, "limit": limit, "summary": summary,
            "calls": [c.model_dump(mode="json") for c in page]}
