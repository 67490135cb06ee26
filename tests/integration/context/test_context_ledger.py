"""The context layer in the onion on a real redis-server: an extractive compression the layer did itself reserves no
model call in the budget ledger (split from tests/unit/context/test_context_layer.py, which keeps the pure units)."""

from __future__ import annotations

import uuid

import pytest
import redis.asyncio as aioredis
from agentscope.agent import Agent, ContextConfig, ReActConfig
from agentscope.message import UserMsg
from agentscope.tool import Toolkit

from tests.unit.context.test_context_layer import POLICY, _Chatty, _Note
from tier2.context import ContextMiddleware, context_record
from tier2.middleware.budget import build_budget_layer, spend_guard_of
from tier2.settings.loader import BudgetPolicy, Price
from tier2.store.keys import Keys

pytestmark = pytest.mark.redis


async def test_the_budget_ledger_counts_no_model_call_for_an_extractive_compression(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        keys, model = Keys(prefix=f"t-{uuid.uuid4().hex[:8]}"), _Chatty(context_size=4_000)  # AgentScope: due
        budget = build_budget_layer(client, keys, "r-x", BudgetPolicy(usd=5.0, soft_ratio=None, max_output_tokens=100,
                                                                       input_margin=1.0),
                                    {"scripted-chatty": Price(input_per_mtok=1.0, output_per_mtok=1.0)},
                                    "scripted-chatty")
        layer = ContextMiddleware(POLICY, role="writer")
        agent = Agent(name="writer", system_prompt="You talk.", model=model, toolkit=Toolkit(tools=[_Note()]),
                      middlewares=[*budget, layer], react_config=ReActConfig(max_iters=60),
                      context_config=ContextConfig(trigger_ratio=0.5, reserve_ratio=0.1))
        await agent.reply(UserMsg("user", "talk"))
        assert context_record(agent.state)["seq"] >= 3 and model.compressions == 0
        entries = await client.hgetall(keys.run_budget_calls("r-x"))
        assert not [k for k in entries if k.endswith(":compress")]  # reserved when due, then released: no call
        st = await spend_guard_of(budget).ledger.status()
        assert st.calls == len(model.calls) and st.reserved_usd == 0
    finally:
        await client.aclose()
