"""Map a project id to its own directory, as an AgentScope workspace manager.

AgentScope's `LocalWorkspaceManager` puts every session of an agent in ``<basedir>/<agent_id>``; tier2 needs
one directory per game project (``workspace_id`` = project id). Directories are namespaced by the caller
(AgentScope's user id = the tier2 tenant): ``<root>/sessions/<tenant>/<workspace_id>``, so a session can never
name its way into another tenant's files.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from pathlib import Path

from agentscope.app.workspace_manager import WorkspaceManagerBase
from agentscope.workspace import LocalWorkspace, WorkspaceBase

from tier2.errors import NotFound
from tier2.prompts import load_prompt
from tier2.workspace.projects import project_id_for

__all__ = ["ProjectWorkspaceManager", "project_workspace", "secure_workspaces_root", "workspace_home"]


def secure_workspaces_root(root: Path) -> Path:
    """The workspaces root as a directory only its owner can enter (0700): no other local user reaches a project,
    an agent home or a set-id file inside, whatever the modes below it (the sandboxes reach their project through
    the binds tier2 makes for them, never by path). Created if missing; an existing root of ours is tightened."""
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = root.stat()
    if st.st_uid == os.geteuid() and st.st_mode & 0o077:
        root.chmod(0o700)
    return root


def workspace_home(workspaces: Path, project_id: str) -> Path:
    """The AgentScope workspace's own directory for a project: outside the project, never agent-writable."""
    project_id_for(project_id)
    return workspaces / "agent-homes" / project_id


def project_workspace(project_id: str, project: Path, home: Path,
                      skill_dirs: list[Path] | None = None) -> LocalWorkspace:
    """A LocalWorkspace for ``project`` whose own files live in ``home``, outside the project.

    AgentScope's ``LocalWorkspace.initialize()`` loads ``<workdir>/.mcp`` (MCP servers it starts, stdio commands
    included) and ``<workdir>/skills``; with the project as the workdir, a ``.mcp`` file in an uploaded project, or
    one the writer planted, would run a command on the host. So the workdir is ``home`` — a directory nothing
    but tier2 writes — and the instructions point the agent at the project. Nothing inside a project is
    configuration."""
    rendered = load_prompt("workspace").replace("{workdir}", str(project))
    return LocalWorkspace(
        workdir=str(home), workspace_id=project_id, skill_paths=[str(p) for p in skill_dirs or []],
        instructions=rendered.replace("{", "{{").replace("}", "}}"),  # LocalWorkspace .format()s it
    )


def _tenant_dir(user_id: str) -> str:
    safe = re.sub(r"[^a-z0-9_-]", "_", user_id.lower())[:40]
    return f"{safe}-{hashlib.sha256(user_id.encode()).hexdigest()[:8]}"


class ProjectWorkspaceManager(WorkspaceManagerBase):
    """``(user, workspace_id)`` → ``<root>/sessions/<tenant dir>/<workspace_id>``; cached per (user, id)."""

    def __init__(self, root: Path, skill_dirs: list[Path] | None = None) -> None:
        self.root = root
        self.skill_dirs = list(skill_dirs or [])
        self._cache: dict[tuple[str, str], WorkspaceBase] = {}
        self._lock = asyncio.Lock()

    def path_for(self, user_id: str, workspace_id: str) -> Path:
        project_id_for(workspace_id)  # validates: no traversal through ids
        return self.root / "sessions" / _tenant_dir(user_id) / workspace_id

    async def get_workspace(self, user_id: str, agent_id: str, session_id: str, workspace_id: str) -> WorkspaceBase:
        async with self._lock:
            ws = self._cache.get((user_id, workspace_id))
            if ws is None:
                path = self.path_for(user_id, workspace_id)
                if not path.is_dir():
                    raise NotFound(f"workspace {workspace_id!r} has no directory at {path}")
                home = self.root / "agent-homes" / "sessions" / _tenant_dir(user_id) / workspace_id
                ws = project_workspace(workspace_id, path, home, self.skill_dirs)
                await ws.initialize()
                self._cache[(user_id, workspace_id)] = ws
            return ws

    async def create_workspace(self, user_id: str, agent_id: str, session_id: str) -> WorkspaceBase:
        project_id = project_id_for()
        self.path_for(user_id, project_id).mkdir(parents=True, exist_ok=True)
        return await self.get_workspace(user_id, agent_id, session_id, project_id)

    async def close(self, workspace_id: str) -> None:
        for key in [k for k in self._cache if k[1] == workspace_id]:
            await self._cache.pop(key).close()

    async def close_all(self) -> None:
        for key in list(self._cache):
            await self._cache.pop(key).close()
