"""Read-only for real: a designer's tool call runs only when tier2 says it reads.

AgentScope's EXPLORE mode trusts a classifier (``echo $(touch x)`` passes as read-only, `Read` of any path is
allowed). A designer instead gets three layers, each enough on its own:

1. its toolkit holds only Read, Glob and Grep (`tier2.assembly.team`), plus AgentScope's ``Skill`` viewer, which
   shows one of the role's registered skills by name and reads nothing else;
2. its permission rules deny Write, Edit, Bash and every other tool in DONT_ASK mode, and allow Read only inside
   the project (the path guard then checks the real path);
3. this middleware, innermost in the designer's onion: any tool not in `READ_ONLY_TOOLS` (or ``Skill``) is
   refused before it runs, whatever the toolkit or the permission engine would have done. The path guard
   (outside it) has already parsed the arguments strictly and confined every path to the project.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Final

from agentscope.message import TextBlock, ToolResultState
from agentscope.middleware import MiddlewareBase
from agentscope.tool import ToolChunk, ToolResponse

from tier2.middleware._kwargs import ActingNext

__all__ = ["READ_ONLY_TOOLS", "SKILL_TOOL", "ReadOnlyGuardMiddleware"]

READ_ONLY_TOOLS: Final = frozenset({"Read", "Glob", "Grep"})
#: AgentScope's skill viewer (its toolkit adds it when the agent has skills): every role may read its skills
SKILL_TOOL: Final = "Skill"


class ReadOnlyGuardMiddleware(MiddlewareBase):
    """Stateless: refuses every tool call outside ``allowed`` (default `READ_ONLY_TOOLS`) and `SKILL_TOOL`."""

    def __init__(self, allowed: frozenset[str] = READ_ONLY_TOOLS, who: str = "designers") -> None:
        self.allowed, self.who = allowed | {SKILL_TOOL}, who

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ActingNext,
                        ) -> AsyncGenerator[ToolChunk | ToolResponse, None]:
        call = input_kwargs["tool_call"]
        if call.name not in self.allowed:
            yield ToolResponse(content=[TextBlock(text=(
                f"Refused: {call.name} — {self.who} are read-only (allowed: {', '.join(sorted(self.allowed))}); "
                "put what you want written into your answer, tier2 writes it"))],
                state=ToolResultState.ERROR, id=call.id)
            return
        async for chunk in next_handler(**input_kwargs):
            yield chunk
