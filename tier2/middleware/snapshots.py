"""Project snapshots after every completed write step, with the snapshot id in the step's checkpoint.

`SnapshotMiddleware` sits just inside the checkpoint layer (outside the operation ledger): after a tool that changes
files (Write, Edit, Bash, or any tool whose response says ``files_changed`` — a fix the case library applied during
a Build or RunGame) returns, it snapshots the project content-addressed (`tier2.workspace.snapshots` +
`tier2.store.snapshots`) and puts the id in ``AgentState.middle_context`` — the checkpoint written right after
this step carries it. It also records "the files right after operation X"; when the ledger *replays* an
operation on a resumed attempt (the effect is not repeated), the files are brought back to that snapshot, so files
and conversation agree step by step. `restore_snapshot` puts a project back to a checkpoint's snapshot (a new
attempt after a lost sandbox).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from agentscope.middleware import MiddlewareBase
from agentscope.tool import ToolResponse

from tier2.middleware.operations import operation_id
from tier2.store.snapshots import SnapshotStore
from tier2.workspace.snapshots import Manifest, apply, scan

__all__ = ["SNAPSHOT_KEY", "SnapshotMiddleware", "WRITE_TOOLS", "restore_snapshot", "snapshot_of", "take_snapshot"]

#: where the newest snapshot id lives in ``AgentState.middle_context`` (so every checkpoint carries it)
SNAPSHOT_KEY = "tier2.snapshot"
#: tools whose completion changes project files
WRITE_TOOLS = frozenset({"Write", "Edit", "Bash"})


async def take_snapshot(store: SnapshotStore, project: Path) -> str:
    manifest, blobs = await asyncio.to_thread(scan, project)
    await store.put(manifest.id, manifest.canonical(), blobs)
    return manifest.id


async def restore_snapshot(store: SnapshotStore, project: Path, snapshot_id: str) -> int:
    """Make ``project`` hold exactly the files of ``snapshot_id``; returns how many entries changed."""
    raw = await store.manifest(snapshot_id)
    if raw is None:
        raise ValueError(f"snapshot {snapshot_id} is not in the store")
    manifest = Manifest.loads(raw)
    current = (await asyncio.to_thread(scan, project))[0] if project.exists() else Manifest()
    have = {e.path: e.sha256 for e in current.entries}
    need = sorted({e.sha256 for e in manifest.entries if e.link is None and have.get(e.path) != e.sha256})
    blobs = await store.blobs(need)
    return await asyncio.to_thread(apply, project, manifest, blobs.__getitem__)


def snapshot_of(state: dict[str, Any] | str | None) -> str | None:
    """The snapshot id a checkpointed AgentState (dict or JSON) carries."""
    if not state:
        return None
    data = json.loads(state) if isinstance(state, str) else state
    value = (data.get("middle_context") or {}).get(SNAPSHOT_KEY)
    return value if isinstance(value, str) else None


class SnapshotMiddleware(MiddlewareBase):
    def __init__(self, store: SnapshotStore, project: Path, run_id: str,
                 tools: frozenset[str] = WRITE_TOOLS) -> None:
        self.store, self.project, self.run_id, self.tools = store, project, run_id, tools

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any) -> AsyncGenerator:
        call = input_kwargs["tool_call"]
        final: ToolResponse | None = None
        async for chunk in next_handler(**input_kwargs):
            if isinstance(chunk, ToolResponse):
                final = chunk
            yield chunk
        if final is None:
            return
        meta = final.metadata or {}
        if call.name not in self.tools and not meta.get("files_changed"):  # e.g. the case library applied a fix
            return
        op = meta.get("operation") or operation_id(agent, call)
        if meta.get("replayed"):
            after = await self.store.after_op(self.run_id, op)
            if after is not None:  # the files as they were right after the operation the ledger replayed
                await restore_snapshot(self.store, self.project, after)
                agent.state.middle_context[SNAPSHOT_KEY] = after
                return
        sid = await take_snapshot(self.store, self.project)
        agent.state.middle_context[SNAPSHOT_KEY] = sid
        await self.store.record_op(self.run_id, op, sid)
