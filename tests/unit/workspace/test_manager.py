"""AgentScope sessions get per-tenant workspace directories: no tenant can name its way into another's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tier2.errors import BadInput, NotFound
from tier2.workspace import ProjectWorkspaceManager


async def test_workspaces_are_namespaced_by_tenant(tmp_path: Path) -> None:
    wsm = ProjectWorkspaceManager(tmp_path)
    a = await wsm.create_workspace("tenant-a", "agent", "s1")
    project = wsm.path_for("tenant-a", a.workspace_id)
    assert project.is_dir() and project.parent.name == Path(a.workdir).parent.name  # same tenant namespace
    assert not Path(a.workdir).is_relative_to(project)  # the workspace's own files (.mcp...) live outside it
    with pytest.raises(NotFound):  # the same id seen by another tenant is a different (missing) directory
        await wsm.get_workspace("tenant-b", "agent", "s2", a.workspace_id)
    assert wsm.path_for("a/../b", "p-123") != wsm.path_for("b", "p-123")
    with pytest.raises(BadInput):
        wsm.path_for("tenant-a", "../../etc")
    await wsm.close_all()
