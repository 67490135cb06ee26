"""Record every model and tool call of an agent: the run's trajectory (Redis) and the active OTel span.

Sits in the onion's tracing slot, right inside AgentScope's `TracingMiddleware`, so the span current in its hooks
is AgentScope's ``chat`` / ``execute_tool`` span: it adds what that span lacks (cost from the price table, the
model that actually answered, tier2's call id). Because AgentScope's retry/fallback loop runs the middleware
chain once per attempt, a failed primary call and the fallback call that answered are two records.

Per-run state (the call counter, the last answering model) lives in ``AgentState.middle_context``, so a resumed
attempt restored from a checkpoint derives the same call ids and overwrites instead of duplicating.

Tool calls AgentScope answers itself — arguments that are not JSON or fail the tool's schema, an unknown tool —
never reach ``on_acting``; their error results are read from the context before the next model call (and at the
end of the reply) and recorded as well, so the trajectory shows every call the model made.

Records are written in the background, batched (a Redis round trip can cost as much as a cheap ReAct step): at
most every ``flush_s`` seconds while a reply runs, and completely at the end of every reply, so a finished turn's
trajectory is complete before the run moves on.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any, TypedDict

from agentscope.event import ModelCallEndEvent
from agentscope.message import TextBlock, ToolCallBlock
from agentscope.middleware import MiddlewareBase
from agentscope.model import ChatResponse
from agentscope.state import AgentState
from agentscope.tool import ToolChunk, ToolResponse

from tier2.errors import RunLimitReached
from tier2.middleware._kwargs import ActingNext, ModelNext, ModelResult, StreamNext, acting_kwargs, model_call_kwargs
from tier2.settings.loader import Price, SecretsConfig
from tier2.settings.secrets import Redactor
from tier2.store.trajectory import ModelCallRecord, ToolCallRecord, TrajectoryStore
from tier2.telemetry import ANSWERED_BY, CALL_COST, DROPPED_PARAMS, FALLBACK_INDEX, USAGE_ESTIMATED, A, recording_span

__all__ = ["CallRecorder", "RecorderState", "answered_by", "default_redactor", "recorder_state", "summarize_args"]

_KEY = "tier2.recorder"


class RecorderState(TypedDict, total=False):
    """Per-run state of `CallRecorder`: the step (``reply_id:cur_iter``), model calls made at it, and the model
    that answered the last successful call, with that call's cost (None: unpriced)."""

    slot: str
    seq: int
    answered: str
    cost: float | None
    estimated: bool
    #: tool calls of the last answer (``[id, name, input]``) and the ids of those that reached ``on_acting``
    pending: list[list[str]]
    acted: list[str]


def recorder_state(state: AgentState) -> RecorderState:
    mine: RecorderState = state.middle_context.setdefault(_KEY, {})
    return mine


def default_redactor() -> Redactor:
    """The redactor for the default secret patterns (callers with the security config pass their own)."""
    return Redactor.from_env(SecretsConfig().env_patterns)


def summarize_args(raw: str, redactor: Redactor | None = None) -> str:
    """A short, human-readable summary of a tool call's JSON arguments (its target path, or the first few),
    bounded and scrubbed of every known secret: it is shown to tenants in events and the trajectory."""
    red = redactor or default_redactor()
    try:
        args = json.loads(raw or "{}")
    except (json.JSONDecodeError, RecursionError):
        return red.summary(raw, 80)
    if not isinstance(args, dict):
        return ""
    for key in ("file_path", "pattern", "path"):
        if key in args:
            return red.summary(str(args[key]), 200)
    return red.summary(", ".join(f"{k}={red.summary(str(v), 30)}" for k, v in list(args.items())[:3]), 200)


def answered_by(agent: Any) -> str | None:
    """The model that answered the agent's last successful call (primary or a fallback), as recorded."""
    value = agent.state.middle_context.get(_KEY, {}).get("answered")  # read-only: no slot created
    return str(value) if value else None


def _state_of(exc: BaseException) -> str:
    if isinstance(exc, RunLimitReached):
        return "refused"
    return "error" if isinstance(exc, Exception) else "cancelled"


