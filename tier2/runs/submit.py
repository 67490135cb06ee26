"""Use case: submit a brief as a run — validate, admit (tenant limits), accept durably, answer a retry.

`submit_run` is what ``POST /v1/runs`` does, without HTTP: it takes a typed `RunSubmission` and returns a
`SubmitResult`, or raises the error that says why not — `BadInput`/`ModelRouteError` (the brief, the route, the
budget), `RouteNotAllowed` (a route the tenant may not use), `NotFound` (a thread or project that is not the
tenant's), `Conflict` (an idempotency key reused with another request; a project that already has a writer),
`TenantLimitExceeded` (queue or rate limit), `QuotaExceeded` (the tenant's projects fill its disk quota). The run
record and its dispatch entry are committed together
(`RunStore.accept_run`); a worker then executes it.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tier2.errors import ApiError, BadInput, Conflict, ErrorCode, NotFound
from tier2.packs.registry import installed_pack_ids
from tier2.runs.loop.sandboxing import choose_workspace
from tier2.runs.process.runtime import Runtime
from tier2.runs.request import new_run_id, validate_brief
from tier2.runs.tenancy import admit_run, ensure_disk_room, refusal
from tier2.settings.loader import BudgetOverride
from tier2.store.quotas import QuotaStore
from tier2.workspace.projects import project_id_for, project_pack

__all__ = ["AcceptedRun", "RunSubmission", "SubmitResult", "run_pack", "served_pack", "submit_run"]


@dataclass(frozen=True)
class RunSubmission:
    """A tenant's request for a run: a brief, optionally on a loaded project or continuing a thread."""

    tenant: str
    brief: str
    model: str | None = None
    project_id: str | None = None
    thread_id: str | None = None
    budget: BudgetOverride | None = None
    #: the client's retry key (per tenant): the same key and request give the same run
    idempotency_key: str | None = None
    #: stop after this phase (``"design"``): the design can be read and edited, then continued in the thread
    pause_after: Literal["design"] | None = None
    #: workspace kind (``local``/``isolated``/``docker``) within the security ceiling and the hot policy
    workspace: Literal["local", "isolated", "docker"] | None = None
    #: the capability pack asked for (None: the project's, else the default); `served_pack` checks it
    pack: str | None = None

    def options(self) -> dict[str, Any]:
        """Per-run options handed to the run's governance layers (its own budget, its workspace kind; unset fields
        left out)."""
        out: dict[str, Any] = {}
        if self.budget is not None:
            out["budget"] = self.budget.model_dump(exclude_none=True)
        if self.workspace is not None:
            out["workspace"] = self.workspace
        return out

    def fingerprint(self) -> str:
        """sha256 of the request (what a replay must match); the same form as the request body's JSON."""
        body = {"brief": self.brief, "model": self.model, "project_id": self.project_id,
                "thread_id": self.thread_id, "budget": self.budget.model_dump() if self.budget is not None else None,
                "pause_after": self.pause_after, **({"workspace": self.workspace} if self.workspace else {}),
                **({"pack": self.pack} if self.pack else {})}
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


