"""The budget slot of the onion: AgentScope's soft budget outside, the hard ledger inside.

* Soft: `ReplyBudgetControlMiddleware` with token weights derived from the model's prices, so "weighted tokens"
  are USD in disguise: once one reply used ``soft_ratio`` of the run's cap, the agent is told to wrap up and may
  call no more tools. It never stops anything by itself.
* Hard: `LedgerMiddleware` (``on_model_call``) reserves each call's worst case on the run's Redis ledger before the
  call, refuses it with `RunLimitReached` past the cap or the deadline, and reconciles the reported usage after
  it — for a streamed response, when the stream ends. The output bound it reserves for is also sent to the
  provider (``max_tokens``) when the route sets none, so a well-behaved provider cannot spend past the reservation.

Call ids are deterministic: ``<agent>:<reply_id>:<cur_iter>:<n>``, with ``n`` (completed calls at that step) kept in
``AgentState.middle_context``, so a retried call and a resumed attempt map to the same id and are counted once.
"""

from __future__ import annotations

import copy
import math
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypedDict

from agentscope.middleware import MiddlewareBase, ReplyBudgetControlMiddleware
from agentscope.model import ChatResponse
from agentscope.state import AgentState
from pydantic import ValidationError

from tier2.errors import BadInput
from tier2.middleware._kwargs import ModelNext, ModelResult, StreamNext, compress_kwargs, model_call_kwargs
from tier2.settings.context import CONTEXT_STATE_KEY
from tier2.settings.loader import BudgetOverride, BudgetPolicy, Price
from tier2.store.budget import BudgetCaps, BudgetLedger
from tier2.store.keys import Keys
from tier2.store.spend import SpendGuard

__all__ = ["LedgerMiddleware", "LedgerState", "budget_caps", "build_budget_layer", "ledger_state", "soft_budget",
           "spend_guard_of"]

#: the ledger's slot in ``AgentState.middle_context`` (AgentScope's default key: the class name)
STATE_KEY = "LedgerMiddleware"


class LedgerState(TypedDict, total=False):
    """Per-run state of `LedgerMiddleware`: the step (``reply_id:cur_iter``) and the calls completed at it."""

    at: str
    n: int


def ledger_state(state: AgentState) -> LedgerState:
    slot: LedgerState = state.middle_context.setdefault(STATE_KEY, {})
    return slot


def bounded_model(model: Any, default_max: int) -> tuple[Any, int]:
    """The model to call and the output bound to reserve for: the route's ``max_tokens``, or ``default_max`` —
    sent to the provider on a per-call copy when the model's parameters have a ``max_tokens`` field left unset."""
    params = getattr(model, "parameters", None)
    if params is None or "max_tokens" not in getattr(type(params), "model_fields", {}):
        return model, default_max  # e.g. the offline policy: reports usage, has no output limit to set
    current = getattr(params, "max_tokens", None)
    if current:
        return model, int(current)
    clone = copy.copy(model)  # shares the client; only the parameters differ
    clone.parameters = params.model_copy(update={"max_tokens": default_max})
    return clone, default_max