class CallRecorder(MiddlewareBase):
    """One per agent per run. ``chain``: model names of the route and its fallbacks, in order (names the
    fallback index); ``store`` None records spans only."""

    def __init__(self, run_id: str, agent_name: str, prices: Mapping[str, Price], store: TrajectoryStore | None,
                 chain: Sequence[str] = (), flush_s: float = 1.0, redactor: Redactor | None = None) -> None:
        self.run_id, self.agent_name, self.prices, self.store = run_id, agent_name, prices, store
        self.redactor = redactor or default_redactor()
        self.chain, self.flush_s = list(chain), flush_s
        # write buffer and the in-flight batch: I/O plumbing, not run state (nothing here survives a reply)
        self._buffer: list[ModelCallRecord | ToolCallRecord] = []
        self._writing: asyncio.Task[bool] | None = None
        self._last_flush = time.monotonic()

    def _write(self, call: ModelCallRecord | ToolCallRecord) -> None:
        if self.store is None:
            return
        self._buffer.append(call)
        if (self._writing is None or self._writing.done()) and time.monotonic() - self._last_flush >= self.flush_s:
            self._writing = asyncio.get_running_loop().create_task(self._write_batch())

    async def _write_batch(self) -> bool:
        batch, self._buffer = self._buffer, []
        self._last_flush = time.monotonic()
        return await self.store.record(self.run_id, *batch) if self.store is not None else True

    async def flush(self) -> None:
        """Write everything recorded so far (a refused write is logged by the store, never raised)."""
        if self._writing is not None:
            await self._writing
            self._writing = None
        if self._buffer:
            await self._write_batch()

    async def on_reply(self, agent: Any, input_kwargs: dict[str, Any], next_handler: StreamNext,
                       ) -> AsyncGenerator[Any, None]:
        try:
            async for item in next_handler(**input_kwargs):
                yield item
        finally:
            self._settle(agent)
            await self.flush()

    def _settle(self, agent: Any) -> None:
        """Record the last answer's tool calls that never reached ``on_acting`` (AgentScope answered them with an
        error: bad JSON, schema, unknown tool), from their results in the context."""
        mine = self._mine(agent)
        pending = [p for p in mine.get("pending") or [] if p[0] not in set(mine.get("acted") or [])]
        mine["pending"], mine["acted"] = [], []
        if not pending:
            return
        wanted = {p[0] for p in pending}
        results: dict[str, Any] = {}
        for msg in reversed(agent.state.context):
            for block in msg.content if isinstance(msg.content, list) else []:
                if getattr(block, "type", None) == "tool_result" and block.id in wanted:
                    results.setdefault(block.id, block)
            if len(results) == len(wanted):
                break
        for call_id, name, raw in pending:
            block = results.get(call_id)
            if block is None:  # no result: the call never ran (parked or dropped)
                continue
            output = block.output if isinstance(block.output, str) else "".join(
                b.text for b in block.output if isinstance(b, TextBlock))
            self._write(ToolCallRecord(
                call_id=f"t:{self.agent_name}:{call_id}", agent=self.agent_name, tool=name,
                state=str(getattr(block.state, "value", block.state)),
                error=self.redactor.summary(output.strip(), 300), started_at=time.time(), duration_ms=0.0,
                reply_id=agent.state.reply_id, iteration=agent.state.cur_iter,
                args_summary=summarize_args(raw, self.redactor),
                args_sha256=hashlib.sha256(raw.encode()).hexdigest()[:16],
                result_sha256=hashlib.sha256(output.encode()).hexdigest()[:16], result_chars=len(output)))

    @staticmethod
    def _mine(agent: Any) -> RecorderState:
        return recorder_state(agent.state)

    def _model_call_id(self, agent: Any) -> str:
        mine = self._mine(agent)
        slot = f"{agent.state.reply_id}:{agent.state.cur_iter}"
        if mine.get("slot") != slot:
            mine["slot"], mine["seq"] = slot, 0
        mine["seq"] += 1
        return f"m:{self.agent_name}:{slot}:{mine['seq']}"

    def _fallback_index(self, called: str, response: Any) -> int:
        """Position of the answering model in the route's chain: the model AgentScope called (primary or its one
        fallback), plus the position inside a `FallbackChain` when that fallback is one."""
        meta = getattr(response, "metadata", None) or {}
        return (self.chain.index(called) if called in self.chain else 0) + int(meta.get(FALLBACK_INDEX, 0))

    def _model_done(self, agent: Any, call_id: str, current: Any, started: float, t0: float,
                    response: Any, exc: BaseException | None, span: Any) -> None:
        meta = getattr(response, "metadata", None) or {}
        model = str(meta.get(ANSWERED_BY) or getattr(current, "model", "?"))
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "input_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "output_tokens", 0) or 0)
        price = self.prices.get(model)
        cost = price.cost(tokens_in, tokens_out) if price is not None and exc is None else None
        estimated = bool(meta.get(USAGE_ESTIMATED))  # the server sent no usage
        if exc is None:  # the answer's model and cost, for the ModelCallEndEvent (`on_reasoning`)
            mine = self._mine(agent)
            mine["answered"], mine["cost"], mine["estimated"] = model, cost, estimated
            calls = [b for b in getattr(response, "content", None) or [] if isinstance(b, ToolCallBlock)]
            mine["pending"] = [[b.id, b.name, b.input if isinstance(b.input, str) else json.dumps(b.input)]
                               for b in calls]
            mine["acted"] = []
        if span is not None:
            span.set_attributes({A.CALL_ID: call_id, A.AGENT: self.agent_name, A.RESPONSE_MODEL: model,
                                 A.INPUT_TOKENS: tokens_in, A.OUTPUT_TOKENS: tokens_out, A.PRICED: cost is not None,
                                 **({A.COST_USD: cost} if cost is not None else {})})
        self._write(ModelCallRecord(
            call_id=call_id, agent=self.agent_name, model=model, state="success" if exc is None else _state_of(exc),
            error="" if exc is None else f"{type(exc).__name__}: {str(exc)[:300]}", started_at=started,
            duration_ms=round((time.perf_counter() - t0) * 1000, 3), reply_id=agent.state.reply_id,
            iteration=agent.state.cur_iter, input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost,
            fallback=self._fallback_index(str(getattr(current, "model", "")), response),
            usage_estimated=estimated, dropped_params=[str(p) for p in meta.get(DROPPED_PARAMS) or []]))

    async def on_model_call(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ModelNext) -> ModelResult:
        call_id = self._model_call_id(agent)
        current = model_call_kwargs(input_kwargs).get("current_model")
        span = recording_span()  # AgentScope's chat span: current now, no longer when a stream is consumed
        started, t0 = time.time(), time.perf_counter()
        try:
            result = await next_handler(**input_kwargs)
        except Exception as exc:
            self._model_done(agent, call_id, current, started, t0, None, exc, span)
            raise
        if isinstance(result, ChatResponse):
            self._model_done(agent, call_id, current, started, t0, result, None, span)
            return result
        return self._watch_stream(agent, call_id, current, started, t0, result, span)

    async def _watch_stream(self, agent: Any, call_id: str, current: Any, started: float, t0: float,
                            stream: AsyncGenerator[ChatResponse, None], span: Any,
                            ) -> AsyncGenerator[ChatResponse, None]:
        last: ChatResponse | None = None
        try:
            async for chunk in stream:
                last = chunk
                yield chunk
        except Exception as exc:
            self._model_done(agent, call_id, current, started, t0, last, exc, span)
            raise
        self._model_done(agent, call_id, current, started, t0, last, None, span)

    async def on_reasoning(self, agent: Any, input_kwargs: dict[str, Any], next_handler: StreamNext,
                           ) -> AsyncGenerator[Any, None]:
        """Name the answering model on AgentScope's ``ModelCallEndEvent`` (its model name is always the primary) and
        put the call's cost on it (``CALL_COST``, None when unpriced): the one price of the call, which the run's
        usage and events read (`tier2.runs.loop.usage`), and whether its usage is an estimate (``USAGE_ESTIMATED``)."""
        self._settle(agent)  # the previous answer's tool calls have their results in the context by now
        async for item in next_handler(**input_kwargs):
            if isinstance(item, ModelCallEndEvent):
                mine = self._mine(agent)
                answered = mine.get("answered")
                if answered:
                    item.metadata[ANSWERED_BY] = answered
                    item.metadata[CALL_COST] = mine.get("cost")
                    if mine.get("estimated"):
                        item.metadata[USAGE_ESTIMATED] = True
            yield item

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ActingNext,
                        ) -> AsyncGenerator[ToolChunk | ToolResponse, None]:
        call = acting_kwargs(input_kwargs).get("tool_call")
        if call is not None:
            self._mine(agent).setdefault("acted", []).append(call.id)
        started, t0 = time.time(), time.perf_counter()
        last: Any = None
        error: BaseException | None = None
        try:
            async for chunk in next_handler(**input_kwargs):
                last = chunk
                yield chunk
        except BaseException as exc:
            error = exc
            raise
        finally:
            self._tool_done(agent, call, started, t0, last, error)

    def _tool_done(self, agent: Any, call: Any, started: float, t0: float, last: Any,
                   error: BaseException | None) -> None:
        if call is None:
            return
        call_id = f"t:{self.agent_name}:{call.id}"  # agents of one run may reuse a model-made call id
        text = "".join(b.text for b in last.content if isinstance(b, TextBlock)) if isinstance(last, ToolResponse) \
            else ""
        state = _state_of(error) if error is not None else str(getattr(getattr(last, "state", None), "value",
                                                                         getattr(last, "state", "unknown")))
        result_sha = hashlib.sha256(text.encode()).hexdigest()[:16] if last is not None else ""
        span = recording_span()
        if span is not None:
            span.set_attributes({A.CALL_ID: call_id, A.AGENT: self.agent_name, "tier2.tool.state": state,
                                 "tier2.tool.result_sha256": result_sha})
        raw = call.input if isinstance(call.input, str) else json.dumps(call.input)
        self._write(ToolCallRecord(
            call_id=call_id, agent=self.agent_name, tool=call.name, state=state,
            error="" if error is None else self.redactor.summary(f"{type(error).__name__}: {error}", 300),
            started_at=started,
            duration_ms=round((time.perf_counter() - t0) * 1000, 3), reply_id=agent.state.reply_id,
            iteration=agent.state.cur_iter, args_summary=summarize_args(raw, self.redactor),
            args_sha256=hashlib.sha256(raw.encode()).hexdigest()[:16], result_sha256=result_sha,
            result_chars=len(text)))