class AcceptedRun(BaseModel):
    """The accepted run's ids (also what an idempotent retry gets back)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    run_id: str
    project_id: str
    thread_id: str
    status: Literal["queued"] = "queued"


@dataclass(frozen=True)
class SubmitResult:
    run: AcceptedRun
    #: True when this answers a retry (same idempotency key and request): no new run was created
    replayed: bool = False


def served_pack(rt: Runtime, asked: str) -> str:
    """``asked`` when it is a pack this process serves (every allowed, installed pack is loaded at start: a run
    builds with the one it names); otherwise `BadInput` saying why — not installed, or not in ``allowed_packs`` — so
    a brief for one engine is never built with another."""
    if asked in rt.packs or asked == rt.pack.id:
        return asked
    installed = installed_pack_ids(rt.settings.packs_dir)
    if asked not in installed:
        raise BadInput(f"pack {asked!r} is not installed (installed: {', '.join(installed)})")
    if asked not in rt.security.allowed_packs:
        raise BadInput(f"pack {asked!r} is not allowed here (allowed_packs: {', '.join(rt.security.allowed_packs)})")
    raise BadInput(f"pack {asked!r} is allowed and installed but was not loaded by this service (it loads its "
                   "allowed packs at start: restart it)")


def run_pack(rt: Runtime, asked: str | None, project_dir: str | None, project_id: str) -> str:
    """The pack a new run uses, resolved once at submission and recorded with it: the pack its project was made
    with (a follow-up, a loaded project), else the one asked for, else the default. Asking a project made with one
    pack for a run with another is `BadInput`: a project never silently switches engines."""
    made = project_pack(Path(project_dir)) if project_dir else None
    if made is not None:
        if asked is not None and asked != made:
            raise BadInput(f"project {project_id} was made with pack {made!r}: its runs use that pack, not "
                           f"{asked!r} (start a new project for another pack)")
        return served_pack(rt, made)
    return served_pack(rt, asked) if asked is not None else rt.pack.id


async def submit_run(rt: Runtime, sub: RunSubmission) -> SubmitResult:
    """Accept ``sub`` as a queued run (durable before this returns), or raise why not (see the module doc)."""
    brief = validate_brief(sub.brief, rt.security.brief)
    policy = rt.policies.snapshot()
    policy.route(sub.model)  # an unknown route: ModelRouteError
    admitted = admit_run(rt.security, policy, sub.tenant, sub.model, sub.budget)
    choose_workspace(rt.security, policy, sub.options())  # a kind above the ceiling: BadInput (422)
    if sub.pack is not None:
        served_pack(rt, sub.pack)  # a pack this service does not serve: BadInput (422), never a substitute
    replay = sub.idempotency_key is not None and bool(
        await rt.store.r.exists(rt.store.keys.idempotency(sub.tenant, sub.idempotency_key)))
    if not replay:  # a retry of an accepted run gets its answer back, full disk or not
        await ensure_disk_room(QuotaStore(rt.store.r, rt.store.keys), rt.security, sub.tenant)  # full: 507
    run_id = new_run_id()
    source_dir: str | None = None
    continues = False
    if sub.thread_id is not None:
        thread = await rt.store.get_thread_for(sub.tenant, sub.thread_id)
        if thread is None:
            raise NotFound("unknown thread")
        thread_id, project_id = sub.thread_id, str(thread["project_id"])
        source_dir, continues = str(thread["project_dir"]), True
    elif sub.project_id is not None:
        project = await rt.store.get_project_for(sub.tenant, sub.project_id)
        if project is None:
            raise NotFound("unknown project")
        source_dir = str(project["path"])
        project_id, thread_id = sub.project_id, "t-" + run_id[2:]
    else:
        project_id, thread_id = project_id_for(f"game-{run_id[2:14]}"), "t-" + run_id[2:]
    project_dir = source_dir or str(rt.settings.workspaces / "projects" / project_id)
    run = AcceptedRun(run_id=run_id, project_id=project_id, thread_id=thread_id)
    options = {**sub.options(), "pack": run_pack(rt, sub.pack, source_dir, project_id)}
    record = {"status": "queued", "phase": "setup", "brief": brief, "project_id": project_id, "tenant": sub.tenant,
              "model_route": sub.model, "thread_id": thread_id, "dispatched": True, "project_dir": project_dir,
              "source_dir": source_dir, "continues_thread": continues, "options": {**options, **admitted.options},
              "pause_after": sub.pause_after}
    fingerprint = sub.fingerprint()
    accepted = await rt.store.accept_run(
        run_id, record, project_id=project_id, dispatch=True, tenant=sub.tenant, idem_key=sub.idempotency_key,
        body_sha=fingerprint, response=run.model_dump(),
        thread=(thread_id, {"tenant": sub.tenant, "project_id": project_id, "project_dir": project_dir}),
        admission=admitted.admission,
    )
    if (limited := refusal(accepted, admitted, time.time())) is not None:
        raise limited
    if accepted.outcome == "replay":
        stored = accepted.idempotency or {}
        if stored.get("body_sha") != fingerprint:
            raise Conflict("Idempotency-Key was already used with a different request body")
        return SubmitResult(AcceptedRun.model_validate(stored["response"]), replayed=True)
    if accepted.outcome == "busy":
        raise Conflict(f"project {project_id} already has a run in progress ({accepted.active_run}); "
                       "one writer per project")
    if accepted.outcome == "not_replicated":  # not durable under a failover yet: no 202 (docs/api.md)
        raise ApiError(ErrorCode.NOT_REPLICATED, 503,
                       f"the run was not acknowledged by enough Redis replicas in time ({accepted.detail} of "
                       f"{rt.store.durability.min_replicas}); retry with the same Idempotency-Key",
                       headers={"Retry-After": "1"})
    return SubmitResult(run)
