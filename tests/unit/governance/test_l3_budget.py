"""The L3 model scorer spends on the run's ledger like an agent: reserved before, reconciled after, and a refusal
only degrades L3 to the heuristic (L3 never stops a run)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from PIL import Image

from tier2.settings.loader import BudgetPolicy, ModelRoute, Price
from tier2.store.budget import BudgetCaps, BudgetLedger
from tier2.store.keys import Keys
from tier2.store.spend import SpendGuard
from tier2.testing import FakeOpenAIServer, Reply
from tier2.validators.l3.visual import HEURISTIC_SCORER, score_visual

pytestmark = pytest.mark.redis
VERDICT = '{"looks_finished": 7, "matches_brief": 6, "degraded": false, "notes": "ok"}'
PRICES = {"vision-model": Price(input_per_mtok=2.0, output_per_mtok=8.0)}


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield r
    await r.aclose()


@pytest.fixture
def shot(tmp_path: Path) -> Path:
    path = tmp_path / "shot.png"
    Image.new("RGB", (64, 48), (30, 120, 200)).save(path)
    return path


def _guard(client: aioredis.Redis, usd: float) -> SpendGuard:
    ledger = BudgetLedger(client, Keys(prefix=f"test-l3-{uuid.uuid4().hex[:8]}"), "r-l3", BudgetCaps(usd=usd))
    return SpendGuard(ledger, PRICES, BudgetPolicy(max_output_tokens=500))


async def test_the_scorer_call_is_reserved_and_reconciled_on_the_run_ledger(client, shot) -> None:
    guard = _guard(client, 1.0)
    with FakeOpenAIServer(lambda body: Reply(text=VERDICT, usage=(1200, 40))) as srv:
        route = ModelRoute(kind="openai", model="vision-model", base_url=srv.base_url)
        result = await score_visual([shot], "a potion shop", ("vision", route), timeout_s=10, guard=guard)
        assert srv.requests[0]["max_tokens"] == 500                # the reserved output bound is sent
    assert result.evidence["scorer"] == "vision (vision-model)"
    st = await guard.ledger.status()
    assert st.calls == 1 and st.reserved_usd == 0
    assert st.spent_usd == pytest.approx(PRICES["vision-model"].cost(1200, 40), abs=1e-9)


async def test_a_refused_scorer_call_degrades_to_the_heuristic(client, shot) -> None:
    guard = _guard(client, 0.001)                                  # less than one scorer call
    with FakeOpenAIServer(lambda body: Reply(text=VERDICT)) as srv:
        route = ModelRoute(kind="openai", model="vision-model", base_url=srv.base_url)
        result = await score_visual([shot], "a potion shop", ("vision", route), timeout_s=10, guard=guard)
        assert srv.requests == []                                  # refused before any request
    assert result.evidence["scorer"] == HEURISTIC_SCORER
    assert "budget: 0.001 USD cap, 0 calls, 0 spent" in result.findings[0].message
    assert (await guard.ledger.status()).refused == 1
