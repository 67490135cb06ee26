"""Checkpoint the agent after every tool result, after every context compression and at reply end (AgentScope saves
state only at run end).

The run supplies ``meta`` (which round and stage it is in) and its fence; the store writes only new content
blocks plus a small checkpoint, in one fenced script. `restorable_state` turns a checkpoint back into an
AgentState JSON a new attempt can start from.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from agentscope.middleware import MiddlewareBase
from agentscope.tool import ToolChunk, ToolResponse

from tier2.middleware._kwargs import ActingNext, StreamNext
from tier2.store.checkpoints import CheckpointMeta, CheckpointStore, ResumeStage, RunPosition
from tier2.store.run_store import Fence

__all__ = ["CheckpointMiddleware", "restorable_state"]


class CheckpointMiddleware(MiddlewareBase):
    """The state is snapshotted synchronously at the step; the write after a tool result goes out in the
    background, in order (each write waits for the previous one), so the next model call does not wait for
    Redis' fsync. The end-of-turn checkpoint waits for every write. A crash that loses the newest in-flight
    checkpoint resumes one step earlier, which is safe: side effects are looked up by operation id. A refused
    (stale) write surfaces at the next checkpoint."""

    def __init__(self, store: CheckpointStore, fence: Fence | None, meta: Callable[[], RunPosition]) -> None:
        self.store, self.fence, self.meta = store, fence, meta
        self._last: asyncio.Future[None] | None = None  # the newest write in flight (a handle, not run state)

    async def _save(self, agent: Any, stage: ResumeStage, wait: bool) -> None:
        state = agent.state.model_dump(mode="json")
        meta: CheckpointMeta = {**self.meta(), "stage": stage, "agent": agent.name}
        previous = self._last
        if previous is not None and previous.done():
            previous.result()  # raises StaleLease (or a Redis error) of an earlier write
            previous = None

        async def write() -> None:
            if previous is not None:
                await previous
            await self.store.save(state, meta, self.fence)

        self._last = asyncio.ensure_future(write())
        self._last.add_done_callback(_retrieve)
        if wait:
            await self._last

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ActingNext,
                        ) -> AsyncGenerator[ToolChunk | ToolResponse, None]:
        async for chunk in next_handler(**input_kwargs):
            yield chunk
        await self._save(agent, "turn", wait=False)  # the tool result is in the context by now

    async def on_compress_context(self, agent: Any, input_kwargs: dict[str, Any],
                                  next_handler: Callable[..., Awaitable[None]]) -> None:
        """A compression (the context layer's, inside this one) is a checkpoint of its own: the summary, the record
        naming the last message it covers, and only the later messages — written before the next model call."""
        before = agent.state.summary
        await next_handler(**input_kwargs)
        if agent.state.summary != before:
            await self._save(agent, "turn", wait=True)

    async def on_reply(self, agent: Any, input_kwargs: dict[str, Any], next_handler: StreamNext,
                       ) -> AsyncGenerator[Any, None]:
        async for item in next_handler(**input_kwargs):
            yield item
        await self._save(agent, "turn_done", wait=True)  # the final reasoning step has no post-logic


def _retrieve(future: asyncio.Future[None]) -> None:
    """Mark a background write's failure as seen (it is re-raised at the next checkpoint)."""
    if not future.cancelled():
        future.exception()


def restorable_state(state: dict[str, Any]) -> str:
    """AgentState JSON from a checkpoint, minus tool calls that never got a result (a batch cut by the crash):
    model APIs reject a tool call without its result, and the model re-issues what it still needs."""
    context = []
    for msg in state.get("context", []):
        content = msg.get("content")
        if isinstance(content, list):
            done = {b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"}
            content = [b for b in content
                       if not (isinstance(b, dict) and b.get("type") == "tool_call" and b.get("id") not in done)]
            msg = {**msg, "content": content}
        context.append(msg)
    return json.dumps({**state, "context": context})
