"""`FallbackChain`: several routes' models tried in order, as one `ChatModelBase`.

AgentScope's own retry loop (``ModelConfig.fallback_model``) covers a route and *one* fallback; a longer chain
(A → B → C) hands AgentScope a `FallbackChain` of B, C as that one fallback. The response says which model
answered (``metadata["tier2.model"]``, and its position in the chain as ``metadata["tier2.fallback"]``), so the
trajectory and the cost metering name and price the model that really answered.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from agentscope.model import ChatModelBase, ChatResponse

from tier2.telemetry import ANSWERED_BY, FALLBACK_INDEX

__all__ = ["FallbackChain"]

log = logging.getLogger(__name__)


def _tag(response: ChatResponse, model: str, index: int) -> ChatResponse:
    response.metadata = {**(response.metadata or {}), ANSWERED_BY: model, FALLBACK_INDEX: index}
    return response


async def _tag_stream(stream: AsyncGenerator[ChatResponse, None], model: str, index: int,
                      ) -> AsyncGenerator[ChatResponse, None]:
    async for chunk in stream:
        yield _tag(chunk, model, index) if chunk.is_last else chunk


class FallbackChain(ChatModelBase):
    """Try each model in turn (each with its own retries); the first answer wins, the last error is raised.
    Errors in the middle of a stream are not retried elsewhere (as in AgentScope's own fallback)."""

    def __init__(self, models: Sequence[ChatModelBase]) -> None:
        if not models:
            raise ValueError("FallbackChain needs at least one model")
        first = models[0]
        super().__init__(credential=first.credential, model=first.model, parameters=first.parameters,
                         stream=first.stream, max_retries=0, retry_delay=0.0,
                         context_size=min(m.context_size for m in models))
        self.models = list(models)

    async def _call_api(self, model_name: str, messages: list[Any], tools: list[dict[str, Any]] | None = None,
                        tool_choice: Any = None, **kwargs: Any) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        last: Exception | None = None
        for index, model in enumerate(self.models):
            try:
                result = await model(messages=messages, tools=tools, tool_choice=tool_choice, **kwargs)
            except Exception as exc:  # noqa: BLE001 - any failure moves on to the next route, as AgentScope does
                last = exc
                log.warning("model %s failed (%s: %s); trying the next fallback", model.model, type(exc).__name__,
                            str(exc)[:200])
                continue
            if isinstance(result, ChatResponse):
                return _tag(result, model.model, index)
            return _tag_stream(result, model.model, index)
        assert last is not None
        raise last
