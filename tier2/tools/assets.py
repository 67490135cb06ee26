"""The writer's RequestAsset tool: an asset for an entity of the game, made and registered in the project.

``RequestAsset {role, description, requirements?}`` makes the asset (offline: the deterministic generator of
`tier2.design.asset_gen`; with an ``images`` route for the ``assets`` role: that model, falling back to the
generator when it fails) and registers it in ``assets/manifest.json`` (`tier2.design.asset_pool`) under
``asset_key(role, name_of(description))``. Every argument is hostile: checked by `check_request`; the file and the
manifest are written through `ProjectDir` only, within the pool's limits. The pack's preload loads every registered
asset under its id, and the templates draw the entity of that role with it.
"""

from __future__ import annotations

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
    AssetRefused,
    check_request,
    register_asset,
)
from tier2.hostio import ProjectDir
from tier2.models.images import ImageRoute, ImageRouteError, generate_image
from tier2.tools.project_io import run_tool_io

__all__ = ["RequestAssetTool", "make_asset_tools"]

_LICENCE = "CC0-1.0"


def _chunk(text: str, ok: bool = True, **meta: Any) -> ToolChunk:
    return ToolChunk(content=[TextBlock(text=text)], state=ToolResultState.SUCCESS if ok else ToolResultState.ERROR,
                     metadata=meta)


class RequestAssetTool(ToolBase):
    name = "RequestAsset"
    description = (
        "Make an asset for an entity of the game and register it in assets/manifest.json: role (player, enemy, "
        "pickup, goods, customer, obstacle, backdrop, sound), description (what it shows: 'a paper airplane'), "
        "optionally the spec requirement ids it serves. Returns its asset key (e.g. player.paper_airplane): the "
        "template's preload loads every registered asset under its key and draws that role with it. Build again "
        "after requesting assets."
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
        try:
            entry, dropped = await run_tool_io(register_asset, self.pdir, role_s, desc, reqs, data, source,
                                               _LICENCE)
        except (AssetRefused, OSError) as exc:
            return _chunk(f"Refused: {exc}", ok=False)
        text = (f"Registered {entry.id}: {entry.file} ({len(data)} bytes, {entry.source}, {entry.licence}){note}. "
                f"The preload loads it under the key '{entry.id}'; the template draws the {entry.role} with it. "
                "Build again to include it.")
        if dropped:
            text += " Dropped from the manifest (they no longer verified): " + "; ".join(dropped[:5])
        return _chunk(text, id=entry.id, file=entry.file, source=entry.source)


def make_asset_tools(project: Path, route: ImageRoute | None = None) -> list[ToolBase]:
    return [RequestAssetTool(project, route)]
