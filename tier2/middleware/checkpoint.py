"""Checkpoint the agent after every tool result and at reply end (AgentScope saves state only at run end).

The run supplies ``meta`` (which round and stage it is in) and its fence; the store writes only new content
blocks plus a small checkpoint, in one fenced script. `restorable_state` turns a checkpoint back into an
AgentState JSON a new attempt can start from.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from typing import Any

from agentscope.middleware import MiddlewareBase

from tier2.store.checkpoints import CheckpointStore
from tier2.store.run_store import Fence

__all__ = ["CheckpointMiddleware", "restorable_state"]


class CheckpointMiddleware(MiddlewareBase):
    def __init__(self, store: CheckpointStore, fence: Fence | None, meta: Callable[[], dict[str, Any]]) -> None:
        self.store, self.fence, self.meta = store, fence, meta

    async def _save(self, agent: Any, stage: str) -> None:
        await self.store.save(agent.state.model_dump(mode="json"), {**self.meta(), "stage": stage,
                                                                    "agent": agent.name}, self.fence)

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any) -> AsyncGenerator:
        async for chunk in next_handler(**input_kwargs):
            yield chunk
        await self._save(agent, "turn")  # the tool result is in the context by now

    async def on_reply(self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any) -> AsyncGenerator:
        async for item in next_handler(**input_kwargs):
            yield item
        await self._save(agent, "turn_done")  # the final reasoning step has no post-logic; the reply has


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
