"""Thin AgentScope tools over the toolchain and the validators."""

from tier2.tools.files import ProjectGlob, ProjectGrep, make_file_tools
from tier2.tools.game_tools import BuildTool, GameToolContext, RunGameTool, make_game_tools

__all__ = ["BuildTool", "GameToolContext", "ProjectGlob", "ProjectGrep", "RunGameTool", "make_file_tools",
           "make_game_tools"]
