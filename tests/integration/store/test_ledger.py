"""The run budget ledger against a real redis-server: reserve, refuse, reconcile, release, idempotency by call id,
first-touch caps, the wall-clock deadline, and fail-closed refusals (Redis down, unpriced model)."""

from __future__ import annotations

import socket
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from tier2.errors import RunLimitReached
from tier2.settings.loader import Price
from tier2.store.budget import BudgetCaps, BudgetLedger, LedgerUnavailable
from tier2.store.keys import Keys
from tier2.store.spend import SpendGuard, fmt_usd

pytestmark = pytest.mark.redis


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield r
    await r.aclose()


@pytest.fixture
def keys() -> Keys:
    return Keys(prefix=f"test-budget-{uuid.uuid4().hex[:8]}")


def _ledger(client: aioredis.Redis, keys: Keys, run: str = "r-1", **caps: float | None) -> BudgetLedger:
    return BudgetLedger(client, keys, run, BudgetCaps(**caps))  # type: ignore[arg-type]


async def test_reserve_refuses_past_the_cap_and_reconcile_frees_the_difference(client, keys) -> None:
    ledger = _ledger(client, keys, usd=1.0)
    assert (await ledger.reserve("a", 0.4, 10)).verdict == "ok"
    assert (await ledger.reserve("b", 0.4, 10)).verdict == "ok"
    refused = await ledger.reserve("c", 0.3, 10)             # 0.4 + 0.4 + 0.3 > 1.0
    assert refused.verdict == "usd" and not refused.ok
    assert refused.status.reserved_usd == pytest.approx(0.8) and refused.status.refused == 1
    verdict, status = await ledger.reconcile("a", 0.1, 5)     # "a" cost less than it held
    assert verdict == "ok" and status.spent_usd == pytest.approx(0.1) and status.reserved_usd == pytest.approx(0.4)
    assert (await ledger.reserve("c", 0.3, 10)).verdict == "ok"  # 0.1 + 0.4 + 0.3 <= 1.0
    assert (await ledger.reserve("d", 0.2 + 1e-9, 10)).verdict == "usd"  # one nano-USD past the cap
    assert (await ledger.reserve("e", 0.2, 10)).verdict == "ok"          # spent + reserved == cap exactly
    st = await ledger.status()
    assert st.spent_usd + st.reserved_usd == pytest.approx(1.0) and st.calls == 1


async def test_accounting_is_keyed_by_call_id(client, keys) -> None:
    ledger = _ledger(client, keys, usd=1.0, tokens=1000)
    assert (await ledger.reserve("x", 0.3, 100)).verdict == "ok"
    again = await ledger.reserve("x", 0.3, 100)                # a retry of the same call: nothing added
    assert again.verdict == "held" and again.ok and again.status.reserved_usd == pytest.approx(0.3)
    assert (await ledger.reconcile("x", 0.2, 80))[0] == "ok"
    verdict, status = await ledger.reconcile("x", 0.2, 80)     # a duplicate reconcile: nothing added
    assert verdict == "duplicate" and status.spent_usd == pytest.approx(0.2) and status.calls == 1
    resumed = await ledger.reserve("x", 0.3, 100)              # a resumed attempt of a call already paid for
    assert resumed.verdict == "spent" and resumed.ok and resumed.status.reserved_usd == 0
    assert status.spent_tokens == 80 and status.reserved_tokens == 0


async def test_a_reconcile_without_reservation_is_recorded(client, keys) -> None:
    ledger = _ledger(client, keys, usd=1.0)
    verdict, status = await ledger.reconcile("after-the-fact", 0.25, 40)
    assert verdict == "unreserved" and status.spent_usd == pytest.approx(0.25) and status.calls == 1
    assert (await ledger.reserve("next", 0.8, 1)).verdict == "usd"


async def test_release_frees_a_failed_call_and_the_retry_may_reserve_again(client, keys) -> None:
    ledger = _ledger(client, keys, usd=0.5)
    assert (await ledger.reserve("c1", 0.5, 100)).verdict == "ok"
    assert (await ledger.reserve("c2", 0.1, 1)).verdict == "usd"
    status = await ledger.release("c1")
    assert status.reserved_usd == 0 and status.reserved_tokens == 0 and status.spent_usd == 0
    assert (await ledger.release("c1")).reserved_usd == 0      # twice: no-op, never negative
    assert (await ledger.reserve("c1", 0.5, 100)).verdict == "ok"  # the retry under the same id
    assert (await ledger.status()).reserved_usd == pytest.approx(0.5)


async def test_token_cap(client, keys) -> None:
    ledger = _ledger(client, keys, tokens=1000)
    assert (await ledger.reserve("a", 0.0, 600)).verdict == "ok"
    assert (await ledger.reserve("b", 0.0, 500)).verdict == "tokens"
    await ledger.reconcile("a", 0.0, 450)
    assert (await ledger.reserve("b", 0.0, 550)).verdict == "ok"


