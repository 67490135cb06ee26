"""Stop a run between steps once cancellation was requested.

`asyncio.Task.cancel()` interrupts an in-flight model call, but AgentScope turns a cancellation that lands inside
a tool into an ``interrupted`` tool result and carries on; this middleware makes the stop stick: before every
reasoning step and every tool call it checks the run's cancel flag and raises `asyncio.CancelledError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from typing import Any

from agentscope.middleware import MiddlewareBase
from agentscope.tool import ToolChunk, ToolResponse

from tier2.middleware._kwargs import ActingNext, StreamNext

__all__ = ["CancelMiddleware"]


class CancelMiddleware(MiddlewareBase):
    """Stateless: ``cancelled`` reads the run's flag (owned by the run, not by this instance)."""

    def __init__(self, cancelled: Callable[[], bool]) -> None:
        self.cancelled = cancelled

    def _check(self) -> None:
        if self.cancelled():
            raise asyncio.CancelledError("run cancelled by request")

    async def on_reasoning(self, agent: Any, input_kwargs: dict[str, Any], next_handler: StreamNext,
                           ) -> AsyncGenerator[Any, None]:
        self._check()
        async for item in next_handler(**input_kwargs):
            yield item

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ActingNext,
                        ) -> AsyncGenerator[ToolChunk | ToolResponse, None]:
        self._check()
        async for chunk in next_handler(**input_kwargs):
            yield chunk