class LedgerMiddleware(MiddlewareBase):
    """Hard budget: reserve → call → reconcile on the run's ledger. Per-run state lives in Redis and in
    ``agent.state.middle_context``; the instance holds only configuration."""

    def __init__(self, guard: SpendGuard, max_output_tokens: int, input_margin: float = 1.0) -> None:
        self.guard, self.max_output_tokens, self.input_margin = guard, max_output_tokens, input_margin

    async def get_middleware_key(self) -> str:
        return STATE_KEY

    def _call_id(self, agent: Any) -> tuple[str, LedgerState]:
        state = agent.state
        slot = ledger_state(state)
        at = f"{state.reply_id}:{state.cur_iter}"
        if slot.get("at") != at:
            slot["at"], slot["n"] = at, 0
        return f"{agent.name}:{at}:{slot['n']}", slot

    async def on_model_call(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ModelNext) -> ModelResult:
        kw = model_call_kwargs(input_kwargs)
        model, n_out = bounded_model(kw["current_model"], self.max_output_tokens)
        counted = await model.count_tokens(kw["messages"], kw.get("tools"))
        n_in = math.ceil(counted * self.input_margin)
        call_id, slot = self._call_id(agent)
        await self.guard.reserve(call_id, model.model, n_in, n_out)
        try:
            res = await next_handler(**{**input_kwargs, "current_model": model})
        except BaseException:
            await self.guard.release(call_id)  # nothing came back: the retry (same id) may reserve again
            raise
        if isinstance(res, AsyncGenerator):
            return self._metered(res, call_id, slot, model.model, (n_in, n_out))
        usage = getattr(res, "usage", None)
        await self._settle(call_id, slot, model.model, usage, (n_in, n_out))
        return res

    async def on_reply(self, agent: Any, input_kwargs: dict[str, Any], next_handler: StreamNext,
                       ) -> AsyncGenerator[Any, None]:
        """Reconciles run in the background during a turn; at its end the ledger is settled."""
        try:
            async for item in next_handler(**input_kwargs):
                yield item
        finally:
            await self.guard.flush()

    async def on_compress_context(self, agent: Any, input_kwargs: dict[str, Any],
                                  next_handler: Callable[..., Awaitable[None]]) -> None:
        """Context compression calls the model directly (``generate_structured_output``), outside
        ``on_model_call``: reserve when it is due, and record it (usage estimated: none is exposed) once it ran."""
        cfg = compress_kwargs(input_kwargs).get("context_config") or agent.context_config
        model = agent.model
        counted = await model.count_tokens(list(agent.state.context), None)
        n_in, n_out = math.ceil(counted * self.input_margin), self.max_output_tokens
        call_id = f"{agent.name}:{agent.state.reply_id}:{agent.state.cur_iter}:compress"
        due = counted >= cfg.trigger_ratio * model.context_size
        if due:
            await self.guard.reserve(call_id, model.model, n_in, n_out)
        before = copy.deepcopy(agent.state.summary)
        ours = _extractive_compressions(agent)
        try:
            await next_handler(**input_kwargs)
        except BaseException:
            if due:
                await self.guard.release(call_id)
            raise
        if agent.state.summary != before and _extractive_compressions(agent) == ours:
            # a summary was written by AgentScope's compression: the model was called (reserved or not); one
            # written by the context layer (`tier2.context`, its record advanced) is extractive: no model call
            await self.guard.reconcile(call_id, model.model, n_in, max(1, len(str(agent.state.summary)) // 4))
        elif due:
            await self.guard.release(call_id)

    async def _settle(self, call_id: str, slot: LedgerState, model: str, usage: Any,
                      estimate: tuple[int, int]) -> None:
        """Reconcile at the reported usage; without one, at the reservation (the worst case we allowed)."""
        n_in, n_out = (usage.input_tokens, usage.output_tokens) if usage is not None else estimate
        slot["n"] = int(slot.get("n", 0)) + 1
        self.guard.reconcile_later(call_id, model, int(n_in or 0), int(n_out or 0))

    async def _metered(self, stream: AsyncGenerator[ChatResponse, None], call_id: str, slot: LedgerState, model: str,
                       estimate: tuple[int, int]) -> AsyncGenerator[ChatResponse, None]:
        usage = None
        try:
            async for chunk in stream:
                if getattr(chunk, "is_last", False) and getattr(chunk, "usage", None) is not None:
                    usage = chunk.usage
                yield chunk
        finally:
            # a stream cut short was still a paid call: charge what it reported, else the reservation
            await self._settle(call_id, slot, model, usage, estimate)


def budget_caps(policy: BudgetPolicy, override: Mapping[str, Any] | None,
                ceiling: Mapping[str, Any] | None = None) -> BudgetCaps:
    """The run's caps: its own options (validated again: a stored bad budget fails the run with a reason, it never
    crashes a worker) over the hot-config defaults, each bounded by the tenant's ``ceiling`` when it has one."""
    try:
        own = BudgetOverride(**(override or {}))
        top = BudgetOverride(**(ceiling or {}))
    except ValidationError as exc:
        raise BadInput(f"bad budget option: {exc.errors()[0].get('loc')} {exc.errors()[0].get('msg')}") from exc
    except TypeError as exc:  # not a mapping
        raise BadInput(f"bad budget option: {exc}") from exc

    def capped(mine: Any, default: Any, limit: Any) -> Any:
        value = mine if mine is not None else default
        return limit if limit is not None and (value is None or value > limit) else value

    return BudgetCaps(usd=capped(own.usd, policy.usd, top.usd),
                      tokens=capped(own.tokens, policy.tokens, top.tokens),
                      deadline_s=capped(own.deadline_s, policy.deadline_s, top.deadline_s))


def soft_budget(caps: BudgetCaps, price: Price | None, policy: BudgetPolicy) -> ReplyBudgetControlMiddleware | None:
    """AgentScope's per-reply soft budget with weights from the price table, normalised by the dearer rate (so one
    weighted token costs what one token of the dearer kind costs); falls back to plain tokens for a token cap."""
    if policy.soft_ratio is None:
        return None
    if caps.usd is not None and price is not None and max(price.input_per_mtok, price.output_per_mtok) > 0:
        top = max(price.input_per_mtok, price.output_per_mtok)
        return ReplyBudgetControlMiddleware(token_budget=policy.soft_ratio * caps.usd * 1_000_000 / top,
                                            input_token_weight=price.input_per_mtok / top,
                                            output_token_weight=price.output_per_mtok / top)
    if caps.tokens is not None:
        return ReplyBudgetControlMiddleware(token_budget=policy.soft_ratio * caps.tokens)
    return None


def build_budget_layer(client: Any, keys: Keys, run_id: str, policy: BudgetPolicy, prices: Mapping[str, Price],
                       model: str, override: Mapping[str, Any] | None = None,
                       started_at: float | None = None,
                       ceiling: Mapping[str, Any] | None = None) -> list[MiddlewareBase]:
    """The budget slot for one agent of a run: [soft (if any), hard ledger]; every agent of the run shares the
    ledger through Redis (same run id → same keys). ``ceiling``: the tenant's budget ceiling (`runs.tenancy`)."""
    caps = budget_caps(policy, override, ceiling)
    guard = SpendGuard(BudgetLedger(client, keys, run_id, caps, started_at=started_at), prices, policy)
    soft = soft_budget(caps, prices.get(model), policy)
    hard = LedgerMiddleware(guard, policy.max_output_tokens, policy.input_margin)
    return [soft, hard] if soft is not None else [hard]


def spend_guard_of(layers: Sequence[MiddlewareBase]) -> SpendGuard | None:
    """The run ledger's guard inside a budget slot (for the L3 scorer and the final usage report)."""
    return next((m.guard for m in layers if isinstance(m, LedgerMiddleware)), None)


def _extractive_compressions(agent: Any) -> int:
    """How many compressions the context layer (`tier2.context`) made: they call no model."""
    slot = agent.state.middle_context.get(CONTEXT_STATE_KEY)
    return int(slot.get("seq", 0)) if isinstance(slot, dict) else 0
