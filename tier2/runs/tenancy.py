"""Tenant limits as use cases: admit a submitted run, charge an upload (security config ``[tenants]``).

* **Runs in flight** (``max_queued``, waiting + running) and **submissions per minute**: checked inside the
  acceptance script (`RunStore.accept_run` with an `Admission`), so a burst cannot slip past the count.
* **Budget ceiling** (``max_usd``, ``max_tokens``, ``max_deadline_s``): a request asking more is refused (not
  clamped: the caller learns the limit instead of getting a smaller run than it asked for); a run without its
  own budget gets the hot-config default, bounded at run time by the ceiling recorded with the run.
* **Model routes** (``allowed_routes``): the writer's route — the request's ``model`` or the ``agents:`` routing
  — and every fallback of it must be allowed, or the run is refused before it is accepted; checked again when
  the run's agent is built (`check_run_route`), as the hot routing may have changed in between.
* **Upload bytes per UTC day** for POST /v1/projects (the request body's bytes).
* **Disk** (``disk_bytes``, unpacked bytes of the tenant's projects): an import reserves the room it may unpack
  into before reading the archive and is stopped the moment it passes it (`reserve_import`); a new run is refused
  while the tenant is over (`ensure_disk_room`); a running one is re-measured after every snapshot and stops past
  it (`tier2.middleware.snapshots`); every run's project is re-measured when it ends (`settle_storage`).
* **Snapshot store** (``snapshot_bytes``, ``snapshot_blob_bytes``, ``snapshot_ttl_s``): `tier2.store.snapshots`;
  the GC pass after every run: `settle_storage`.
* **Fair scheduling** and ``max_running`` are the workers' side: `tier2.store.dispatch`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from tier2.errors import BadInput, Forbidden, OperatorError, QuotaExceeded
from tier2.settings.loader import BudgetOverride, Policy, SecurityConfig
from tier2.settings.tenants import TenantLimits
from tier2.store.quotas import Admission, QuotaStore, retry_after_s, seconds_to_next_utc_day
from tier2.store.run_store import Accepted
from tier2.store.snapshot_gc import SnapshotGC
from tier2.workspace.importer import ImportLimits
from tier2.workspace.usage import tree_bytes

__all__ = ["QUEUE_RETRY_AFTER_S", "RouteNotAllowed", "RunAdmission", "TenantLimitExceeded", "admit_run",
           "charge_upload", "check_run_route", "ensure_disk_room", "ensure_upload_room", "measure_project",
           "refusal", "reserve_import", "settle_storage", "upload_limit"]

log = logging.getLogger(__name__)

#: Retry-After of a submission refused because the tenant's queue is full (a run's end is not predictable).
QUEUE_RETRY_AFTER_S: Final = 15

_UNITS = {"usd": ("max_usd", "USD"), "tokens": ("max_tokens", "tokens"), "deadline_s": ("max_deadline_s", "s")}


class TenantLimitExceeded(OperatorError):
    """A tenant quota refused the request: HTTP ``status`` (429, or 413 for one upload over the daily quota),
    with ``retry_after`` seconds when waiting helps."""

    def __init__(self, message: str, *, status: int = 429, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status, self.retry_after = status, retry_after


class RouteNotAllowed(Forbidden):
    """The run would use a model route the tenant may not use (HTTP 403)."""


@dataclass(frozen=True)
class RunAdmission:
    """What accepting a tenant's run needs: the atomic checks and the options recorded with the run."""

    tenant: str
    limits: TenantLimits
    admission: Admission
    options: dict[str, Any] = field(default_factory=dict)


def admit_run(security: SecurityConfig, policy: Policy, tenant: str, model: str | None,
              budget: BudgetOverride | None) -> RunAdmission:
    """Check what can be checked before accepting: the routes and the budget. Raises `RouteNotAllowed`,
    `BadInput` (budget above the ceiling) or `ModelRouteError` (unknown route)."""
    limits = security.tenants.limits(tenant)
    _check_routes(policy, limits, tenant, model)
    _check_budget(limits, tenant, budget)
    options: dict[str, Any] = {"budget_ceiling": limits.budget_ceiling()}
    if limits.allowed_routes is not None:
        options["allowed_routes"] = list(limits.allowed_routes)
    return RunAdmission(tenant, limits, Admission(tenant, limits.max_queued, limits.submissions_per_minute),
                        options)


def check_run_route(policy: Policy, route: str, options: dict[str, Any]) -> None:
    """When a run's agent is built (the hot ``agents:`` routing may have changed since the run was accepted):
    `RouteNotAllowed` — the run ends ``failed`` with it — if the route or a fallback is not in the run's
    ``allowed_routes`` option."""
    allowed = options.get("allowed_routes")
    if allowed is None:
        return
    forbidden = [n for n, _ in policy.route_chain(route) if n not in allowed]
    if forbidden:
        raise RouteNotAllowed(f"model route {forbidden[0]!r} is not allowed for this run's tenant; allowed "
                              f"routes: {', '.join(allowed) or '(none)'}")


def _check_routes(policy: Policy, limits: TenantLimits, tenant: str, model: str | None) -> None:
    name, _ = policy.agent_route("writer", model)
    chain = [n for n, _ in policy.route_chain(name)]
    forbidden = [n for n in chain if not limits.route_allowed(n)]
    if forbidden:
        via = f" (fallback of {name!r})" if forbidden[0] != name else ""
        raise RouteNotAllowed(f"model route {forbidden[0]!r}{via} is not allowed for tenant {tenant!r}; "
                              f"allowed routes: {', '.join(limits.allowed_routes or ()) or '(none)'}")


