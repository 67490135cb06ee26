"""Refuse file-tool calls that resolve outside the project directory.

AgentScope matches Write/Edit/Read allow rules with ``fnmatch``, where ``*`` also matches ``/`` and ``..``, so
``<project>/../../etc/x`` would match ``<project>/*``. This guard resolves the real path (symlinks included)
before the tool runs and turns an escape into an error result the agent can read.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator
from typing import Any

from agentscope.message import TextBlock
from agentscope.middleware import MiddlewareBase
from agentscope.tool import ToolResponse

__all__ = ["PathGuardMiddleware", "PATH_ARGS", "inside"]

#: tool name -> argument that holds a path
PATH_ARGS: dict[str, str] = {"Read": "file_path", "Write": "file_path", "Edit": "file_path",
                             "Glob": "path", "Grep": "path"}


def inside(root: str, candidate: str) -> bool:
    root_real = os.path.realpath(root)
    target = candidate if os.path.isabs(candidate) else os.path.join(root_real, candidate)
    real = os.path.realpath(target)
    return real == root_real or real.startswith(root_real + os.sep)


class PathGuardMiddleware(MiddlewareBase):
    """Stateless: the project root is fixed at construction for the whole run."""

    def __init__(self, project_root: str) -> None:
        self.root = project_root

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any) -> AsyncGenerator:
        call = input_kwargs["tool_call"]
        arg = PATH_ARGS.get(call.name)
        if arg is not None:
            try:
                args = json.loads(call.input or "{}")
            except json.JSONDecodeError:
                args = {}
            value = args.get(arg)
            if isinstance(value, str) and value and not inside(self.root, value):
                yield ToolResponse(
                    content=[TextBlock(text=f"Refused: {value} is outside the project directory {self.root}.")],
                    state="error", id=call.id,
                )
                return
        async for chunk in next_handler(**input_kwargs):
            yield chunk
