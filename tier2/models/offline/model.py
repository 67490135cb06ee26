"""`OfflineChatModel`: the offline policy behind AgentScope's `ChatModelBase`, plus its credential.

It never pretends to be an LLM: its model name says what it is, it derives every step from the conversation
(the service builds a fresh model per run), streams deltas like a real provider, and reports estimated token
usage (characters / 4) so budgets and cost metering work offline.
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import json
from collections.abc import AsyncGenerator
from typing import Any, Literal

from agentscope.credential import CredentialBase
from agentscope.message import Msg, TextBlock, ToolCallBlock
from agentscope.model import ChatModelBase, ChatResponse, ChatUsage
from pydantic import BaseModel, Field

from tier2.models.offline.companions import decide_companion, is_companion
from tier2.models.offline.design import decide_design, is_design
from tier2.models.offline.history import read_conversation
from tier2.models.offline.policy import Action, decide

__all__ = ["OfflineChatModel", "OfflineCredential", "estimate_tokens"]

CHARS_PER_TOKEN = 4


def estimate_tokens(chars: int) -> int:
    return max(1, chars // CHARS_PER_TOKEN)


class OfflineChatModel(ChatModelBase):
    """Deterministic writer policy (see `tier2.models.offline.policy`)."""

    class Parameters(BaseModel):
        faults: list[str] = []
        #: the policy's own repairs of what it broke (a fallback: the case library fixes known faults first)
        repairs: bool = True
        stream: bool = True
        #: simulated provider latency per call (seconds; tests and benches of crashes mid-call)
        delay_s: float = Field(default=0.0, ge=0.0, le=30.0)

    def __init__(
        self, credential: CredentialBase, model: str, parameters: OfflineChatModel.Parameters | None = None,
        **_: Any,
    ) -> None:
        params = parameters or self.Parameters()
        super().__init__(credential=credential, model=model, parameters=params, stream=params.stream,
                         max_retries=0, retry_delay=0.0, context_size=1_000_000)

    async def _call_api(
        self, model_name: str, messages: list[Msg], tools: list[dict[str, Any]] | None = None, tool_choice: Any = None,
        **kwargs: Any,
    ) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        mode = getattr(tool_choice, "mode", None)
        delay = float(getattr(self.parameters, "delay_s", 0.0))
        if delay:
            await asyncio.sleep(delay)
        conv = read_conversation(messages)
        if mode == "generate_structured_output":
            summary = {k: f"offline policy; brief: {conv.brief[:200]}" for k in (
                "task_overview", "current_state", "important_discoveries", "next_steps", "context_to_preserve")}
            blocks: list[TextBlock | ToolCallBlock] = [
                ToolCallBlock(id="call_summary", name="generate_structured_output", input=json.dumps(summary))]
        else:  # the writer's companions (explorer, reviewer), the design studio's roles, or the writer
            if is_companion(conv):
                action = decide_companion(conv)
            else:
                action = decide_design(conv) if is_design(conv) else decide(
                    conv, {**self.parameters.model_dump(), "tools": _tool_names(tools)})
            if mode == "none" and action.kind == "tools":
                action = Action("final", text="STOP: tool calls are disabled for this turn")
            blocks = self._blocks(action, salt=f"{len(conv.steps)}:{conv.chars}")
        tools_chars = len(json.dumps(tools)) if tools else 0
        out_chars = sum(len(b.text) if isinstance(b, TextBlock) else len(b.input) + len(b.name) for b in blocks)
        usage = ChatUsage(input_tokens=estimate_tokens(conv.chars + tools_chars),
                          output_tokens=estimate_tokens(out_chars), time=0.0,
                          metadata={"estimated": True, "policy": model_name})
        if not self.stream:
            return ChatResponse(content=blocks, is_last=True, usage=usage)
        return self._stream(blocks, usage)

    @staticmethod
    def _blocks(action: Action, salt: str) -> list[TextBlock | ToolCallBlock]:
        if action.kind == "final":
            return [TextBlock(text=action.text)]
        names = ", ".join(sorted({name for name, _ in action.calls}))
        blocks: list[TextBlock | ToolCallBlock] = [TextBlock(text=f"Next: {names}.")]
        for i, (name, args) in enumerate(action.calls):
            raw = json.dumps(args, ensure_ascii=False)
            # deterministic call ids: the same conversation yields the same operation ids (safe to dedupe)
            call_id = "call_" + hashlib.sha256(f"{salt}:{i}:{name}:{raw}".encode()).hexdigest()[:16]
            blocks.append(ToolCallBlock(id=call_id, name=name, input=raw))
        return blocks

    @staticmethod
    async def _stream(blocks: list[TextBlock | ToolCallBlock], usage: ChatUsage) -> AsyncGenerator[ChatResponse, None]:
        # deltas reuse the block ids; the final chunk carries the complete content and the usage
        for b in blocks:
            if isinstance(b, TextBlock):
                yield ChatResponse(content=[TextBlock(id=b.id, text=b.text)], is_last=False)
            else:
                step = max(1, len(b.input) // 3)
                for i in range(0, len(b.input), step):
                    yield ChatResponse(content=[ToolCallBlock(id=b.id, name=b.name, input=b.input[i:i + step])],
                                       is_last=False)
        yield ChatResponse(content=blocks, is_last=True, usage=usage)


def _tool_names(tools: list[dict[str, Any]] | None) -> list[str]:
    """The names of the tools offered to the model (the writer asks the explorer only when it has ``Explore``)."""
    names: list[str] = []
    for t in tools or []:
        fn = t.get("function") if isinstance(t, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else (t.get("name") if isinstance(t, dict) else None)
        if isinstance(name, str):
            names.append(name)
    return names


class OfflineCredential(CredentialBase):
    """Routes AgentScope's service ``get_model`` to the offline policy (no secret involved)."""

    type: Literal["tier2_offline"] = "tier2_offline"

    @classmethod
    def get_chat_model_class(cls) -> builtins.type[ChatModelBase]:  # ``type`` is the field above
        return OfflineChatModel
