"""Stop a run between steps once cancellation was requested.

`asyncio.Task.cancel()` interrupts an in-flight model call, but AgentScope turns a cancellation that lands inside
a tool into an ``interrupted`` tool result and carries on; this middleware makes the stop stick: before every
reasoning step and every tool call it checks the run's cancel flag and raises `asyncio.CancelledError`.

A cancellation landing inside a file read lets the read finish first (bounded by ``READ_GRACE_S``): AgentScope's
Read opens the file in a worker thread, and a read abandoned mid-open leaks the open file handle.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

from agentscope.middleware import MiddlewareBase
from agentscope.tool import ToolChunk, ToolResponse

from tier2.middleware._kwargs import ActingNext, StreamNext, acting_kwargs

__all__ = ["CancelMiddleware", "FINISH_ON_CANCEL", "READ_GRACE_S", "finish_before_cancel"]

#: tools whose call in flight completes before a cancellation takes effect (fast, side-effect free reads)
FINISH_ON_CANCEL = frozenset({"Read"})
READ_GRACE_S = 5.0


T = TypeVar("T")


async def finish_before_cancel(work: Awaitable[T], grace_s: float = READ_GRACE_S) -> T:
    """Await ``work``; a cancellation arriving meanwhile lets it finish first (at most ``grace_s``), then
    propagates. For third-party file I/O that opens files in a worker thread (AgentScope's aiofiles reads): abandoned
    mid-open, the file object would be left to the garbage collector, unclosed."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task], timeout=grace_s)
        if not task.done():
            task.cancel()
        elif not task.cancelled():
            task.exception()  # seen: a failed piece of work does not warn "exception never retrieved"
        raise


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
        if acting_kwargs(input_kwargs)["tool_call"].name not in FINISH_ON_CANCEL:
            async for chunk in next_handler(**input_kwargs):
                yield chunk
            return

        async def whole() -> list[ToolChunk | ToolResponse]:
            return [chunk async for chunk in next_handler(**input_kwargs)]

        for chunk in await finish_before_cancel(whole()):  # the read completes (and closes its file) first
            yield chunk
