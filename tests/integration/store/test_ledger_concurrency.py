"""Property-style: under concurrent traffic from many tasks and several processes (seeded random sizes, retries,
releases, duplicate reconciles), reserved + spent never passes the cap, and every recorded spend adds up exactly."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from tier2.store.budget import NANO, BudgetCaps, BudgetLedger
from tier2.store.keys import Keys

pytestmark = [pytest.mark.redis, pytest.mark.slow]  # hammer.py runs as separate processes too
HERE = Path(__file__).parent

_spec = importlib.util.spec_from_file_location("budget_hammer", HERE / "hammer.py")
assert _spec is not None and _spec.loader is not None
hammer_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hammer_mod)


async def _watch(ledger: BudgetLedger, cap_nusd: int, stop: asyncio.Event, seen: list[int]) -> None:
    """Sample the ledger while the traffic runs: every snapshot must be within the cap."""
    while not stop.is_set():
        st = await ledger.status()
        level = round((st.spent_usd + st.reserved_usd) * NANO)
        seen.append(level)
        assert level <= cap_nusd, f"spent {st.spent_usd} + reserved {st.reserved_usd} passed the cap"
        await asyncio.sleep(0)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_concurrent_tasks_never_pass_the_cap(redis_url: str, seed: int) -> None:
    prefix, cap = f"test-hammer-{uuid.uuid4().hex[:8]}", 0.75
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    ledger = BudgetLedger(client, Keys(prefix=prefix), "r-x", BudgetCaps(usd=cap))
    stop, seen = asyncio.Event(), []
    watcher = asyncio.create_task(_watch(ledger, round(cap * NANO), stop, seen))
    try:
        totals = await hammer_mod.hammer(redis_url, prefix, "r-x", cap, seed, tasks=24, rounds=25)
    finally:
        stop.set()
        await watcher
    st = await ledger.status()
    await client.aclose()
    assert st.reserved_usd == 0 and st.reserved_tokens == 0               # every reservation settled
    assert round(st.spent_usd * NANO) == totals["spent_nusd"]             # exact: no double count, no loss
    assert st.spent_tokens == totals["spent_tokens"] and st.calls == totals["calls"]
    assert st.peak_usd <= cap and st.spent_usd <= cap and st.overrun_usd == 0
    assert totals["refused"] > 0 and len(seen) > 10                       # the cap was actually contended


async def test_several_processes_share_one_ledger_without_passing_the_cap(redis_url: str) -> None:
    prefix, cap = f"test-hammer-{uuid.uuid4().hex[:8]}", 1.5
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    ledger = BudgetLedger(client, Keys(prefix=prefix), "r-p", BudgetCaps(usd=cap))
    procs = [await asyncio.create_subprocess_exec(
        sys.executable, str(HERE / "hammer.py"), redis_url, prefix, "r-p", str(cap), str(seed), "12", "25",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE) for seed in (11, 12, 13)]
    stop, seen = asyncio.Event(), []
    watcher = asyncio.create_task(_watch(ledger, round(cap * NANO), stop, seen))
    try:
        local = await hammer_mod.hammer(redis_url, prefix, "r-p", cap, 10, tasks=12, rounds=25)
        outputs = [await p.communicate() for p in procs]
    finally:
        stop.set()
        await watcher
    for p, (_out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err.decode()[-2000:]
    parts = [local] + [json.loads(out) for out, _ in outputs]
    st = await ledger.status()
    await client.aclose()
    assert st.reserved_usd == 0
    assert round(st.spent_usd * NANO) == sum(p["spent_nusd"] for p in parts)
    assert st.calls == sum(p["calls"] for p in parts)
    assert st.peak_usd <= cap and st.spent_usd <= cap
    assert sum(p["refused"] for p in parts) > 0
