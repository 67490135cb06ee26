"""``GET /v1/runs/{id}/trajectory``: every model and tool call of a run, for later analysis.

Tenant-scoped like every run route (another tenant's run is a 404). Calls come in the order they first started,
with step numbers, durations, tokens, cost and the model that answered (fallbacks included); tool calls carry an
argument summary and hashes of the arguments and the result, not the contents.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from tier2.runs.queries import run_trajectory
from tier2.service.deps import RuntimeDep, TenantDep
from tier2.service.errors import error_responses
from tier2.service.schemas import TrajectoryView
from tier2.service.views import mask_for, public_trajectory

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["runs"])


@router.get("/runs/{run_id}/trajectory", response_model=TrajectoryView, response_model_exclude_unset=True,
            responses=error_responses(404, 422))
async def get_trajectory(
    run_id: str, rt: RuntimeDep, tenant: TenantDep,
    kind: Annotated[Literal["model", "tool", "case"] | None,
                    Query(description="only model calls, tool calls or case library hits")] = None,
    offset: Annotated[int, Query(ge=0)] = 0, limit: Annotated[int, Query(ge=1, le=5000)] = 500,
) -> TrajectoryView:
    """One page of the run's calls (``total`` counts the selected kind) and the per-model and per-tool totals."""
    page = await run_trajectory(rt, tenant, run_id, kind, offset, limit)
    return public_trajectory(page.run_id, page.total, page.offset, page.limit, page.summary, page.calls,
                             mask_for(rt.settings, page.project_dir))
