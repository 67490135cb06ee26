"""Thin AgentScope tools over the toolchain and the validators."""

from tier2.tools.game_tools import BuildTool, GameToolContext, RunGameTool, make_game_tools

__all__ = ["BuildTool", "GameToolContext", "RunGameTool", "make_game_tools"]
