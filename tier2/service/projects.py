"""``/v1/projects``: load an existing game project — an uploaded zip/tar archive (request body) or a directory on
the server inside the import root — and get a ``project_id`` to run on. Projects belong to the tenant that
loaded them.

The upload is streamed to a temporary file under the byte limit (never held in memory) and unpacked by
`tier2.workspace.importer`, which checks every limit while it reads. On any error — a limit, a corrupt archive,
bad JSON, an exception — the project folder and the temporary file are removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tier2.errors import ApiError, BadInput, ErrorCode, PayloadTooLarge
from tier2.runs import Runtime
from tier2.runs.tenancy import TenantLimitExceeded, charge_upload, ensure_upload_room, upload_limit
from tier2.service.auth import tenant_of
from tier2.service.limits import tenant_http_error
from tier2.service.text import Line
from tier2.store.quotas import QuotaStore
from tier2.workspace.importer import Imported, ImportLimits, copy_directory, extract_archive
from tier2.workspace.projects import adopt_project, project_id_for

__all__ = ["router", "project_or_404"]

router = APIRouter(prefix="/v1", tags=["projects"])
_ARCHIVE_TYPES = {"application/zip", "application/x-zip-compressed", "application/x-tar", "application/gzip",
                  "application/x-gzip", "application/x-gtar", "application/octet-stream"}
_MAX_JSON_BYTES = 16_384


class ProjectImport(BaseModel):
    """JSON body: a directory on the server, inside ``TIER2_IMPORT_ROOT``."""

    model_config = ConfigDict(extra="forbid")
    path: Line = Field(min_length=1, description="a directory inside the import root")


def _rt(request: Request) -> Runtime:
    return request.app.state.tier2


async def project_or_404(rt: Runtime, project_id: str, tenant: str) -> dict[str, Any]:
    record = await rt.store.get_project(project_id) if 0 < len(project_id) <= 64 else None
    if record is None or record.get("tenant") != tenant:
        raise ApiError(ErrorCode.NOT_FOUND, 404, "unknown project")
    return record


@contextlib.asynccontextmanager
async def _spooled(request: Request, limit: int, tmp_dir: Path) -> AsyncIterator[tuple[Path, int]]:
    """The request body in a temporary file (removed on exit), refused past ``limit`` bytes as it arrives."""
    declared = request.headers.get("content-length") or "0"
    if not declared.isdigit() or int(declared) > limit:
        raise PayloadTooLarge(f"upload is over the limit of {limit} bytes")
    tmp_dir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="upload-", dir=tmp_dir)
    path = Path(name)
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise PayloadTooLarge(f"upload is over the limit of {limit} bytes")
                out.write(chunk)
        yield path, size
    finally:
        path.unlink(missing_ok=True)


async def _small_body(request: Request) -> bytes:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > _MAX_JSON_BYTES:
            raise PayloadTooLarge(f"a JSON body is at most {_MAX_JSON_BYTES} bytes")
    return body


async def _import(request: Request, rt: Runtime, ctype: str, dest: Path, tenant: str,
                  ) -> tuple[Imported, dict[str, Any]]:
    limits_cfg = rt.security.imports
    limits = ImportLimits.from_config(limits_cfg)
    if ctype == "application/json":
        try:
            body = ProjectImport.model_validate_json(await _small_body(request))
        except ValidationError as exc:
            first: Mapping[str, Any] = exc.errors()[0] if exc.errors() else {}
            where = ".".join(str(p) for p in first.get("loc", ())) or "body"
            raise BadInput(f'JSON body must be {{"path": "<directory inside the import root>"}} '
                           f"({where}: {str(first.get('msg', 'invalid'))[:200]})") from None
        root = rt.settings.import_root or rt.settings.workspaces / "import"
        imported = await asyncio.to_thread(copy_directory, Path(body.path), root, dest, limits)
        return imported, {"kind": "directory", "path": body.path}
    if ctype in _ARCHIVE_TYPES:
        quotas = QuotaStore(rt.store.r, rt.store.keys)  # the tenant's upload bytes per day
        declared = request.headers.get("content-length") or "0"
        await ensure_upload_room(quotas, rt.security, tenant, int(declared) if declared.isdigit() else 0)
        limit = upload_limit(rt.security, tenant)
        async with _spooled(request, limit, rt.settings.workspaces / ".uploads") as (path, n):
            await charge_upload(quotas, rt.security, tenant, n)
            imported = await asyncio.to_thread(extract_archive, path, dest, limits)
        return imported, {"kind": "archive", "bytes": n}
    raise ApiError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 415,
                   "unsupported Content-Type: send a zip/tar archive or JSON {\"path\": ...}")


@router.post("/projects", status_code=201)
async def load_project(request: Request, tenant: str = Depends(tenant_of)) -> dict[str, Any]:
    """Body: a zip/tar archive (``Content-Type: application/zip`` or ``application/x-tar``/gzip), or JSON
    ``{"path": "<dir inside the import root>"}``. Reserved top-level names (``.mcp``, ``skills/``,
    ``sessions/``, ``.tier2/``, ``dist/``, ``node_modules/``, ``.git/``, ``delivery.json``, ``screenshot.png``)
    are not project input: they are dropped and listed in ``stripped``."""
    rt = _rt(request)
    project_id = project_id_for(f"proj-{uuid.uuid4().hex[:12]}")
    dest = rt.settings.workspaces / "projects" / project_id
    ctype = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
    try:
        imported, source = await _import(request, rt, ctype, dest, tenant)
        info = adopt_project(rt.pack, dest, project_id)
        await rt.store.put_project(project_id, {"tenant": tenant, "path": str(dest), "pack": info.pack,
                                                "source": source, "files": imported.files,
                                                "stripped": imported.stripped})
    except TenantLimitExceeded as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise tenant_http_error(exc) from exc
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return {"project_id": project_id, "files": imported.files, "pack": info.pack, "stripped": imported.stripped}


@router.get("/projects/{project_id}")
async def get_project(project_id: str, request: Request, tenant: str = Depends(tenant_of)) -> dict[str, Any]:
    """The project's id, pack, source and file count (no server paths)."""
    record = await project_or_404(_rt(request), project_id, tenant)
    keep = ("project_id", "tenant", "pack", "source", "files", "stripped", "created_at")
    return {k: record[k] for k in keep if k in record}
