"""Thin AgentScope tools over the toolchain and the validators."""

from tier2.tools.files import ProjectGlob, ProjectGrep, make_file_tools, make_rw_tools
from tier2.tools.game_tools import BuildTool, GameToolContext, RunGameTool, make_game_tools
from tier2.tools.project_io import FileLimits
from tier2.tools.results import BuildRecord, CheckRecord, ToolResults

__all__ = ["BuildRecord", "BuildTool", "CheckRecord", "FileLimits", "GameToolContext", "ProjectGlob", "ProjectGrep",
           "RunGameTool", "ToolResults", "make_file_tools", "make_game_tools", "make_rw_tools"]
