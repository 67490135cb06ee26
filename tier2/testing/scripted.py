"""`ScriptedChatModel`: one strict, in-process model that answers from a script — for tests and benchmarks.

Two kinds of script:

- **A list of steps** (strict): call *i* is answered by step *i*. A step is the reply's blocks, a function of the
  conversation returning them (sync or async, it may also raise or never return), or an exception instance to
  raise (a scripted provider outage). A call past the end raises `ScriptError` naming the call; steps left unused
  fail `assert_exhausted()` — which the test suite runs for every model at teardown (`strict_scripts`).
- **One function of the conversation** (derived): ``script(messages) -> blocks`` answers every call. Derive the
  step from the messages (e.g. with `tool_results`), never from call counts: a resumed agent replays nothing.
  The function may raise `ScriptError` itself when the conversation went somewhere it has no answer for.

Every call is recorded (`calls`: messages, tools, tool choice); context-compression requests are answered with a
canned summary and counted in `compressions`, never taken from the script. The model streams like a provider
(deltas with stable ids, then one complete final chunk with usage) and reports usage as characters / 4 unless a
fixed ``usage=(input, output)`` is given; subclasses may override `reply`, `usage_of` or `stream_blocks` for
special behaviour (a model that stalls mid-stream, one that reports the largest usage allowed...). Copies made by
``copy.copy`` (per-call parameter overrides) share the script position and the records.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentscope.credential import CredentialBase
from agentscope.message import Msg, TextBlock, ToolCallBlock
from agentscope.model import ChatModelBase, ChatResponse, ChatUsage
from pydantic import BaseModel

__all__ = ["ScriptedChatModel", "ScriptCredential", "ScriptError", "ModelCall", "strict_scripts", "tool_results",
           "Blocks"]

Blocks = list[TextBlock | ToolCallBlock]
StepFn = Callable[[list[Msg]], Blocks | Awaitable[Blocks]]
Step = Blocks | StepFn | BaseException
Script = StepFn | Sequence[Step]
SUMMARY = {k: "scripted summary" for k in ("task_overview", "current_state", "important_discoveries", "next_steps",
                                            "context_to_preserve")}


class ScriptError(AssertionError):
    """The model was called past the end of its script, or left steps of it unused."""


class ScriptCredential(CredentialBase):
    type: str = "tier2_scripted"

    @classmethod
    def get_chat_model_class(cls) -> builtins.type[ChatModelBase]:  # ``type`` is the field above
        return ScriptedChatModel


def tool_results(messages: list[Msg]) -> int:
    """How many tool results the conversation holds (= completed acting steps)."""
    return sum(len(m.get_content_blocks("tool_result")) for m in messages)


@dataclass
class ModelCall:
    """One call that reached the model (``n``: 1-based among the scripted calls)."""

    n: int
    messages: list[Msg]
    tools: list[dict[str, Any]] | None
    tool_choice: Any

    @property
    def last_text(self) -> str:
        return next((m.get_text_content() or "" for m in reversed(self.messages) if m.get_text_content()), "")


@dataclass
class _Tape:
    """Script position and records, shared by a model and its copies."""

    steps: list[Step] | None
    calls: list[ModelCall] = field(default_factory=list)
    compressions: int = 0
    overrun: list[str] = field(default_factory=list)
    acknowledged: bool = False


_REGISTRIES: list[list[ScriptedChatModel]] = []


@contextlib.contextmanager
def strict_scripts() -> Iterator[list[ScriptedChatModel]]:
    """Collect every `ScriptedChatModel` made inside the block (the test suite checks them at teardown)."""
    made: list[ScriptedChatModel] = []
    _REGISTRIES.append(made)
    try:
        yield made
    finally:
        _REGISTRIES.remove(made)


class ScriptedChatModel(ChatModelBase):
    class Parameters(BaseModel):
        stream: bool = True

    def __init__(self, script: Script, model: str = "scripted-model", stream: bool = True, *,
                 context_size: int = 1_000_000, usage: tuple[int, int] | None = None,
                 parameters: BaseModel | None = None, credential: CredentialBase | None = None, **_: Any) -> None:
        super().__init__(credential=credential or ScriptCredential(name=model), model=model,
                         parameters=parameters if parameters is not None else self.Parameters(stream=stream),
                         stream=stream, max_retries=0, retry_delay=0.0, context_size=context_size)
        if callable(script):
            self.script: StepFn | None = script
            steps: list[Step] | None = None
        elif isinstance(script, Sequence) and not isinstance(script, str | bytes):
            self.script, steps = None, list(script)
        else:
            raise TypeError(f"a script is a function of the messages or a list of steps, not {type(script).__name__}")
        self._tape = _Tape(steps)
        self.fixed_usage = usage
        for registry in _REGISTRIES:
            registry.append(self)

    # ------------------------------------------------------------------------------------------------ records

    @property
    def calls(self) -> list[ModelCall]:
        """Every scripted call so far (context compressions are counted in `compressions` instead)."""
        return self._tape.calls

    @property
    def compressions(self) -> int:
        return self._tape.compressions

    @property
    def steps_left(self) -> int:
        return 0 if self._tape.steps is None else max(0, len(self._tape.steps) - len(self._tape.calls))

    def problems(self) -> list[str]:
        """What makes this script fail: calls past its end, unused steps (none once `acknowledge` was called)."""
        if self._tape.acknowledged:
            return []
        out = list(self._tape.overrun)
        if self.steps_left:
            out.append(f"scripted model {self.model!r}: {self.steps_left} of {len(self._tape.steps or [])} "
                       f"scripted step(s) never used ({len(self.calls)} call(s) made)")
        return out

    def acknowledge(self) -> None:
        """The test checked this model's misuse itself (e.g. that a call past the script fails): stop reporting it."""
        self._tape.acknowledged = True

    def assert_exhausted(self) -> None:
        """Raise `ScriptError` when a step is unused or a call went past the script."""
        found = self.problems()
        if found:
            raise ScriptError("; ".join(found))

    # ------------------------------------------------------------------------------------------------ answering

    async def reply(self, call: ModelCall) -> Blocks:
        """The blocks answering one (non-compression) call: the next step, or the derived script's answer."""
        if self.script is not None:
            step: Step = self.script
        else:
            steps = self._tape.steps or []
            if call.n > len(steps):
                detail = (f"scripted model {self.model!r}: call {call.n} but the script has only {len(steps)} "
                          f"step(s) (last message: {call.last_text[:200]!r})")
                self._tape.overrun.append(detail)
                raise ScriptError(detail)
            step = steps[call.n - 1]
        if isinstance(step, BaseException):
            raise step
        if callable(step):
            out = step(call.messages)
            return await out if inspect.isawaitable(out) else out
        return list(step)

    async def usage_of(self, messages: list[Msg], tools: list[dict[str, Any]] | None, blocks: Blocks) -> ChatUsage:
        if self.fixed_usage is not None:
            return ChatUsage(input_tokens=self.fixed_usage[0], output_tokens=self.fixed_usage[1], time=0.0)
        chars_in = sum(len(m.get_text_content() or "") for m in messages)
        chars_out = sum(len(b.text) if isinstance(b, TextBlock) else len(b.input) for b in blocks)
        return ChatUsage(input_tokens=max(1, chars_in // 4), output_tokens=max(1, chars_out // 4), time=0.0)

    async def _call_api(self, model_name: str, messages: list[Msg], tools: list[dict[str, Any]] | None = None,
                        tool_choice: Any = None, **kwargs: Any) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        if getattr(tool_choice, "mode", None) == "generate_structured_output":  # context compression
            self._tape.compressions += 1
            blocks: Blocks = [ToolCallBlock(id=f"summary{self._tape.compressions}", name="generate_structured_output",
                                            input=json.dumps(SUMMARY))]
        else:
            call = ModelCall(n=len(self._tape.calls) + 1, messages=list(messages), tools=tools,
                             tool_choice=tool_choice)
            self._tape.calls.append(call)
            blocks = await self.reply(call)
        usage = await self.usage_of(messages, tools, blocks)
        if not self.stream:
            return ChatResponse(content=blocks, is_last=True, usage=usage)
        return self.stream_blocks(blocks, usage)

    @staticmethod
    def delta(block: TextBlock | ToolCallBlock) -> ChatResponse:
        """One streamed (not last) chunk carrying ``block`` with its id."""
        if isinstance(block, TextBlock):
            return ChatResponse(content=[TextBlock(id=block.id, text=block.text)], is_last=False)
        return ChatResponse(content=[ToolCallBlock(id=block.id, name=block.name, input=block.input)], is_last=False)

    async def stream_blocks(self, blocks: Blocks, usage: ChatUsage) -> AsyncGenerator[ChatResponse, None]:
        for b in blocks:
            yield self.delta(b)
        yield ChatResponse(content=blocks, is_last=True, usage=usage)
