"""A run's workspace kind: its sandbox, the writer's command sessions, the browser that runs inside it, and the
project snapshots that let a new attempt get back exactly the files of the checkpoint it resumes from."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentscope.agent import Agent

from tier2.browser import BrowserPool
from tier2.errors import QuotaExceeded, RunLimitReached
from tier2.hostio import ProjectDir
from tier2.middleware.snapshots import (
    SNAPSHOT_KEY,
    DiskMeter,
    SnapshotMiddleware,
    restore_snapshot,
    snapshot_of,
    take_snapshot,
)
from tier2.packs import Pack
from tier2.runs.loop.layers import Additions
from tier2.runs.process.runtime import Runtime
from tier2.sandbox import CommandSessions, Sandbox, SandboxOwner, WorkspaceChoice, make_sandbox, resolve_workspace
from tier2.settings.loader import Policy, SecurityConfig
from tier2.settings.tenants import LOCAL_TENANT
from tier2.store.commands import CommandRecords
from tier2.store.quotas import QuotaStore
from tier2.store.snapshots import SnapshotLimits, SnapshotStore
from tier2.toolchain.esbuild import Launcher
from tier2.workspace import workspace_home

__all__ = ["RunWorkspace", "choose_workspace", "open_run_workspace", "sandbox_for_project"]

log = logging.getLogger(__name__)


def choose_workspace(security: SecurityConfig, policy: Policy, options: dict[str, Any]) -> WorkspaceChoice:
    """The run's kind and limits: its ``workspace`` option within the hot policy within the security ceiling."""
    return resolve_workspace(security.sandbox, policy.sandbox, options.get("workspace"))


def sandbox_for_project(rt: Runtime, project: Path, project_id: str, choice: WorkspaceChoice, pack: Pack,
                        label: str = "tier2", owner: SandboxOwner | None = None) -> Sandbox:
    """The sandbox of ``project`` for ``choice`` (what the writer's commands, builds and browser get; ``pack``'s
    packages and skills read-only); ``owner``: the run attempt it works for (a worker's fenced attempt: earlier
    attempts' executors are stopped first)."""
    home = workspace_home(rt.settings.workspaces, project_id)
    return make_sandbox(choice.kind, project, home, read_only=[pack.node_modules, *pack.skill_dirs],
                        limits=choice.limits, workspaces=rt.settings.workspaces, docker=rt.security.sandbox.docker,
                        label=label, isolation=rt.security.sandbox.isolation, cgroups=rt.security.sandbox.cgroups,
                        owner=owner)


@dataclass
class RunWorkspace:
    choice: WorkspaceChoice
    sandbox: Sandbox
    project: Path
    run_id: str
    snapshots: SnapshotStore
    commands: CommandSessions | None = None
    pool: BrowserPool | None = None  # the run's own browser inside the sandbox (None: the process's shared one)
    restored: dict[str, Any] = field(default_factory=dict)
    disk: DiskMeter | None = None  # the tenant's disk quota, re-measured after every snapshot

    @property
    def launcher(self) -> Launcher | None:
        return self.sandbox.launcher if self.choice.kind != "local" else None

    def middleware(self) -> SnapshotMiddleware:
        return SnapshotMiddleware(self.snapshots, self.project, self.run_id, disk=self.disk)

    def additions(self) -> Additions:
        """The workspace's layers for the writer: its snapshot layer outside the checkpoint (each step's checkpoint
        names its snapshot) and as the operation ledger's effect hook (a side effect's files are stored before the
        ledger commits it)."""
        snapshots = self.middleware()
        return Additions(checkpoint=(snapshots,), effects=(snapshots.record_effect,))

    async def restore(self, state_json: str | None) -> str | None:
        """A resumed attempt: put the project back to the snapshot of the checkpoint it resumes from (a lost
        sandbox or project loses nothing the conversation knows about)."""
        sid = snapshot_of(state_json)
        if sid is None:
            return None
        changed = await restore_snapshot(self.snapshots, self.project, sid)
        self.restored = {"snapshot": sid, "changed": changed}
        log.info("run %s: project restored to snapshot %s (%d entries changed)", self.run_id, sid, changed)
        return sid

    async def baseline(self, agent: Agent) -> str:
        """A fresh attempt: snapshot the starting files, so even the first checkpoint names its files. A storage
        quota the files do not fit stops the run (`RunLimitReached` ``quota``)."""
        try:
            sid = await take_snapshot(self.snapshots, self.project)
            over = await self.disk.measure(self.project) if self.disk is not None else None
        except QuotaExceeded as exc:
            raise RunLimitReached("quota", str(exc)) from None
        if over is not None:
            raise RunLimitReached("quota", str(over))
        agent.state.middle_context[SNAPSHOT_KEY] = sid
        return sid

    async def close(self) -> None:
        if self.commands is not None:
            with contextlib.suppress(Exception):
                await self.commands.close()
        if self.pool is not None:
            with contextlib.suppress(Exception):
                await self.pool.close()
        with contextlib.suppress(Exception):
            await self.sandbox.close()


async def open_run_workspace(rt: Runtime, run_id: str, policy: Policy, options: dict[str, Any], project: Path,
                             project_id: str, pack: Pack, tenant: str | None = None,
                             attempt: SandboxOwner | None = None) -> RunWorkspace:
    choice = choose_workspace(rt.security, policy, options)
    sandbox = sandbox_for_project(rt, project, project_id, choice, pack, label=f"tier2-{run_id[:18]}", owner=attempt)
    await sandbox.start()
    commands = pool = None
    if choice.kind != "local":  # the writer's Bash and the browser live inside the sandbox
        home = workspace_home(rt.settings.workspaces, project_id)
        journal = CommandRecords(rt.store.r, rt.store.keys, run_id, attempt.attempt if attempt else 1)
        commands = CommandSessions(sandbox, home / "commands" / run_id, rt.security.sandbox.commands, journal)
        pool = BrowserPool(sandbox.chromium(rt.pool.executable), list(rt.security.browser.args))
    owner = tenant or LOCAL_TENANT
    limits = rt.security.tenants.limits(owner)
    snapshots = SnapshotStore(rt.store.r, rt.store.keys, owner, SnapshotLimits.of(limits), run_id=run_id)
    disk = DiskMeter(QuotaStore(rt.store.r, rt.store.keys), owner, project_id, limits.disk_bytes)
    return RunWorkspace(choice, sandbox, project.resolve(), run_id, snapshots, commands, pool, disk=disk)



def ensure_project_meta(project: Path, project_id: str | None, pack_ref: str) -> None:
    """A resumed attempt on a project whose directory was lost (an uploaded project, kept at its own path): put
    back its ``.tier2/project.json`` so the run can reopen it; the files come back from the checkpoint's snapshot."""
    import json
    import time

    if not project_id:
        return
    project.mkdir(parents=True, exist_ok=True)  # the project directory itself is tier2's (the sandbox's is lost)
    pdir = ProjectDir(project)  # inside it, never through a link the sandbox planted (tier2.hostio)
    if pdir.is_file(".tier2/project.json"):
        return
    pdir.write_text(".tier2/project.json", json.dumps({"project_id": project_id, "path": str(project), "pack": pack_ref,
                                "created_at": time.time()}, indent=2))
