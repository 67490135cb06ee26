"""A limit a companion hit stops the run: the explorer runs inside the writer's ``Explore`` tool call, where raising
would leave the call without a result, so the run's companions record the limit and this layer (in the writer's
breakers slot) raises it before the writer's next model call — as the breakers do for a timed-out tool."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from agentscope.middleware import MiddlewareBase

from tier2.errors import RunLimitReached

__all__ = ["CompanionStopMiddleware"]


class CompanionStopMiddleware(MiddlewareBase):
    """``tripped``: the limit a companion hit this run (None: none)."""

    def __init__(self, tripped: Callable[[], RunLimitReached | None]) -> None:
        self.tripped = tripped

    async def on_reasoning(self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any,
                           ) -> AsyncGenerator[Any, None]:
        limit = self.tripped()
        if limit is not None:
            raise RunLimitReached(limit.limit, limit.detail)
        async for item in next_handler(**input_kwargs):
            yield item
