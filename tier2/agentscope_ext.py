"""tier2's hooks into AgentScope's own service (`create_app` extension points).

* `Tier2Agent` (``custom_agent_cls``): drops the framework's 10 s `ToolOffloadMiddleware`, which would turn a
  Build or RunGame call longer than 10 s into a background placeholder plus an extra wake-up run.
* `game_tools_factory` (``extra_agent_tools``): gives AgentScope-native sessions whose ``workspace_id`` names a
  tier2 project the Build and RunGame tools bound to that project.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentscope.agent import Agent
from agentscope.app.middleware import ToolOffloadMiddleware
from agentscope.app.storage import StorageBase
from agentscope.tool import ToolBase

from tier2.runs.runtime import Runtime
from tier2.tools import GameToolContext, make_game_tools
from tier2.validators import ValidationRunner
from tier2.workspace import ProjectWorkspaceManager

__all__ = ["Tier2Agent", "game_tools_factory"]


class Tier2Agent(Agent):
    def __init__(self, *args: Any, middlewares: list[Any] | None = None, **kwargs: Any) -> None:
        kept = [m for m in (middlewares or []) if not isinstance(m, ToolOffloadMiddleware)]
        super().__init__(*args, middlewares=kept, **kwargs)


def game_tools_factory(
    storage: StorageBase, wsm: ProjectWorkspaceManager, runtime: Callable[[], Runtime],
) -> Callable[[str, str, str], Awaitable[list[ToolBase]]]:
    async def factory(user_id: str, agent_id: str, session_id: str) -> list[ToolBase]:
        session = await storage.get_session(user_id, agent_id, session_id)
        if session is None:
            return []
        project = wsm.path_for(user_id, session.config.workspace_id)
        rt = runtime()
        if not (project / rt.pack.manifest.build.entry).exists():
            return []
        policy = rt.policies.snapshot()
        ctx = GameToolContext(project=project, pack=rt.pack, runner=ValidationRunner(rt.pool, rt.pack, policy),
                              reports_dir=project / ".tier2" / "reports" / session_id,
                              build_timeout_s=policy.timeouts.build_s)
        return make_game_tools(ctx)

    return factory