def _check_budget(limits: TenantLimits, tenant: str, budget: BudgetOverride | None) -> None:
    if budget is None:
        return
    ceiling = limits.budget_ceiling()
    for name, (limit_name, unit) in _UNITS.items():
        asked = getattr(budget, name)
        if asked is not None and asked > ceiling[name]:
            raise BadInput(f"budget.{name} = {asked:g} {unit} is above tenant {tenant!r}'s ceiling of "
                           f"{ceiling[name]:g} {unit} ({limit_name}); ask for at most that")


def refusal(accepted: Accepted, admitted: RunAdmission, now: float) -> TenantLimitExceeded | None:
    """The error for an acceptance refused by a tenant limit (None when it was not)."""
    limits = admitted.limits
    if accepted.outcome == "queue_full":
        return TenantLimitExceeded(
            f"tenant {admitted.tenant!r} already has {accepted.detail} runs queued or running (max_queued = "
            f"{limits.max_queued}); retry when one has ended", retry_after=QUEUE_RETRY_AFTER_S)
    if accepted.outcome == "rate_limited":
        return TenantLimitExceeded(
            f"tenant {admitted.tenant!r} submitted {limits.submissions_per_minute} runs in the last 60 s "
            "(submissions_per_minute)", retry_after=retry_after_s(float(accepted.detail), now * 1000))
    return None


def upload_limit(security: SecurityConfig, tenant: str) -> int:
    """The largest single upload the tenant may send: the import limit, or its whole daily quota if smaller."""
    return min(security.imports.max_upload_bytes, security.tenants.limits(tenant).upload_bytes_per_day)


async def charge_upload(quotas: QuotaStore, security: SecurityConfig, tenant: str, size: int) -> None:
    """Count ``size`` request-body bytes against the tenant's UTC day; `TenantLimitExceeded` (429, Retry-After =
    seconds to the next UTC day) when it does not fit — then nothing is counted."""
    quota = security.tenants.limits(tenant).upload_bytes_per_day
    if size > quota:
        raise TenantLimitExceeded(f"upload of {size} bytes is over tenant {tenant!r}'s daily quota of {quota} "
                                  "bytes (upload_bytes_per_day)", status=413)
    charge = await quotas.charge_upload(tenant, size, quota)
    if not charge.ok:
        raise TenantLimitExceeded(f"tenant {tenant!r} uploaded {charge.used} bytes today (UTC); {size} more would "
                                  f"pass the daily quota of {quota} bytes (upload_bytes_per_day)",
                                  retry_after=charge.retry_after)


async def ensure_upload_room(quotas: QuotaStore, security: SecurityConfig, tenant: str, declared: int) -> None:
    """Before reading a body of ``declared`` bytes (Content-Length): refuse at once what cannot fit today."""
    quota = security.tenants.limits(tenant).upload_bytes_per_day
    used = await quotas.uploads_today(tenant)
    if declared <= quota and used + declared > quota:
        raise TenantLimitExceeded(f"tenant {tenant!r} uploaded {used} bytes today (UTC); {declared} more would "
                                  f"pass the daily quota of {quota} bytes (upload_bytes_per_day)",
                                  retry_after=seconds_to_next_utc_day(time.time()))


def _disk_full(tenant: str, used: int, limit: int) -> QuotaExceeded:
    return QuotaExceeded("disk_bytes", used, limit, f"tenant {tenant!r}'s projects use {used} of {limit} bytes on "
                         "disk (disk_bytes): nothing more can be stored until the quota is raised")


async def ensure_disk_room(quotas: QuotaStore, security: SecurityConfig, tenant: str) -> None:
    """Before accepting a run: `QuotaExceeded` (507) while the tenant's projects are at or over ``disk_bytes``."""
    limit = security.tenants.limits(tenant).disk_bytes
    used = await quotas.disk_used(tenant)
    if used >= limit:
        raise _disk_full(tenant, used, limit)


async def reserve_import(quotas: QuotaStore, security: SecurityConfig, tenant: str, project_id: str) -> ImportLimits:
    """The import limits of a new project: the ``[imports]`` ones, and the room left in the tenant's disk quota,
    reserved for ``project_id`` until `measure_project` replaces the reservation (or it expires). `QuotaExceeded`
    when no room is left."""
    base = ImportLimits.from_config(security.imports)
    limit = security.tenants.limits(tenant).disk_bytes
    grant = await quotas.reserve_disk(tenant, project_id, base.max_total_bytes, limit)
    if not grant.ok:
        raise _disk_full(tenant, grant.used, limit)
    return dataclasses.replace(base, disk_limit=limit, disk_used=grant.used)


async def measure_project(quotas: QuotaStore, tenant: str, project_id: str, project: Path | None) -> int | None:
    """Record the bytes ``project`` takes now (None or gone: the project no longer counts)."""
    size = await asyncio.to_thread(tree_bytes, project) if project is not None else None
    await quotas.set_disk(tenant, project_id, size)
    return size


async def settle_storage(quotas: QuotaStore, gc: SnapshotGC, tenant: str, project_id: str, project: Path) -> None:
    """When a run has ended: re-measure its project (what the writer and the delivery left) and free the snapshots
    only it kept live. Never raises (the run has ended already; the next pass catches up)."""
    try:
        await measure_project(quotas, tenant, project_id, project)
        await gc.collect(tenant)
    except Exception:  # noqa: BLE001 - accounting after the end must not change how the run ended
        log.warning("storage accounting after a run of tenant %s failed", tenant, exc_info=True)

