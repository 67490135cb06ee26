"""Workspaces: game project directories (create from a pack template, snapshot) and the AgentScope
workspace manager that maps a project id to its own directory."""

from tier2.workspace.manager import ProjectWorkspaceManager, project_workspace, secure_workspaces_root, workspace_home
from tier2.workspace.projects import ProjectInfo, new_project, project_id_for, snapshot

__all__ = ["ProjectInfo", "ProjectWorkspaceManager", "new_project", "project_id_for", "project_workspace",
           "secure_workspaces_root", "snapshot", "workspace_home"]
