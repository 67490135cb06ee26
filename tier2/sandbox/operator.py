"""``tier2 sandbox exec PROJECT -- CMD...``: an operator's command in a project's workspace, with exactly the
isolation the agent gets (same kind resolution under the ceilings, same limits, same read-only extras).

Kept light on purpose (no AgentScope import): it reads the project's ``.tier2/project.json`` itself."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

from tier2.errors import BadInput
from tier2.packs import load_pack
from tier2.sandbox.factory import make_sandbox
from tier2.sandbox.policy import resolve_workspace
from tier2.settings.loader import PolicyStore, load_security

__all__ = ["exec_in_project"]


def exec_in_project(settings: Any, project_arg: str, argv: list[str], kind: str | None = None) -> int:
    """Run ``argv`` in the project's sandbox with stdin/stdout/stderr passed through; returns its exit code.
    ``project_arg``: a project directory, or the id of one under ``<workspaces>/projects``."""
    if not argv:
        raise BadInput("sandbox exec needs a command after --")
    path = Path(project_arg)
    if not path.is_dir():
        path = settings.workspaces / "projects" / project_arg
    meta = path / ".tier2" / "project.json"
    if not meta.is_file():
        raise BadInput(f"{project_arg!r} is not a tier2 project (a directory with .tier2/project.json, or the id "
                       f"of one under {settings.workspaces}/projects)")
    info = json.loads(meta.read_text())
    security = load_security(settings.config_dir)
    policy = PolicyStore(settings.config_dir, security).snapshot()
    choice = resolve_workspace(security.sandbox, policy.sandbox, kind)
    pack_id = str(info.get("pack") or settings.pack_id).partition("@")[0]  # the project's pack, as its runs use
    if pack_id not in security.allowed_packs:
        raise BadInput(f"{project_arg!r} was made with pack {pack_id!r}, which is not in allowed_packs")
    pack = load_pack(settings.packs_dir, pack_id, settings.skills_dir if pack_id == settings.pack_id else None)
    home = settings.workspaces / "agent-homes" / str(info["project_id"])
    sandbox = make_sandbox(choice.kind, path.resolve(), home, read_only=[pack.node_modules, *pack.skill_dirs],
                           limits=choice.limits, workspaces=settings.workspaces, docker=security.sandbox.docker,
                           label="tier2-exec", isolation=security.sandbox.isolation,
                           cgroups=security.sandbox.cgroups)

    async def run() -> int:
        await sandbox.start()
        try:
            await sandbox.hand_over()
            wrapped = sandbox.wrap(argv, interactive=True)
            done = await asyncio.to_thread(subprocess.run, wrapped, cwd=sandbox.project, env=sandbox.host_env(),
                                           check=False)
            return done.returncode
        finally:
            await sandbox.reclaim()
            await sandbox.close()

    return asyncio.run(run())
