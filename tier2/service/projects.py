"""``/v1/projects``: load an existing game project — an uploaded zip/tar archive (request body) or a directory on
the server inside the import root — and get a ``project_id`` to run on. Projects belong to the tenant that
loaded them.

HTTP only: the body's media type picks the use case (`tier2.runs.projects.import_archive` streams the body to
it; `import_directory` takes the parsed JSON), which checks every limit, registers the project and cleans up
after any error.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError

from tier2.errors import ApiError, BadInput, ErrorCode, PayloadTooLarge
from tier2.runs.projects import LoadedProject, import_archive, import_directory
from tier2.runs.queries import project_details
from tier2.service.deps import RuntimeDep, TenantDep
from tier2.service.errors import error_responses
from tier2.service.schemas import ProjectImport, ProjectLoaded, ProjectView
from tier2.service.views import public_project

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["projects"])
_ARCHIVE_TYPES = ("application/zip", "application/x-zip-compressed", "application/x-tar", "application/gzip",
                  "application/x-gzip", "application/x-gtar", "application/octet-stream")
_MAX_JSON_BYTES = 16_384
_BINARY = {"schema": {"type": "string", "format": "binary"}}
#: the request body as documented: any archive type, or the JSON form
_BODY: dict[str, Any] = {"requestBody": {"required": True, "content": {
    **{t: _BINARY for t in _ARCHIVE_TYPES}, "application/json": {"schema": ProjectImport.model_json_schema()}}}}


async def _small_body(request: Request) -> bytes:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > _MAX_JSON_BYTES:
            raise PayloadTooLarge(f"a JSON body is at most {_MAX_JSON_BYTES} bytes")
    return body


async def _directory_request(request: Request) -> ProjectImport:
    try:
        return ProjectImport.model_validate_json(await _small_body(request))
    except ValidationError as exc:
        errors = exc.errors()
        where = ".".join(str(p) for p in errors[0]["loc"]) if errors else "body"
        why = str(errors[0]["msg"])[:200] if errors else "invalid"
        raise BadInput(f'JSON body must be {{"path": "<directory inside the import root>"}} ({where or "body"}: '
                       f"{why})") from None


@router.post("/projects", status_code=201, response_model=ProjectLoaded, openapi_extra=_BODY,
             responses=error_responses(413, 415, 422, 429, 507))
async def load_project(request: Request, rt: RuntimeDep, tenant: TenantDep) -> ProjectLoaded:
    """Body: a zip/tar archive (``Content-Type: application/zip`` or ``application/x-tar``/gzip), or JSON
    ``{"path": "<dir inside the import root>"}``. Reserved top-level names (``.mcp``, ``skills/``,
    ``sessions/``, ``.tier2/``, ``dist/``, ``node_modules/``, ``.git/``, ``delivery.json``, ``screenshot.png``)
    are not project input: they are dropped and listed in ``stripped``."""
    ctype = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
    loaded: LoadedProject
    if ctype == "application/json":
        body = await _directory_request(request)
        loaded = await import_directory(rt, tenant, body.path)
    elif ctype in _ARCHIVE_TYPES:
        declared = request.headers.get("content-length") or "0"
        loaded = await import_archive(rt, tenant, request.stream(), int(declared) if declared.isdigit() else None)
    else:
        raise ApiError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 415,
                       "unsupported Content-Type: send a zip/tar archive or JSON {\"path\": ...}")
    return ProjectLoaded(project_id=loaded.project_id, files=loaded.files, pack=loaded.pack,
                         stripped=loaded.stripped)


@router.get("/projects/{project_id}", response_model=ProjectView, response_model_exclude_unset=True,
            responses=error_responses(404, 422))
async def get_project(project_id: str, rt: RuntimeDep, tenant: TenantDep) -> ProjectView:
    """The project's id, pack, source and file count (no server paths)."""
    return public_project(await project_details(rt, tenant, project_id))
