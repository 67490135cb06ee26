"""A real `Worker` on a real redis-server takes runs fairly across tenants: tenant A submits 10 runs, then
tenant B one; with one worker, B's run starts before A's third. The run itself is a scripted trivial run."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import redis.asyncio as aioredis

from tier2.events import RunFinished
from tier2.runs.process import worker as worker_mod
from tier2.runs.process.worker import Worker
from tier2.settings.loader import Policy, SecurityConfig
from tier2.settings.tenants import TenantsConfig
from tier2.store.keys import Keys
from tier2.store.quotas import QuotaStore
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis


@pytest.fixture
async def store(redis_url: str):
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"t-{uuid.uuid4().hex[:8]}"))
    yield s
    await s.close()


async def test_one_worker_starts_b_before_as_third_run(store: RunStore, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    started: list[str] = []

    async def trivial_run(rt: Any, req: Any) -> Any:  # a scripted run: starts, ends delivered
        started.append(req.run_id)
        await rt.store.update_run(req.run_id, req.fence, status="delivered")
        await rt.store.append_event(RunFinished(run_id=req.run_id, status="delivered", stop_reason="ok"), req.fence)
        return SimpleNamespace(agent_state=None)

    monkeypatch.setattr(worker_mod, "execute_run", trivial_run)
    for i in range(10):
        await store.accept_run(f"a-{i}", {"status": "queued", "brief": "x", "tenant": "a"}, project_id=f"pa{i}",
                               dispatch=True, tenant="a")
    await store.accept_run("b-0", {"status": "queued", "brief": "x", "tenant": "b"}, project_id="pb",
                           dispatch=True, tenant="b")
    security = SecurityConfig(tenants=TenantsConfig(default={"max_running": 1}))
    rt = SimpleNamespace(store=store, security=security, settings=SimpleNamespace(workspaces=tmp_path),
                         policies=SimpleNamespace(snapshot=lambda: Policy(), refused=None))
    worker = Worker(rt, "w1", concurrency=1, block_ms=100)  # type: ignore[arg-type]
    stop = asyncio.Event()
    serving = asyncio.create_task(worker.serve(stop))
    for _ in range(200):
        if len(started) == 11:
            break
        await asyncio.sleep(0.05)
    stop.set()
    await serving
    assert len(started) == 11, started
    assert started.index("b-0") < started.index("a-2"), started
    assert [r for r in started if r.startswith("a-")] == [f"a-{i}" for i in range(10)]
    quotas = QuotaStore(store.r, store.keys)
    assert (await quotas.running("a"), await quotas.active("a")) == (0, 0)   # every counter healed