async def test_caps_and_start_are_written_once_for_every_agent_of_the_run(client, keys) -> None:
    first = _ledger(client, keys, usd=0.3, deadline_s=60)
    await first.reserve("a", 0.1, 1)
    other = BudgetLedger(client, keys, "r-1", BudgetCaps(usd=5.0), started_at=first.started_at + 500)
    st = await other.status()                                  # another agent (or a resumed attempt) of the run
    assert st.cap_usd == pytest.approx(0.3) and st.deadline_s == 60
    assert (await other.reserve("b", 0.25, 1)).verdict == "usd"
    assert other.deadline_at() == pytest.approx(first.started_at + 60, abs=0.002)  # the recorded start, not its own
    separate = _ledger(client, keys, run="r-2", usd=0.3)        # another run has its own ledger
    assert (await separate.reserve("b", 0.25, 1)).verdict == "ok"


async def test_the_deadline_refuses_once_the_run_is_older_than_it(client, keys) -> None:
    now = [1_000_000.0]
    ledger = BudgetLedger(client, keys, "r-1", BudgetCaps(usd=1.0, deadline_s=30), clock=lambda: now[0])
    assert (await ledger.reserve("a", 0.01, 1)).verdict == "ok"
    now[0] += 31
    res = await ledger.reserve("b", 0.01, 1)
    assert res.verdict == "deadline" and res.status.elapsed_s == pytest.approx(31, abs=0.01)
    guard = SpendGuard(ledger, {"m": Price(input_per_mtok=1, output_per_mtok=1)})
    with pytest.raises(RunLimitReached) as exc:
        await guard.reserve("c", "m", 10, 10)
    assert exc.value.limit == "deadline" and str(exc.value) == "deadline: 30 s wall clock, 0 calls, 0 USD spent"


async def test_refusal_message_matches_the_issue_format(client, keys) -> None:
    price = {"m": Price(input_per_mtok=1.0, output_per_mtok=1.0)}   # 1 token = 1e-6 USD
    guard = SpendGuard(_ledger(client, keys, usd=0.41), price)
    per_call = [23_000] * 16 + [30_000]                             # 17 calls, 398 000 tokens = 0.398 USD
    for i, tokens in enumerate(per_call):
        await guard.reserve(f"c{i}", "m", tokens, 0)
        await guard.reconcile(f"c{i}", "m", tokens, 0)
    with pytest.raises(RunLimitReached) as exc:
        await guard.reserve("c17", "m", 10_000, 4_096)               # 0.014 more would pass 0.41
    assert str(exc.value) == "budget: 0.41 USD cap, 17 calls, 0.398 spent"
    assert exc.value.limit == "budget"
    with pytest.raises(RunLimitReached) as tok:
        await SpendGuard(_ledger(client, keys, run="r-t", tokens=100), price).reserve("t", "m", 90, 20)
    assert str(tok.value) == "budget: 100 tokens cap, 0 calls, 0 spent"


async def test_an_overrun_is_recorded_truthfully(client, keys) -> None:
    ledger = _ledger(client, keys, usd=1.0)
    await ledger.reserve("a", 0.1, 10)
    _, status = await ledger.reconcile("a", 0.15, 12)             # the provider reported more than was held
    assert status.spent_usd == pytest.approx(0.15) and status.overrun_usd == pytest.approx(0.05)


async def test_an_unpriced_model_is_refused_while_a_usd_cap_applies(client, keys) -> None:
    guard = SpendGuard(_ledger(client, keys, usd=1.0), {"known": Price(input_per_mtok=1, output_per_mtok=1)})
    with pytest.raises(RunLimitReached) as exc:
        await guard.reserve("a", "mystery-model", 10, 10)
    assert exc.value.limit == "budget" and "no price for model 'mystery-model'" in str(exc.value)
    assert (await guard.ledger.status()).reserved_usd == 0
    tokens_only = SpendGuard(_ledger(client, keys, run="r-2", tokens=100), {})
    await tokens_only.reserve("a", "mystery-model", 10, 10)          # no USD cap: a price is not needed
    assert (await tokens_only.ledger.status()).reserved_tokens == 20


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_an_unreachable_ledger_fails_closed(keys) -> None:
    down = aioredis.Redis(host="127.0.0.1", port=_closed_port(), socket_connect_timeout=1, decode_responses=True,
                          retry=Retry(NoBackoff(), 0))  # fail fast: the production client retries first, same end
    try:
        ledger = _ledger(down, keys, usd=1.0)
        with pytest.raises(LedgerUnavailable):
            await ledger.reserve("a", 0.1, 1)
        guard = SpendGuard(ledger, {"m": Price(input_per_mtok=1, output_per_mtok=1)})
        with pytest.raises(RunLimitReached) as exc:
            await guard.reserve("a", "m", 1, 1)
        assert exc.value.limit == "budget" and "ledger unreachable" in str(exc.value)
        with pytest.raises(RunLimitReached):
            await guard.reconcile("a", "m", 1, 1)                      # a spend that cannot be recorded stops too
        await guard.release("a")                                      # never raises
        assert "error" in await guard.report()
    finally:
        await down.aclose()


def test_usd_formatting() -> None:
    assert [fmt_usd(x) for x in (0.398, 0.5, 0.0, 1e-7, 12.0)] == ["0.398", "0.5", "0", "0.0000001", "12"]
