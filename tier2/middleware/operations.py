"""Tool calls with external side effects, keyed by operation id: executed once, looked up on a resumed attempt.

The operation id is derived from what the call does, not from the model's call id (a real model names its calls
differently on every retry): tool name + canonical arguments + how many identical calls came before in the
conversation. Read-only and re-runnable tools (Read, Glob, Build, RunGame...) pass through and simply run again —
but only while the attempt's fence is current (a worker that lost its lease starts no tool at all).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Any

from agentscope.message import TextBlock, ToolResultState
from agentscope.middleware import MiddlewareBase
from agentscope.tool import ToolChunk, ToolResponse

from tier2.hostio import read_file
from tier2.middleware._kwargs import ActingNext, FinalToolState, acting_kwargs
from tier2.store.operations import OperationResult, OperationStore
from tier2.store.run_store import Fence

__all__ = ["EffectHook", "OperationsMiddleware", "operation_id"]

#: called after a side effect and before the ledger commits it: ``(agent, tool call, operation id, final response)``
#: (the workspace's snapshot layer stores the files right after the effect here, so a committed operation always
#: has its "after" snapshot: a worker dying between the two cannot leave a committed effect whose files are lost)
EffectHook = Callable[[Any, Any, str, ToolResponse], Awaitable[None]]


def _canonical(raw: Any) -> str:
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return str(raw)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def operation_id(agent: Any, call: Any) -> str:
    args = _canonical(call.input)
    earlier = 0
    blocks = (b for msg in agent.state.context for b in msg.get_content_blocks("tool_call"))
    for block in blocks:
        if block.id == call.id:
            break
        if block.name == call.name and _canonical(block.input) == args:
            earlier += 1
    digest = hashlib.sha256(f"{call.name}\n{args}".encode()).hexdigest()[:20]
    return f"{call.name}:{digest}:{earlier}"


def final_state(value: str) -> FinalToolState:
    """A stored final tool state (``success``, ``error``...) as `ToolResponse.state` takes it."""
    state = ToolResultState(value)
    if state is ToolResultState.RUNNING:
        raise ValueError("a final tool response cannot be running")
    return state


def _text(response: ToolResponse) -> str:
    return "".join(b.text for b in response.content if isinstance(b, TextBlock))


class OperationsMiddleware(MiddlewareBase):
    """``tools``: names whose calls are side effects (hot policy); everything else passes through."""

    def __init__(self, store: OperationStore, fence: Fence | None, tools: frozenset[str],
                 effects: Sequence[EffectHook] = ()) -> None:
        self.store, self.fence, self.tools, self.effects = store, fence, tools, tuple(effects)

    async def _effect(self, agent: Any, call: Any, op_id: str, final: ToolResponse) -> None:
        for hook in self.effects:
            await hook(agent, call, op_id, final)

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ActingNext,
                        ) -> AsyncGenerator[ToolChunk | ToolResponse, None]:
        call = acting_kwargs(input_kwargs)["tool_call"]
        if call.name not in self.tools:
            await self.store.check(self.fence)  # re-runnable tools write too (dist/, reports): only when current
            async for chunk in next_handler(**input_kwargs):
                yield chunk
            return
        op_id = operation_id(agent, call)
        done = await self.store.lookup(op_id)
        if done is not None:  # committed by an earlier attempt: never repeat the effect
            yield ToolResponse(content=[TextBlock(text=done["text"])], state=final_state(done["state"]), id=call.id,
                               metadata={"operation": op_id, "replayed": True})
            return
        before = await self.store.begin(op_id, self.fence)
        if before and _already_written(call):
            # the earlier attempt applied it but died before recording it: the bytes are there, record only
            result = OperationResult(text="Wrote the file (applied by an earlier attempt).", state="success")
            response = ToolResponse(content=[TextBlock(text=result["text"])], state=ToolResultState.SUCCESS,
                                    id=call.id, metadata={"operation": op_id, "replayed": True})
            await self._effect(agent, call, op_id, response)
            await self.store.commit(op_id, result, self.fence)
            yield response
            return
        final: ToolResponse | None = None
        async for chunk in next_handler(**input_kwargs):
            if isinstance(chunk, ToolResponse):
                final = chunk
            yield chunk
        if final is not None:
            await self._effect(agent, call, op_id, final)  # e.g. the files right after it, stored first
            await self.store.commit(op_id, OperationResult(text=_text(final), state=final.state.value), self.fence)


def _already_written(call: Any) -> bool:
    """A Write whose target already holds exactly its content (idempotence check by the effect itself)."""
    if call.name != "Write":
        return False
    try:
        args = json.loads(call.input) if isinstance(call.input, str) else dict(call.input)
        want = str(args["content"]).encode()
        # a regular file only, read without blocking or following a final link (tier2.hostio)
        return read_file(args["file_path"], max_bytes=len(want) + 1) == want
    except (OSError, KeyError, TypeError, ValueError):
        return False
