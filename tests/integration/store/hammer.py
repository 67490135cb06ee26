"""Hammer one run ledger with random reserve / reconcile / release / duplicate traffic (seeded).

Used in-process by ``test_ledger_concurrency.py`` and as a separate process:
``python hammer.py REDIS_URL PREFIX RUN_ID CAP_USD SEED TASKS ROUNDS`` prints the JSON totals it recorded.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from pathlib import Path

import redis.asyncio as aioredis

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tier2.store.budget import BudgetCaps, BudgetLedger, to_nano  # noqa: E402
from tier2.store.keys import Keys  # noqa: E402


async def _task(ledger: BudgetLedger, tag: str, rng: random.Random, rounds: int) -> dict[str, int]:
    out = {"spent_nusd": 0, "spent_tokens": 0, "calls": 0, "refused": 0}
    for i in range(rounds):
        call = f"{tag}-{i}"
        usd, tokens = rng.uniform(0.001, 0.06), rng.randint(1, 5000)
        res = await ledger.reserve(call, usd, tokens)
        if not res.ok:
            out["refused"] += 1
            continue
        if rng.random() < 0.2:
            assert (await ledger.reserve(call, usd, tokens)).verdict == "held"  # a retry adds nothing
        await asyncio.sleep(0)
        if rng.random() < 0.15:
            await ledger.release(call)  # the call failed before spending
            continue
        actual, used = usd * rng.random(), rng.randint(0, tokens)  # never more than was held
        verdict, _ = await ledger.reconcile(call, actual, used)
        assert verdict == "ok", verdict
        if rng.random() < 0.2:
            assert (await ledger.reconcile(call, actual, used))[0] == "duplicate"
        out["spent_nusd"] += to_nano(actual)
        out["spent_tokens"] += used
        out["calls"] += 1
    return out


async def hammer(url: str, prefix: str, run_id: str, cap_usd: float, seed: int, tasks: int,
                 rounds: int) -> dict[str, int]:
    client = aioredis.Redis.from_url(url, decode_responses=True, max_connections=64)
    try:
        ledger = BudgetLedger(client, Keys(prefix=prefix), run_id, BudgetCaps(usd=cap_usd))
        parts = await asyncio.gather(*[_task(ledger, f"s{seed}-t{t}", random.Random(seed * 1000 + t), rounds)
                                       for t in range(tasks)])
    finally:
        await client.aclose()
    return {k: sum(p[k] for p in parts) for k in parts[0]}


if __name__ == "__main__":
    url, prefix, run_id, cap, seed, tasks, rounds = sys.argv[1:8]
    print(json.dumps(asyncio.run(hammer(url, prefix, run_id, float(cap), int(seed), int(tasks), int(rounds)))))
