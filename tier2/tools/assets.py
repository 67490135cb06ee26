"""The writer's RequestAsset tool: an asset for an entity of the game, made and registered in the project.

``RequestAsset {role, description, requirements?}`` makes the asset (offline: the deterministic generator of
`tier2.design.asset_gen`; with an ``images`` route for the ``assets`` role: that model, falling back to the
generator when it fails) and registers it in ``assets/manifest.json`` (`tier2.design.asset_pool`) under
``asset_key(role, name_of(description))``. Every argument is hostile: checked by `check_request`; the file and the
manifest are written through `ProjectDir` only, within the pool's limits. The pack's preload loads every registered
asset under its id, and the templates draw the entity of that role with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentscope.message import TextBlock, ToolResultState
from agentscope.permission import PermissionBehavior, PermissionContext, PermissionDecision
from agentscope.tool import ToolBase, ToolChunk

from tier2.design.asset_gen import generate
from tier2.design.asset_pool import (
    ASSET_ROLES,
    MAX_ASSET_BYTES,
    MAX_DESCRIPTION,
    MAX_REQUIREMENTS,
    AssetRefused,
    check_request,
    name_of,
    register_asset,
)
from tier2.design.assets import asset_key
from tier2.hostio import ProjectDir
from tier2.models.images import ImageRoute, ImageRouteError, generate_image
from tier2.tools.project_io import run_tool_io

__all__ = ["RequestAssetTool", "make_asset_tools"]

_LICENCE = "CC0-1.0"
_SPEC = "design/spec.json"
_MAX_SPEC_BYTES = 1_000_000


def spec_requirements(pdir: ProjectDir, asset_id: str) -> list[str]:
    """The ids of the design spec's ``asset_role`` requirements that name ``asset_id`` (the spec read through
    `ProjectDir`, size-capped, any shape tolerated: nothing found is no requirement)."""
    try:
        spec = json.loads(pdir.read_text(_SPEC, max_bytes=_MAX_SPEC_BYTES))
    except (OSError, ValueError):
        return []
    reqs = spec.get("requirements") if isinstance(spec, dict) else None
    out: list[str] = []
    for r in reqs if isinstance(reqs, list) else []:
        pred = r.get("predicate") if isinstance(r, dict) else None
        if isinstance(pred, dict) and pred.get("kind") == "asset_role" and pred.get("asset") == asset_id \
                and isinstance(r.get("id"), str) and r["id"] not in out:
            out.append(r["id"])
    return out


def _chunk(text: str, ok: bool = True, **meta: Any) -> ToolChunk:
    return ToolChunk(content=[TextBlock(text=text)], state=ToolResultState.SUCCESS if ok else ToolResultState.ERROR,
                     metadata=meta)


class RequestAssetTool(ToolBase):
    name = "RequestAsset"
    description = (
        "Make and register (assets/manifest.json) the asset of a game entity: role, description ('a paper "
        "airplane'), optional requirement ids (the spec's asset_role ones are added). Answers its key "
        "(player.paper_airplane); the template loads it and draws that role with it after the next Build."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "role": {"type": "string", "enum": list(ASSET_ROLES)},
            "description": {"type": "string", "minLength": 1, "maxLength": MAX_DESCRIPTION},
            "requirements": {"type": "array", "items": {"type": "string", "pattern": "^R[0-9]{1,3}$"},
                             "maxItems": 20},
        },
        "required": ["role", "description"],
    }
    is_concurrency_safe = False
    is_read_only = False

    def __init__(self, project: Path, route: ImageRoute | None = None) -> None:
        super().__init__()
        self.pdir = ProjectDir(project)
        self.route = route

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> PermissionDecision:
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, message="RequestAsset writes only assets/")

    async def call(self, role: object = None, description: object = None, requirements: object = None,
                   **extra: Any) -> ToolChunk:
        if extra:
            return _chunk(f"Refused: unknown argument(s) {', '.join(sorted(extra)[:5])}", ok=False)
        try:
            role_s, desc, reqs = check_request(role, description, requirements)
        except AssetRefused as exc:
            return _chunk(f"Refused: {exc}", ok=False)
        source, note = "procedural", ""
        data: bytes | None = None
        if self.route is not None and role_s != "sound":
            try:
                data = await generate_image(self.route, f"{role_s} sprite for a 2D game: {desc}", MAX_ASSET_BYTES)
                source = "model"
            except ImageRouteError as exc:
                note = f" (the images route failed: {exc}; the offline generator made it)"
        if data is None:
            data = await run_tool_io(generate, role_s, desc)
        named = await run_tool_io(spec_requirements, self.pdir, asset_key(role_s, name_of(desc)))
        reqs = [*reqs, *(r for r in named if r not in reqs)][:MAX_REQUIREMENTS]  # the spec's, recorded too
        try:
            entry, dropped = await run_tool_io(register_asset, self.pdir, role_s, desc, reqs, data, source,
                                               _LICENCE)
        except (AssetRefused, OSError) as exc:
            return _chunk(f"Refused: {exc}", ok=False)
        text = (f"Registered {entry.id}: {entry.file} ({len(data)} bytes, {entry.source}, {entry.licence}){note}; "
                "loaded under that key after the next Build.")
        if dropped:
            text += " Dropped from the manifest (they no longer verified): " + "; ".join(dropped[:5])
        return _chunk(text, id=entry.id, file=entry.file, source=entry.source)


def make_asset_tools(project: Path, route: ImageRoute | None = None) -> list[ToolBase]:
    return [RequestAssetTool(project, route)]
