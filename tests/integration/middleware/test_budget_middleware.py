"""The budget slot on real AgentScope agents and a real Redis ledger; only the model is scripted.

The scripted model over-spends: it never stops calling tools and every call reports the largest usage the
reservation allowed (its whole input and ``max_tokens`` of output), so agents run until the ledger stops them.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from agentscope.agent import Agent, ModelConfig, ReActConfig
from agentscope.credential import OpenAICredential
from agentscope.message import Msg, TextBlock, ToolCallBlock, UserMsg
from agentscope.model import ChatModelBase, ChatResponse, ChatUsage, OpenAIChatModel
from agentscope.tool import Toolkit
from pydantic import BaseModel

from tier2.errors import BadInput, RunLimitReached
from tier2.middleware.budget import (
    LedgerMiddleware,
    bounded_model,
    budget_caps,
    build_budget_layer,
    soft_budget,
    spend_guard_of,
)
from tier2.models.offline import OfflineCredential
from tier2.settings.loader import BudgetPolicy, Price
from tier2.store.budget import BudgetCaps
from tier2.store.keys import Keys
from tier2.testing import ScriptedChatModel

pytestmark = pytest.mark.redis
MODEL = "scripted-spender"
PRICES = {MODEL: Price(input_per_mtok=2.0, output_per_mtok=8.0)}


class OverSpender(ScriptedChatModel):
    """Calls a tool forever; reports its whole prompt (bytes/4, as estimated) and ``max_tokens`` of output."""

    class Parameters(BaseModel):
        max_tokens: int | None = None

    def __init__(self, stream: bool = False, fail_first: int = 0, final_after: int | None = None,
                 context_size: int = 10_000_000) -> None:
        super().__init__(self.spend, model=MODEL, stream=stream, context_size=context_size,
                         parameters=self.Parameters(), credential=OfflineCredential(name="t"))
        self.log: list[tuple[int, int]] = []  # shared with per-call copies: every call that really happened
        self.failures = [fail_first]
        self.final_after = final_after
        self.obedient = False  # True: honours tool_choice=none (the soft budget's wrap-up)

    async def _call_api(self, model_name: str, messages: list[Msg], tools: list[dict] | None = None,
                        tool_choice: Any = None, **kwargs: Any) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        if self.failures[0] > 0:
            self.failures[0] -= 1
            raise ConnectionError("scripted outage")
        return await super()._call_api(model_name, messages, tools, tool_choice, **kwargs)

    def spend(self, messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        """The derived script: one more tool call, until ``final_after`` calls or an obeyed wrap-up."""
        call = self.calls[-1]
        done = self.final_after is not None and len(self.log) >= self.final_after  # this call is logged next
        done = done or (self.obedient and getattr(call.tool_choice, "mode", None) == "none")
        return [TextBlock(text="done")] if done else [
            TextBlock(text="more"), ToolCallBlock(id=f"c{uuid.uuid4().hex[:8]}", name="Nothing", input="{}")]

    async def stream_blocks(self, blocks: Any, usage: ChatUsage) -> AsyncGenerator[ChatResponse, None]:
        yield ChatResponse(content=[TextBlock(id=blocks[0].id, text="mo")], is_last=False)  # one partial chunk
        yield ChatResponse(content=blocks, is_last=True, usage=usage)

    async def usage_of(self, messages: list[Msg], tools: list[dict] | None, blocks: Any) -> ChatUsage:
        usage = ChatUsage(input_tokens=await self.count_tokens(messages, tools),
                          output_tokens=self.parameters.max_tokens or 1_000_000, time=0.0)
        self.log.append((usage.input_tokens, usage.output_tokens))  # compressions too
        return usage


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield r
    await r.aclose()


def _agent(name: str, model: ChatModelBase, middlewares: list, max_iters: int = 200, retries: int = 0) -> Agent:
    return Agent(name=name, system_prompt="You spend.", model=model, toolkit=Toolkit(), middlewares=middlewares,
                 react_config=ReActConfig(max_iters=max_iters), model_config=ModelConfig(max_retries=retries))


def _policy(**kw: Any) -> BudgetPolicy:
    return BudgetPolicy(**{"max_output_tokens": 2000, "input_margin": 1.0, **kw})


async def test_parallel_agents_stop_exactly_at_the_cap_with_zero_overshoot(client) -> None:
    keys, run, cap = Keys(prefix=f"test-mw-{uuid.uuid4().hex[:8]}"), "r-par", 0.25
    policy = _policy(usd=cap)
    models = [OverSpender(stream=i % 2 == 0) for i in range(4)]
    agents = [_agent(f"agent{i}", m, build_budget_layer(client, keys, run, policy, PRICES, MODEL))
              for i, m in enumerate(models)]
    results = await asyncio.gather(*[a.reply(UserMsg("user", "spend")) for a in agents], return_exceptions=True)
    assert all(isinstance(r, RunLimitReached) and r.limit == "budget" for r in results), results
    guard = spend_guard_of(agents[0]._model_call_middlewares)
    st = await guard.ledger.status()
    made = [call for m in models for call in m.log]
    biggest = max(PRICES[MODEL].cost(i, o) for i, o in made)
    assert st.spent_usd <= cap and st.peak_usd <= cap and st.overrun_usd == 0   # zero overshoot
    assert cap - st.spent_usd < 2 * biggest                  # it stopped at the cap, not long before it
    assert st.reserved_usd == 0 and st.calls == len(made) > 4  # every call that happened is accounted, once
    assert st.spent_usd == pytest.approx(sum(PRICES[MODEL].cost(i, o) for i, o in made), abs=1e-8)
    assert all(out == 2000 for _, out in made)               # the reserved output bound reached the model
    assert all(str(r).startswith("budget: 0.25 USD cap, ") for r in results)
    # each refusal names the ledger as it stood then (later calls may still have been in flight)
    seen = [re.match(r"budget: 0\.25 USD cap, (\d+) calls, ([\d.]+) spent", str(r)) for r in results]
    assert all(m is not None and int(m[1]) <= st.calls and float(m[2]) <= st.spent_usd + 1e-9 for m in seen)


async def test_a_streamed_response_is_reconciled_when_the_stream_ends(client) -> None:
    keys = Keys(prefix=f"test-mw-{uuid.uuid4().hex[:8]}")
    model = OverSpender(stream=True, final_after=2)
    layer = build_budget_layer(client, keys, "r-s", _policy(usd=5.0, soft_ratio=None), PRICES, MODEL)
    assert [type(m) for m in layer] == [LedgerMiddleware]
    agent = _agent("writer", model, layer)
    await agent.reply(UserMsg("user", "spend a little"))
    st = await spend_guard_of(layer).ledger.status()
    assert st.calls == len(model.log) == 3 and st.reserved_usd == 0
    assert st.spent_usd == pytest.approx(sum(PRICES[MODEL].cost(i, o) for i, o in model.log), abs=1e-8)
    ids = sorted(await client.hkeys(keys.run_budget_calls("r-s")))
    reply_id = agent.state.reply_id
    assert ids == [f"writer:{reply_id}:{i}:0" for i in range(3)]  # agent:reply:iteration:n, deterministic


async def test_a_failed_call_releases_and_its_retry_reuses_the_call_id(client) -> None:
    keys = Keys(prefix=f"test-mw-{uuid.uuid4().hex[:8]}")
    model = OverSpender(fail_first=1, final_after=0)
    layer = build_budget_layer(client, keys, "r-retry", _policy(usd=5.0), PRICES, MODEL)
    await _agent("writer", model, layer, retries=1).reply(UserMsg("user", "go"))
    st = await spend_guard_of(layer).ledger.status()
    assert len(model.log) == 1 and st.calls == 1 and st.reserved_usd == 0   # the outage cost nothing
    entries = await client.hgetall(keys.run_budget_calls("r-retry"))
    assert len(entries) == 1 and next(iter(entries.values())).startswith("s:")


async def test_a_resumed_attempt_of_a_paid_call_is_not_counted_twice(client) -> None:
    keys = Keys(prefix=f"test-mw-{uuid.uuid4().hex[:8]}")
    mw = build_budget_layer(client, keys, "r-resume", _policy(usd=5.0, soft_ratio=None), PRICES, MODEL)[0]
    assert isinstance(mw, LedgerMiddleware)
    model = OverSpender()
    first = _agent("writer", model, [mw])
    saved = first.state.model_dump_json()        # the checkpoint: taken before the call was reconciled

    async def call(agent: Agent) -> None:
        async def next_handler(**kw: Any) -> ChatResponse:
            return await kw["current_model"](messages=kw["messages"], tools=kw["tools"])
        await mw.on_model_call(agent, {"current_model": model, "messages": [UserMsg("user", "hi")], "tools": [],
                                       "tool_choice": None}, next_handler)

    await call(first)
    resumed = _agent("writer", model, [mw])
    resumed.state = type(first.state).model_validate_json(saved)  # a new attempt restored from that checkpoint
    await call(resumed)
    await mw.guard.flush()                                         # reconciles land in the background
    st = await mw.guard.ledger.status()
    assert len(model.log) == 2 and st.calls == 1                  # the repeat maps to the same call id
    assert st.spent_usd == pytest.approx(PRICES[MODEL].cost(*model.log[0]), abs=1e-9)
    await call(resumed)                                            # the next call of that step is a new id
    await mw.guard.flush()
    assert (await mw.guard.ledger.status()).calls == 2


async def test_an_unpriced_model_is_never_called(client) -> None:
    keys = Keys(prefix=f"test-mw-{uuid.uuid4().hex[:8]}")
    model = OverSpender()
    layer = build_budget_layer(client, keys, "r-unpriced", _policy(usd=5.0), {}, MODEL)
    with pytest.raises(RunLimitReached) as exc:
        await _agent("writer", model, layer).reply(UserMsg("user", "go"))
    assert "no price for model 'scripted-spender'" in str(exc.value) and model.log == []


def test_the_output_bound_is_sent_to_openai_compatible_models() -> None:
    cred = OpenAICredential(name="t", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    free = OpenAIChatModel(credential=cred, model="m", parameters=OpenAIChatModel.Parameters())
    bounded, n = bounded_model(free, 4096)
    assert n == 4096 and bounded is not free and bounded.parameters.max_tokens == 4096
    assert free.parameters.max_tokens is None                      # the route's model is left as it was
    own = OpenAIChatModel(credential=cred, model="m", parameters=OpenAIChatModel.Parameters(max_tokens=300))
    assert bounded_model(own, 4096) == (own, 300)                  # the route's own bound is what we reserve


def test_soft_budget_weights_come_from_the_price_table() -> None:
    soft = soft_budget(BudgetCaps(usd=0.5), Price(input_per_mtok=2.0, output_per_mtok=8.0), _policy(soft_ratio=0.8))
    assert soft is not None
    assert (soft.input_token_weight, soft.output_token_weight) == (0.25, 1.0)
    # weighted tokens x the dearer rate = USD: the wrap-up hint comes at 80 % of the cap
    assert soft.token_budget * 8.0 / 1_000_000 == pytest.approx(0.4)
    tokens = soft_budget(BudgetCaps(tokens=1000), None, _policy(soft_ratio=0.5))
    assert tokens is not None and tokens.token_budget == 500
    assert soft_budget(BudgetCaps(usd=1.0), Price(input_per_mtok=0, output_per_mtok=0), _policy()) is None
    assert soft_budget(BudgetCaps(usd=1.0), PRICES[MODEL], _policy(soft_ratio=None)) is None


def test_run_options_override_the_hot_config_defaults() -> None:
    policy = BudgetPolicy(usd=0.5, tokens=None, deadline_s=900)
    assert budget_caps(policy, None) == BudgetCaps(usd=0.5, tokens=None, deadline_s=900)
    assert budget_caps(policy, {"usd": 0.1, "tokens": 5000}) == BudgetCaps(usd=0.1, tokens=5000, deadline_s=900)
    for bad in ({"usd": 0}, {"tokens": -1}, {"deadline_s": 0}, {"dollars": 1}):
        with pytest.raises(BadInput):
            budget_caps(policy, bad)
    assert json.dumps(budget_caps(policy, {}).__dict__)  # plain values only


async def test_context_compression_is_a_model_call_on_the_ledger_too(client) -> None:
    keys = Keys(prefix=f"test-mw-{uuid.uuid4().hex[:8]}")
    model = OverSpender(final_after=6, context_size=120)          # a tiny window: compression is due soon
    layer = build_budget_layer(client, keys, "r-c", _policy(usd=5.0, soft_ratio=None), PRICES, MODEL)
    await _agent("writer", model, layer).reply(UserMsg("user", "spend and summarise"))
    entries = await client.hgetall(keys.run_budget_calls("r-c"))
    compress = {k: v for k, v in entries.items() if k.endswith(":compress")}
    assert model.compressions >= 1 and len(compress) == model.compressions
    assert all(v.startswith("s:") for v in entries.values())     # every call reconciled, none left held
    st = await spend_guard_of(layer).ledger.status()
    assert st.calls == len(model.log) and st.reserved_usd == 0   # model calls and compressions, each once


async def test_the_soft_budget_asks_an_obedient_agent_to_wrap_up_before_the_hard_cap(client) -> None:
    keys, cap = Keys(prefix=f"test-mw-{uuid.uuid4().hex[:8]}"), 0.25
    model = OverSpender()
    model.obedient = True
    layer = build_budget_layer(client, keys, "r-soft", _policy(usd=cap, soft_ratio=0.5), PRICES, MODEL)
    reply = await _agent("writer", model, layer).reply(UserMsg("user", "spend"))
    st = await spend_guard_of(layer).ledger.status()
    assert reply.get_text_content() == "done" and st.refused == 0      # it wrapped up; nothing was refused
    assert 0.5 * cap <= st.spent_usd < cap                              # after the soft share, before the cap
