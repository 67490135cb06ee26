"""Project snapshots after every completed write step, with the snapshot id in the step's checkpoint.

`SnapshotMiddleware` sits just inside the checkpoint layer (outside the operation ledger): after a tool that changes
files (Write, Edit, Bash, or any tool whose response says ``files_changed`` — a fix the case library applied during
a Build or RunGame) returns, it snapshots the project content-addressed (`tier2.workspace.snapshots` +
`tier2.store.snapshots`) and puts the id in ``AgentState.middle_context`` — the checkpoint written right after
this step carries it. It also records "the files right after operation X" — for a side effect of the operation
ledger, from the ledger's effect hook (`record_effect`), *before* the ledger commits the operation, so no worker
death in between can leave a committed operation without its files; when the ledger *replays* an
operation on a resumed attempt (the effect is not repeated), the files are brought back to that snapshot, so files
and conversation agree step by step. `restore_snapshot` puts a project back to a checkpoint's snapshot (a new
attempt after a lost sandbox).

Storage quotas (`tier2.settings.tenants`): a snapshot the tenant's snapshot store cannot take (``snapshot_bytes``
full even after a GC pass, or a file over ``snapshot_blob_bytes``) and a project that takes the tenant past its disk
quota (``disk_bytes``, re-measured after every snapshot) **stop the run** with the reason (``quota: ...``) at the
next model call or at the end of the turn — never from inside the tool call (a concurrent tool batch would turn it
into an ``ExceptionGroup``). A refused snapshot is not skipped silently: the step's checkpoint keeps naming the last
snapshot that was stored whole, and carries the trip (``tier2.quota``, keyed by run), so an attempt resuming from it
restores those files and stops at once — files and conversation never disagree on a run that goes on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentscope.middleware import MiddlewareBase
from agentscope.tool import ToolChunk, ToolResponse

from tier2.errors import QuotaExceeded, RunLimitReached
from tier2.middleware._kwargs import ActingNext, StreamNext
from tier2.middleware.operations import operation_id
from tier2.store.quotas import QuotaStore
from tier2.store.snapshots import SnapshotStore
from tier2.workspace.snapshots import Manifest, apply, scan
from tier2.workspace.usage import tree_bytes

__all__ = ["QUOTA_KEY", "SNAPSHOT_KEY", "DiskMeter", "SnapshotMiddleware", "WRITE_TOOLS", "restore_snapshot",
           "snapshot_of", "take_snapshot"]

#: where the newest snapshot id lives in ``AgentState.middle_context`` (so every checkpoint carries it)
SNAPSHOT_KEY = "tier2.snapshot"
#: a storage quota that stopped the run: ``{"run": <run id>, "detail": <reason>}`` (a checkpoint carries it)
QUOTA_KEY = "tier2.quota"
#: set on a tool response whose snapshot the operation ledger's effect hook already took
_SNAPSHOTTED = "tier2.snapshotted"
#: tools whose completion changes project files
WRITE_TOOLS = frozenset({"Write", "Edit", "Bash", "RequestAsset"})


@dataclass(frozen=True)
class DiskMeter:
    """Re-measures a project for its tenant's disk quota (``disk_bytes``): the measure replaces the last one."""

    quotas: QuotaStore
    tenant: str
    project_id: str
    limit: int

    async def measure(self, project: Path) -> QuotaExceeded | None:
        """Record the project's bytes; the error when the tenant's projects are now over the quota (else None)."""
        await self.quotas.set_disk(self.tenant, self.project_id, await asyncio.to_thread(tree_bytes, project))
        used = await self.quotas.disk_used(self.tenant)
        if used <= self.limit:
            return None
        return QuotaExceeded("disk_bytes", used, self.limit, f"the tenant's projects use {used} bytes on disk, over "
                             f"its quota of {self.limit} bytes (disk_bytes)")


async def take_snapshot(store: SnapshotStore, project: Path) -> str:
    """Snapshot ``project`` into ``store``: `QuotaExceeded` (nothing stored) for a file over the blob cap or a
    snapshot over the tenant's snapshot quota."""
    manifest, blobs = await asyncio.to_thread(scan, project, store.limits.blob_bytes)
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


def quota_trip(state: Any, run_id: str) -> RunLimitReached | None:
    """The quota stop recorded for ``run_id`` in an agent state's ``middle_context`` (None: none)."""
    trip = state.middle_context.get(QUOTA_KEY)
    if isinstance(trip, dict) and trip.get("run") == run_id:
        return RunLimitReached("quota", str(trip.get("detail")))
    return None


class SnapshotMiddleware(MiddlewareBase):
    def __init__(self, store: SnapshotStore, project: Path, run_id: str,
                 tools: frozenset[str] = WRITE_TOOLS, disk: DiskMeter | None = None) -> None:
        self.store, self.project, self.run_id, self.tools, self.disk = store, project, run_id, tools, disk

    def _check(self, agent: Any) -> None:
        trip = quota_trip(agent.state, self.run_id)
        if trip is not None:
            raise trip

    async def on_compress_context(self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any) -> None:
        self._check(agent)  # a compression is a model call too: none is spent on a run that has stopped
        await next_handler(**input_kwargs)

    async def on_reasoning(self, agent: Any, input_kwargs: dict[str, Any], next_handler: StreamNext,
                           ) -> AsyncGenerator[Any, None]:
        self._check(agent)  # before the next model call: a quota stopped the run at the last write step
        async for item in next_handler(**input_kwargs):
            yield item

    async def on_reply(self, agent: Any, input_kwargs: dict[str, Any], next_handler: StreamNext,
                       ) -> AsyncGenerator[Any, None]:
        async for item in next_handler(**input_kwargs):
            yield item
        self._check(agent)  # the turn's last step tripped it: no model call came to raise it

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ActingNext,
                        ) -> AsyncGenerator[ToolChunk | ToolResponse, None]:
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
        if meta.get(_SNAPSHOTTED):  # the operation ledger had it stored before committing (`record_effect`)
            return
        op = meta.get("operation") or operation_id(agent, call)
        if meta.get("replayed"):
            after = await self.store.after_op(self.run_id, op)
            if after is not None:  # the files as they were right after the operation the ledger replayed
                await restore_snapshot(self.store, self.project, after)
                agent.state.middle_context[SNAPSHOT_KEY] = after
                return
        await self._after(agent, op)

    async def record_effect(self, agent: Any, call: Any, op_id: str, final: ToolResponse) -> None:
        """The operation ledger's `tier2.middleware.operations.EffectHook`: the files right after a side effect are
        stored and recorded for ``op_id`` before the ledger commits it — so a replayed operation always finds them."""
        if call.name not in self.tools and not (final.metadata or {}).get("files_changed"):
            return
        await self._after(agent, op_id)
        final.metadata = {**(final.metadata or {}), _SNAPSHOTTED: True}

    async def _after(self, agent: Any, op: str) -> None:
        try:
            sid = await take_snapshot(self.store, self.project)
        except QuotaExceeded as exc:  # the checkpoint keeps the last whole snapshot; the run stops (module doc)
            agent.state.middle_context[QUOTA_KEY] = {"run": self.run_id, "detail": str(exc)}
            return
        agent.state.middle_context[SNAPSHOT_KEY] = sid
        await self.store.record_op(self.run_id, op, sid)
        over = await self.disk.measure(self.project) if self.disk is not None else None
        if over is not None:
            agent.state.middle_context[QUOTA_KEY] = {"run": self.run_id, "detail": str(over)}
