"""Typed views of the ``input_kwargs`` AgentScope 2.0.3 hands each middleware hook (typed there as a bare ``dict``).

Each hook casts its ``input_kwargs`` once, at entry (``kw = acting_kwargs(input_kwargs)``), and passes the same dict
on to ``next_handler`` unchanged. The keys are those ``agentscope.agent.Agent`` builds for each hook
(``agent/_agent.py``: ``reply``, ``_reasoning``, ``_acting``, ``_call_model``, ``compress_context``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, Literal, TypedDict, cast

from agentscope.agent import ContextConfig
from agentscope.event import ExternalExecutionResultEvent, UserConfirmResultEvent
from agentscope.message import HintBlock, Msg, ToolCallBlock, ToolResultState
from agentscope.model import ChatModelBase, ChatResponse
from agentscope.tool import ToolChoice, ToolChunk, ToolResponse

__all__ = [
    "ActingKwargs",
    "ActingNext",
    "CompressKwargs",
    "FinalToolState",
    "ModelCallKwargs",
    "ModelNext",
    "ModelResult",
    "ReasoningKwargs",
    "ReplyKwargs",
    "StreamNext",
    "acting_kwargs",
    "compress_kwargs",
    "model_call_kwargs",
    "reasoning_kwargs",
    "reply_kwargs",
]


class ReplyKwargs(TypedDict):
    """``on_reply``: what triggers the reply (new message(s), a resumption event, or None)."""

    inputs: Msg | list[Msg] | UserConfirmResultEvent | ExternalExecutionResultEvent | None


class ReasoningKwargs(TypedDict):
    """``on_reasoning``: one reasoning step."""

    tool_choice: ToolChoice | None


class ActingKwargs(TypedDict):
    """``on_acting``: one tool call, already validated and permitted by the agent."""

    tool_call: ToolCallBlock


class ModelCallKwargs(TypedDict):
    """``on_model_call``: one raw model call (once per retry/fallback attempt)."""

    current_model: ChatModelBase
    messages: list[Msg]
    tools: list[dict[str, Any]]
    tool_choice: ToolChoice | None


class CompressKwargs(TypedDict):
    """``on_compress_context``: one context compression check (it may call the model)."""

    context_config: ContextConfig | None
    instructions: HintBlock | None


#: what a model call returns: one response, or a stream of them
ModelResult = ChatResponse | AsyncGenerator[ChatResponse, None]
#: ``next_handler`` of ``on_model_call``
ModelNext = Callable[..., Awaitable[ModelResult]]
#: ``next_handler`` of ``on_reply`` and ``on_reasoning`` (agent events, messages)
StreamNext = Callable[..., AsyncGenerator[Any, None]]
#: ``next_handler`` of ``on_acting``: tool chunks, then the final response
ActingNext = Callable[..., AsyncGenerator[ToolChunk | ToolResponse, None]]
#: the states a final ``ToolResponse`` may carry (``ToolResponse.state``)
FinalToolState = Literal[ToolResultState.ERROR, ToolResultState.DENIED, ToolResultState.INTERRUPTED,
                         ToolResultState.SUCCESS]


def reply_kwargs(input_kwargs: dict[str, Any]) -> ReplyKwargs:
    return cast(ReplyKwargs, input_kwargs)


def reasoning_kwargs(input_kwargs: dict[str, Any]) -> ReasoningKwargs:
    return cast(ReasoningKwargs, input_kwargs)


def acting_kwargs(input_kwargs: dict[str, Any]) -> ActingKwargs:
    return cast(ActingKwargs, input_kwargs)


def model_call_kwargs(input_kwargs: dict[str, Any]) -> ModelCallKwargs:
    return cast(ModelCallKwargs, input_kwargs)


def compress_kwargs(input_kwargs: dict[str, Any]) -> CompressKwargs:
    return cast(CompressKwargs, input_kwargs)
