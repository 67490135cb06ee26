"""A layer that reworks a tool's final response before the model reads it (the case library, engine-doc hints).

Streaming chunks pass through as they come; the final `ToolResponse` of a call the layer `applies` to goes
through `after`, whose answer replaces it. Calls it does not apply to pass through untouched.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from agentscope.message import TextBlock
from agentscope.middleware import MiddlewareBase
from agentscope.tool import ToolChunk, ToolResponse

from tier2.middleware._kwargs import ActingNext, acting_kwargs

__all__ = ["AfterToolMiddleware", "response_text"]


def response_text(response: ToolResponse) -> str:
    """The text a tool response carries (its text blocks, one per line)."""
    content: Any = response.content
    if isinstance(content, str):
        return content
    return "\n".join(b.text for b in content if isinstance(b, TextBlock))


class AfterToolMiddleware(MiddlewareBase):
    def applies(self, call: Any) -> bool:
        """Whether this call's final response goes through `after`."""
        raise NotImplementedError

    async def after(self, call: Any, final: ToolResponse) -> ToolResponse:
        """The response the model reads instead of ``final``."""
        raise NotImplementedError

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ActingNext,
                        ) -> AsyncGenerator[ToolChunk | ToolResponse, None]:
        call = acting_kwargs(input_kwargs)["tool_call"]
        if not self.applies(call):
            async for chunk in next_handler(**input_kwargs):
                yield chunk
            return
        final: ToolResponse | None = None
        async for chunk in next_handler(**input_kwargs):
            if isinstance(chunk, ToolResponse):
                final = chunk
                continue
            yield chunk
        if final is not None:
            yield await self.after(call, final)
