"""`ScriptedChatModel`: an in-process model that answers from a script — for tests and benchmarks.

The script maps the conversation to the next reply's blocks (derive the step from the messages, e.g. with
`tool_results`, never from call counts: a resumed agent replays nothing). Streams like a provider (deltas with
stable ids, then one complete final chunk with usage) and reports usage as characters / 4. A script that raises
makes the call fail, which is how a provider outage is scripted.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import AsyncGenerator, Callable
from typing import Any

from agentscope.credential import CredentialBase
from agentscope.message import Msg, TextBlock, ToolCallBlock
from agentscope.model import ChatModelBase, ChatResponse, ChatUsage
from pydantic import BaseModel

__all__ = ["ScriptedChatModel", "ScriptCredential", "tool_results", "Blocks"]

Blocks = list[TextBlock | ToolCallBlock]
Script = Callable[[list[Msg]], Blocks]


class ScriptCredential(CredentialBase):
    type: str = "tier2_scripted"

    @classmethod
    def get_chat_model_class(cls) -> builtins.type[ChatModelBase]:  # ``type`` is the field above
        return ScriptedChatModel


def tool_results(messages: list[Msg]) -> int:
    """How many tool results the conversation holds (= completed acting steps)."""
    return sum(len(m.get_content_blocks("tool_result")) for m in messages)


class ScriptedChatModel(ChatModelBase):
    class Parameters(BaseModel):
        stream: bool = True

    def __init__(self, script: Script, model: str = "scripted-model", stream: bool = True, **_: Any) -> None:
        super().__init__(credential=ScriptCredential(name=model), model=model,
                         parameters=self.Parameters(stream=stream), stream=stream, max_retries=0, retry_delay=0.0,
                         context_size=1_000_000)
        self.script = script

    async def _call_api(self, model_name: str, messages: list[Msg], tools: list[dict] | None = None,
                        tool_choice: Any = None, **kwargs: Any) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        if getattr(tool_choice, "mode", None) == "generate_structured_output":  # context compression
            summary = {k: "scripted" for k in ("task_overview", "current_state", "important_discoveries",
                                               "next_steps", "context_to_preserve")}
            blocks: Blocks = [ToolCallBlock(id="summary", name="generate_structured_output", input=json.dumps(summary))]
        else:
            blocks = self.script(messages)
        chars_in = sum(len(m.get_text_content() or "") for m in messages)
        chars_out = sum(len(b.text) if isinstance(b, TextBlock) else len(b.input) for b in blocks)
        usage = ChatUsage(input_tokens=max(1, chars_in // 4), output_tokens=max(1, chars_out // 4), time=0.0)
        if not self.stream:
            return ChatResponse(content=blocks, is_last=True, usage=usage)
        return self._stream(blocks, usage)

    @staticmethod
    async def _stream(blocks: Blocks, usage: ChatUsage) -> AsyncGenerator[ChatResponse, None]:
        for b in blocks:
            if isinstance(b, TextBlock):
                yield ChatResponse(content=[TextBlock(id=b.id, text=b.text)], is_last=False)
            else:
                yield ChatResponse(content=[ToolCallBlock(id=b.id, name=b.name, input=b.input)], is_last=False)
        yield ChatResponse(content=blocks, is_last=True, usage=usage)
