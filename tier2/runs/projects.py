"""Use case: load an existing game project for a tenant — an uploaded zip/tar archive (a byte stream) or a
directory on the server inside the import root — and register it under a new ``project_id`` to run on.

The archive is spooled to a temporary file under the byte limit as it arrives (never held in memory), charged to
the tenant's upload bytes per day, and unpacked by `tier2.workspace.importer`, which checks every limit while it
reads — the tenant's disk quota too: before anything is read the room left in it is reserved for the new project
(`tier2.runs.tenancy.reserve_import`), the unpacking stops the moment it passes that room, and the project's
measured size replaces the reservation when it is registered. On any error — a limit, a corrupt archive, an
exception — the project folder, the temporary file and the reservation are removed. Errors: `PayloadTooLarge`,
`BadInput`, `TenantLimitExceeded`, `QuotaExceeded` (disk).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tier2.design.reader import read_brief
from tier2.errors import BadInput, PayloadTooLarge
from tier2.packs import Pack
from tier2.runs.process.runtime import Runtime
from tier2.runs.request import RunRequest
from tier2.runs.tenancy import charge_upload, ensure_upload_room, measure_project, reserve_import, upload_limit
from tier2.store.quotas import QuotaStore
from tier2.workspace.importer import Imported, ImportLimits, copy_directory, extract_archive
from tier2.workspace.projects import adopt_project, pack_imported, project_id_for, project_pack

__all__ = ["LoadedProject", "genre_for_brief", "import_archive", "import_directory", "run_pack_of"]


@dataclass(frozen=True)
class LoadedProject:
    project_id: str
    files: int
    pack: str
    #: reserved top-level names dropped from the input (``.mcp``, ``skills/``, ``dist/``...)
    stripped: list[str] = field(default_factory=list)


@contextlib.asynccontextmanager
async def _spooled(chunks: AsyncIterator[bytes], declared: int | None, limit: int,
                   tmp_dir: Path) -> AsyncIterator[tuple[Path, int]]:
    """The byte stream in a temporary file (removed on exit), refused past ``limit`` bytes as it arrives."""
    if declared is None or declared > limit:
        raise PayloadTooLarge(f"upload is over the limit of {limit} bytes")
    tmp_dir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="upload-", dir=tmp_dir)
    path = Path(name)
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            async for chunk in chunks:
                size += len(chunk)
                if size > limit:
                    raise PayloadTooLarge(f"upload is over the limit of {limit} bytes")
                out.write(chunk)
        yield path, size
    finally:
        path.unlink(missing_ok=True)


Fill = Callable[[Path, ImportLimits], Awaitable[tuple[Imported, dict[str, Any]]]]


async def _load(rt: Runtime, tenant: str, fill: Fill) -> LoadedProject:
    """A new project directory filled by ``fill`` within the limits (the tenant's disk room reserved first),
    checked as a pack project, measured and registered; removed (and its reservation) on error."""
    project_id = project_id_for(f"proj-{uuid.uuid4().hex[:12]}")
    dest = rt.settings.workspaces / "projects" / project_id
    quotas = QuotaStore(rt.store.r, rt.store.keys)
    limits = await reserve_import(quotas, rt.security, tenant, project_id)
    try:
        imported, source = await fill(dest, limits)
        # the pack whose engine its sources import (the default when none or several do)
        pack = pack_imported(dest, list(rt.packs.values())) or rt.pack
        info = adopt_project(pack, dest, project_id)
        size = await measure_project(quotas, tenant, project_id, dest)
        await rt.store.put_project(project_id, {"tenant": tenant, "path": str(dest), "pack": info.pack,
                                                "source": source, "files": imported.files, "bytes": size,
                                                "stripped": imported.stripped})
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        with contextlib.suppress(Exception):
            await asyncio.shield(quotas.set_disk(tenant, project_id, None))
        raise
    return LoadedProject(project_id, imported.files, info.pack, list(imported.stripped))


async def import_directory(rt: Runtime, tenant: str, path: str) -> LoadedProject:
    """Copy a directory inside the import root (``TIER2_IMPORT_ROOT``, default ``workspaces/import/``)."""
    root = rt.settings.import_root or rt.settings.workspaces / "import"

    async def fill(dest: Path, limits: ImportLimits) -> tuple[Imported, dict[str, Any]]:
        imported = await asyncio.to_thread(copy_directory, Path(path), root, dest, limits)
        return imported, {"kind": "directory", "path": path}

    return await _load(rt, tenant, fill)


async def import_archive(rt: Runtime, tenant: str, chunks: AsyncIterator[bytes],
                         declared: int | None) -> LoadedProject:
    """Unpack a zip/tar (optionally gzipped) archive arriving as ``chunks``; ``declared`` is its announced size
    (None: unknown or unusable, refused). What cannot fit the tenant's day is refused before reading."""
    quotas = QuotaStore(rt.store.r, rt.store.keys)
    await ensure_upload_room(quotas, rt.security, tenant, declared or 0)
    limit = upload_limit(rt.security, tenant)

    async def fill(dest: Path, limits: ImportLimits) -> tuple[Imported, dict[str, Any]]:
        async with _spooled(chunks, declared, limit, rt.settings.workspaces / ".uploads") as (path, n):
            await charge_upload(quotas, rt.security, tenant, n)
            imported = await asyncio.to_thread(extract_archive, path, dest, limits)
        return imported, {"kind": "archive", "bytes": n}

    return await _load(rt, tenant, fill)


def run_pack_of(rt: Runtime, req: RunRequest) -> Pack:
    """The run's pack, resolved once when it starts: the pack its project was made with (a follow-up, a loaded
    project: its ``.tier2/project.json``), else the one the request names (recorded at submission), else the
    runtime's default. A request naming another pack than its project's is `BadInput` (never a silent switch); a
    pack this process has not loaded is `PackError`."""
    made = project_pack(req.existing_project) if req.existing_project is not None else None
    if made is not None and req.pack is not None and req.pack != made:
        raise BadInput(f"project {req.project_id or req.existing_project} was made with pack {made!r}: its runs use "
                       f"that pack, not {req.pack!r}")
    return rt.pack_for(made or req.pack)


def genre_for_brief(pack: Pack, brief: str) -> str | None:
    """The pack genre a new project starts from: the one the brief reader finds in what the brief describes (the
    design phase may switch it while the project is untouched), else None (the pack's default template, which a
    design that cannot tell the genre never gets to build on: the run ends at the design)."""
    named = read_brief(brief, pack.genre_cues(), pack.genres).genre
    return named if named in pack.genres else None
