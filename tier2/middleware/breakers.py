"""Circuit breakers of a run: step caps, stuck patterns, per-call timeouts. Any one stops the run.

A trip raises `tier2.errors.RunLimitReached` (``steps``, ``stuck``, ``timeout`` or ``deadline``), which ends the run
``stopped`` with the reason and delivers the best verified result. Where each check sits, and why:

* **Before every model call** (``on_compress_context`` and ``on_reasoning`` pre-logic): step caps and the stuck
  detector. Judging before the call means a looping agent is stopped before it spends anything more, and a
  pattern that merely ends a turn (a final text reply) costs nothing.
* **Around every model call** (``on_model_call``): a wall-clock bound on the whole call including the consumption
  of its stream (a trickling stream defeats an HTTP read timeout). Context compression is a model call too.
* **Around every tool call** (``on_acting``): a wall-clock bound; on expiry the tool is cancelled and answered with
  an error result, and the run stops at the next check. Raising inside ``on_acting`` would surface as an
  ``ExceptionGroup`` from a concurrent tool batch and leave a tool call without a result in the context.
* **Double timeouts**: each call is bounded by its own limit and by the run's deadline (``deadline_at``, owned by
  the budget layer), whichever comes first.

Step records for the detector come from the model's final response (``on_model_call``) and from the tool results
in the context (read before the next model call, so validation errors and denials that never reach ``on_acting``
count too). All per-run state lives in ``agent.state.middle_context["tier2.breakers"]``, keyed by run id: a
checkpoint carries it to a resumed attempt, and a follow-up run on the same conversation starts afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypedDict, TypeVar, cast

from agentscope.message import DataBlock, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultState
from agentscope.middleware import MiddlewareBase
from agentscope.model import ChatResponse
from agentscope.state import AgentState
from agentscope.tool import ToolChunk, ToolResponse

from tier2.errors import RunLimitReached
from tier2.middleware._kwargs import ActingNext, ModelNext, ModelResult, StreamNext, acting_kwargs
from tier2.middleware.stuck import StuckDetector
from tier2.settings.loader import BreakerPolicy

__all__ = ["BreakersMiddleware", "BreakersState", "PendingCall", "STATE_KEY", "breakers_state"]

STATE_KEY = "tier2.breakers"
_T = TypeVar("_T")
_ERROR_STATES = {"error", "denied", "interrupted"}
#: after a timed-out tool was cancelled, how long its (already interrupted) generator may take to finish
_DRAIN_S = 5.0


def _label(name: str, raw: str) -> str:
    """``Read data/theme.json``: the tool and its target, short enough for a stop reason."""
    try:
        args = json.loads(raw or "{}")
    except json.JSONDecodeError:
        args = {}
    target = ""
    if isinstance(args, dict):
        target = next((str(args[k]) for k in ("file_path", "path", "pattern") if k in args), "")
    parts = [p for p in target.split("/") if p]
    if len(parts) > 2:
        target = "/".join(parts[-2:])
    return f"{name} {target}".strip()


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    parts = []
    for block in output or []:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, DataBlock):
            parts.append(block.model_dump_json(exclude={"id"}))
    return "\n".join(parts)


class PendingCall(TypedDict):
    """A tool call of the last model reply, waiting for its result to be recorded."""

    id: str
    name: str
    input: str


class BreakersState(TypedDict):
    """Per-run state of `BreakersMiddleware` (``middle_context[STATE_KEY]``)."""

    run_id: str
    steps: int  # model calls in the run
    turn: str | None  # the reply id of the current writer turn
    turn_steps: int  # model calls in that turn
    pending: list[PendingCall]
    records: list[dict[str, Any]]  # `StuckDetector` step records
    tripped: list[str] | None  # [limit, detail] of the first trip


def breakers_state(state: AgentState, run_id: str) -> BreakersState:
    """The run's breaker state, started afresh for a new run on the same conversation."""
    ctx = state.middle_context
    st = ctx.get(STATE_KEY)
    if isinstance(st, dict) and st.get("run_id") == run_id:
        return cast(BreakersState, st)  # written by this function (a checkpoint restores it as JSON)
    fresh = BreakersState(run_id=run_id, steps=0, turn=None, turn_steps=0, pending=[], records=[], tripped=None)
    ctx[STATE_KEY] = fresh
    return fresh


