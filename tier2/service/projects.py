"""``/v1/projects``: load an existing game project — an uploaded zip/tar archive (request body) or a directory on
the server inside the import root — and get a ``project_id`` to run on. Projects belong to the tenant that
loaded them."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request

from tier2.errors import BadInput
from tier2.runs import Runtime
from tier2.runs.tenancy import TenantLimitExceeded, charge_upload, ensure_upload_room, upload_limit
from tier2.service.auth import tenant_of
from tier2.service.limits import tenant_http_error
from tier2.store.quotas import QuotaStore
from tier2.workspace.importer import ImportLimits, copy_directory, extract_archive
from tier2.workspace.projects import adopt_project, project_id_for

__all__ = ["router", "project_or_404"]

router = APIRouter(prefix="/v1", tags=["projects"])
_ARCHIVE_TYPES = {"application/zip", "application/x-zip-compressed", "application/x-tar", "application/gzip",
                  "application/x-gzip", "application/x-gtar", "application/octet-stream"}


def _rt(request: Request) -> Runtime:
    return request.app.state.tier2


async def project_or_404(rt: Runtime, project_id: str, tenant: str) -> dict[str, Any]:
    record = await rt.store.get_project(project_id) if len(project_id) <= 64 else None
    if record is None or record.get("tenant") != tenant:
        raise HTTPException(404, f"unknown project {project_id!r}")
    return record


async def _read_body(request: Request, limit: int) -> bytes:
    declared = int(request.headers.get("content-length") or 0)
    if declared > limit:
        raise HTTPException(413, f"upload is {declared} bytes; the limit is {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"upload is over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


@router.post("/projects", status_code=201)
async def load_project(request: Request, tenant: str = Depends(tenant_of)) -> dict[str, Any]:
    """Body: a zip/tar archive (``Content-Type: application/zip`` or ``application/x-tar``/gzip), or JSON
    ``{"path": "<dir inside the import root>"}``."""
    rt = _rt(request)
    limits_cfg = rt.security.imports
    limits = ImportLimits(limits_cfg.max_files, limits_cfg.max_file_bytes, limits_cfg.max_total_bytes)
    project_id = project_id_for(f"proj-{uuid.uuid4().hex[:12]}")
    dest = rt.settings.workspaces / "projects" / project_id
    ctype = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
    try:
        if ctype == "application/json":
            body = await request.json()
            if not isinstance(body, dict) or not isinstance(body.get("path"), str):
                raise BadInput('JSON body must be {"path": "<directory inside the import root>"}')
            root = rt.settings.import_root or rt.settings.workspaces / "import"
            files = await asyncio.to_thread(copy_directory, Path(body["path"]), root, dest, limits)
            source = {"kind": "directory", "path": body["path"]}
        elif ctype in _ARCHIVE_TYPES:
            quotas = QuotaStore(rt.store.r, rt.store.keys)
            await ensure_upload_room(quotas, rt.security, tenant, int(request.headers.get("content-length") or 0))
            data = await _read_body(request, upload_limit(rt.security, tenant))
            await charge_upload(quotas, rt.security, tenant, len(data))
            files = await asyncio.to_thread(extract_archive, data, dest, limits)
            source = {"kind": "archive", "bytes": len(data)}
        else:
            raise BadInput(f"unsupported Content-Type {ctype or '(none)'}: send a zip/tar archive or JSON {{path}}")
        info = adopt_project(rt.pack, dest, project_id)
    except TenantLimitExceeded as exc:
        raise tenant_http_error(exc) from exc
    except BadInput as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise HTTPException(422, str(exc)) from exc
    await rt.store.put_project(project_id, {"tenant": tenant, "path": str(dest), "pack": info.pack,
                                            "source": source, "files": files})
    return {"project_id": project_id, "files": files, "pack": info.pack}


@router.get("/projects/{project_id}")
async def get_project(project_id: str, request: Request, tenant: str = Depends(tenant_of)) -> dict[str, Any]:
    return await project_or_404(_rt(request), project_id, tenant)
