"""Map a project id to its own directory, as an AgentScope workspace manager.

AgentScope's `LocalWorkspaceManager` puts every session of an agent in ``<basedir>/<agent_id>``; tier2 needs
one directory per game project (``workspace_id`` = project id), including projects that live elsewhere
(``tier2 generate --out DIR``, loaded projects), which are registered explicitly.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentscope.app.workspace_manager import WorkspaceManagerBase
from agentscope.workspace import LocalWorkspace, WorkspaceBase

from tier2.errors import NotFound
from tier2.prompts import load_prompt
from tier2.workspace.projects import project_id_for

__all__ = ["ProjectWorkspaceManager", "project_workspace"]


def project_workspace(project_id: str, path: Path, skill_dirs: list[Path] | None = None) -> LocalWorkspace:
    """A LocalWorkspace rooted at the project directory, with tier2's workspace instructions."""
    return LocalWorkspace(
        workdir=str(path), workspace_id=project_id, skill_paths=[str(p) for p in skill_dirs or []],
        instructions=load_prompt("workspace"),
    )


class ProjectWorkspaceManager(WorkspaceManagerBase):
    """``workspace_id`` → ``<root>/projects/<workspace_id>`` unless registered at another path."""

    def __init__(self, root: Path, skill_dirs: list[Path] | None = None) -> None:
        self.root = root
        self.skill_dirs = list(skill_dirs or [])
        self._paths: dict[str, Path] = {}
        self._cache: dict[str, WorkspaceBase] = {}
        self._lock = asyncio.Lock()

    def register(self, project_id: str, path: Path) -> None:
        self._paths[project_id_for(project_id)] = path.resolve()

    def path_for(self, workspace_id: str) -> Path:
        project_id_for(workspace_id)  # validates: no traversal through ids
        return self._paths.get(workspace_id, self.root / "projects" / workspace_id)

    async def get_workspace(self, user_id: str, agent_id: str, session_id: str, workspace_id: str) -> WorkspaceBase:
        async with self._lock:
            ws = self._cache.get(workspace_id)
            if ws is None:
                path = self.path_for(workspace_id)
                if not path.is_dir():
                    raise NotFound(f"project {workspace_id!r} has no directory at {path}")
                ws = project_workspace(workspace_id, path, self.skill_dirs)
                await ws.initialize()
                self._cache[workspace_id] = ws
            return ws

    async def create_workspace(self, user_id: str, agent_id: str, session_id: str) -> WorkspaceBase:
        project_id = project_id_for()
        self.path_for(project_id).mkdir(parents=True, exist_ok=True)
        return await self.get_workspace(user_id, agent_id, session_id, project_id)

    async def close(self, workspace_id: str) -> None:
        ws = self._cache.pop(workspace_id, None)
        if ws is not None:
            await ws.close()

    async def close_all(self) -> None:
        for workspace_id in list(self._cache):
            await self.close(workspace_id)