class BreakersMiddleware(MiddlewareBase):
    """Per run: the instance holds only the run id, the policy snapshot and the deadline source."""

    def __init__(self, run_id: str, policy: BreakerPolicy,
                 deadline_at: Callable[[], float | None] | None = None) -> None:
        self.run_id, self.policy = run_id, policy
        #: the run's wall-clock deadline as a UNIX time (``time.time()``), or None for no run deadline
        self.deadline_at = deadline_at

    # ------------------------------------------------------------------ state

    def _state(self, agent: Any) -> BreakersState:
        return breakers_state(agent.state, self.run_id)

    def _detector(self, st: BreakersState) -> StuckDetector:
        return StuckDetector(self.policy.stuck, st["records"])

    @staticmethod
    def _trip(st: BreakersState, limit: str, detail: str) -> RunLimitReached:
        """Record the trip (the first one wins, e.g. of two concurrent tool timeouts) and build its error."""
        tripped = st["tripped"] or [limit, detail]
        st["tripped"] = tripped
        return RunLimitReached(*tripped)

    def _settle(self, agent: Any, st: BreakersState) -> None:
        """Record the results of the last reply's tool calls (read from the context, whatever produced them)."""
        pending = st["pending"]
        if not pending:
            return
        wanted = {c["id"] for c in pending}
        results: dict[str, Any] = {}
        for msg in reversed(agent.state.context):
            if isinstance(msg.content, list):
                for block in msg.content:
                    if getattr(block, "type", None) == "tool_result" and block.id in wanted:
                        results.setdefault(block.id, block)
            if len(results) == len(wanted):
                break
        detector = self._detector(st)
        for call in pending:
            block = results.get(call["id"])
            if block is not None:  # no result: the call never ran (parked or dropped); nothing was observed
                detector.tool(call["name"], call["input"], _output_text(block.output),
                              str(block.state) in _ERROR_STATES, _label(call["name"], call["input"]))
        st["pending"] = []

    def _check(self, agent: Any, st: BreakersState) -> None:
        """Before a model call: a pending trip, the step caps, then the stuck patterns."""
        if st["tripped"]:
            raise RunLimitReached(*st["tripped"])
        if st["turn"] != agent.state.reply_id:
            st["turn"], st["turn_steps"] = agent.state.reply_id, 0
        p = self.policy
        if st["steps"] >= p.steps_per_run:
            raise self._trip(st, "steps", f"{st['steps']} model calls in this run "
                                          f"(breakers.steps_per_run={p.steps_per_run})")
        if st["turn_steps"] >= p.steps_per_turn:
            raise self._trip(st, "steps", f"{st['turn_steps']} model calls in one writer turn "
                                          f"(breakers.steps_per_turn={p.steps_per_turn})")
        verdict = self._detector(st).verdict()
        if verdict is not None:
            raise self._trip(st, "stuck", verdict.detail)

    def _on_response(self, agent: Any, res: ChatResponse) -> None:
        st = self._state(agent)
        calls = [b for b in res.content if isinstance(b, ToolCallBlock)]
        chars = sum(len(b.text.strip()) for b in res.content if isinstance(b, TextBlock))
        chars += sum(len(b.thinking.strip()) for b in res.content if isinstance(b, ThinkingBlock))
        st["pending"] = [{"id": c.id, "name": c.name, "input": c.input or ""} for c in calls]
        self._detector(st).reply(len(calls), chars)

    # ------------------------------------------------------------------ time bounds

    def _bound(self, seconds: float, what: str, key: str) -> tuple[float, tuple[str, str]]:
        """The loop-clock deadline for one call and the trip it means: its own limit or the run deadline."""
        now = asyncio.get_running_loop().time()
        own = (now + seconds, ("timeout", f"{what} took longer than {seconds:g} s (breakers.{key})"))
        run = self.deadline_at() if self.deadline_at is not None else None
        if run is not None and now + (run - time.time()) < own[0]:
            return now + (run - time.time()), ("deadline", f"the run deadline passed during {what}")
        return own

    @staticmethod
    async def _within(awaitable: Awaitable[_T], deadline: float) -> tuple[bool, _T | None]:
        """``(expired, value)``: expired also when the callee swallowed the cancellation and returned."""
        cm = asyncio.timeout_at(deadline)
        try:
            async with cm:
                value = await awaitable
        except TimeoutError:
            if cm.expired():
                return True, None
            raise
        return cm.expired(), value

    # ------------------------------------------------------------------ hooks

    async def on_reply(self, agent: Any, input_kwargs: dict[str, Any], next_handler: StreamNext,
                       ) -> AsyncGenerator[Any, None]:
        self._state(agent)
        async for item in next_handler(**input_kwargs):
            yield item
        st = self._state(agent)
        self._settle(agent, st)
        if st["tripped"]:  # a tool timed out in the turn's last round: no model call came to raise it
            raise RunLimitReached(*st["tripped"])

    async def on_compress_context(self, agent: Any, input_kwargs: dict[str, Any],
                                  next_handler: Callable[..., Awaitable[None]]) -> None:
        st = self._state(agent)
        self._settle(agent, st)
        self._check(agent, st)  # before compression spends a model call on a stuck agent
        before = (agent.state.summary, id(agent.state.context))
        deadline, trip = self._bound(self.policy.model_call_s, "context compression", "model_call_s")
        expired, _ = await self._within(next_handler(**input_kwargs), deadline)
        if expired:
            raise self._trip(st, *trip)
        if (agent.state.summary, id(agent.state.context)) != before:
            self._detector(st).compressed()

    async def on_reasoning(self, agent: Any, input_kwargs: dict[str, Any], next_handler: StreamNext,
                           ) -> AsyncGenerator[Any, None]:
        st = self._state(agent)
        self._settle(agent, st)
        self._check(agent, st)
        st["steps"] += 1
        st["turn_steps"] += 1
        async for item in next_handler(**input_kwargs):
            yield item

    async def on_model_call(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ModelNext) -> ModelResult:
        st = self._state(agent)
        if st["tripped"]:  # e.g. a retry or a fallback model after a timed-out call
            raise RunLimitReached(*st["tripped"])
        deadline, trip = self._bound(self.policy.model_call_s, "a model call", "model_call_s")
        expired, res = await self._within(next_handler(**input_kwargs), deadline)
        if expired:
            if isinstance(res, AsyncGenerator):  # the callee swallowed the cancellation and returned a stream anyway
                await res.aclose()
            raise self._trip(st, *trip)
        if isinstance(res, AsyncGenerator):
            return self._timed_stream(agent, res, deadline, trip)
        assert res is not None  # not expired: the call returned
        self._on_response(agent, res)
        return res

    async def _timed_stream(self, agent: Any, stream: AsyncGenerator[ChatResponse, None], deadline: float,
                            trip: tuple[str, str]) -> AsyncGenerator[ChatResponse, None]:
        """The model's stream, each chunk awaited in the consumer's own task under the call's deadline."""
        try:
            while True:
                try:
                    expired, chunk = await self._within(stream.__anext__(), deadline)
                except StopAsyncIteration:
                    return
                if expired:
                    raise self._trip(self._state(agent), *trip)
                assert chunk is not None  # not expired: the stream gave a chunk
                if chunk.is_last:
                    self._on_response(agent, chunk)
                yield chunk
        finally:
            await stream.aclose()

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ActingNext,
                        ) -> AsyncGenerator[ToolChunk | ToolResponse, None]:
        st = self._state(agent)
        call = acting_kwargs(input_kwargs)["tool_call"]
        if st["tripped"]:
            limit, detail = st["tripped"]
            yield ToolResponse(content=[TextBlock(text=f"Not run: the run is stopping ({limit}: {detail}).")],
                               state=ToolResultState.ERROR, id=call.id)
            return
        deadline, trip = self._bound(self.policy.tool_call_s, f"tool call {call.name}", "tool_call_s")
        chunks = next_handler(**input_kwargs)
        while True:
            try:
                expired, chunk = await self._within(chunks.__anext__(), deadline)
            except StopAsyncIteration:
                return
            if expired:
                self._trip(st, *trip)
                await self._drain(chunks)
                yield ToolResponse(content=[TextBlock(text=f"Stopped: {trip[1]}.")], state=ToolResultState.ERROR,
                                   id=call.id)
                return
            assert chunk is not None  # not expired: the tool gave a chunk
            yield chunk

    @staticmethod
    async def _drain(chunks: AsyncGenerator[Any, None]) -> None:
        """Let a cancelled tool chain finish its own way (AgentScope answers a cancelled tool with an
        ``interrupted`` result, inner layers checkpoint); close it if it does not end promptly."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_DRAIN_S):
                async for _ in chunks:
                    pass
        with contextlib.suppress(Exception):
            await chunks.aclose()
