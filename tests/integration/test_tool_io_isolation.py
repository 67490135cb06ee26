"""One tenant's stuck tool I/O stalls nobody else (issue #21 H1): the agents' file tools run on their own bounded
executor (`tier2.tools.project_io.TOOL_IO`), never the one HTTP routes use, and a FIFO never blocks a read.

The audit: ``mkfifo`` in the project, then 8 parallel Reads — the 6 threads of the default executor blocked in
``open()``, and other tenants' uploads and design/report routes timed out until a restart."""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aioredis
from agentscope.message import ToolResultState
from agentscope.tool import Read

from tests.integration.routes_helpers import TWO_TENANTS, routes_client
from tier2.store.keys import Keys
from tier2.store.run_store import RunStore
from tier2.tools.project_io import TOOL_IO, TOOL_IO_THREADS, ProjectFiles

pytestmark = pytest.mark.redis
B = {"Authorization": "Bearer key-of-tenant-b-0002"}


@pytest.fixture
async def service(redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  ) -> AsyncIterator[tuple[httpx.AsyncClient, Path, Path]]:
    a_project, b_project = tmp_path / "ws" / "game-a", tmp_path / "ws" / "game-b"
    (b_project / "docs" / "design").mkdir(parents=True)
    (b_project / "docs" / "design" / "GDD.md").write_text("# Tenant B's game\n")
    a_project.mkdir(parents=True)
    store = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True),
                     Keys(prefix=f"io-{uuid.uuid4().hex[:8]}"))
    await store.accept_run("r-b1", {"status": "running", "brief": "a bakery", "tenant": "tenant-b",
                                    "project_id": "game-b", "thread_id": "t-b1", "project_dir": str(b_project)},
                           project_id="game-b", dispatch=False, tenant="tenant-b",
                           thread=("t-b1", {"tenant": "tenant-b", "project_id": "game-b",
                                            "project_dir": str(b_project)}))
    monkeypatch.setenv("TIER2_API_KEYS", TWO_TENANTS)
    async with routes_client(store, tmp_path / "ws", redis_url) as c:
        yield c, a_project, b_project
    await store.close()


async def test_fifo_reads_and_a_saturated_tool_pool_leave_other_tenants_routes_answering(
        service: tuple[httpx.AsyncClient, Path, Path]) -> None:
    client, a_project, _ = service
    os.mkfifo(a_project / "pipe")
    read = Read(backend=ProjectFiles(a_project))
    # tenant A's 8 parallel Reads of a FIFO: each is refused at once (O_NONBLOCK, not a regular file)
    fifo_reads = await asyncio.wait_for(
        asyncio.gather(*(read.call(file_path=str(a_project / "pipe")) for _ in range(8))), 60)
    assert all(r.state == ToolResultState.ERROR for r in fifo_reads)

    # worst case: every thread of the tool pool is stuck (a tool I/O that never returns)
    release, started = threading.Event(), threading.Semaphore(0)

    def stuck() -> None:
        started.release()
        release.wait(120)

    loop = asyncio.get_running_loop()
    stuck_calls = [loop.run_in_executor(TOOL_IO, stuck) for _ in range(TOOL_IO_THREADS + 4)]
    try:
        for _ in range(TOOL_IO_THREADS):
            await asyncio.to_thread(started.acquire)
        more = asyncio.ensure_future(read.call(file_path=str(a_project / "pipe")))  # queued behind the stuck ones
        # tenant B's routes (their file reads use the default executor) answer meanwhile
        for path in ("/v1/runs/r-b1/design", "/v1/runs/r-b1", "/v1/runs"):
            r = await asyncio.wait_for(client.get(path, headers=B), 60)
            assert r.status_code == 200, (path, r.text)
        design = (await client.get("/v1/runs/r-b1/design", headers=B)).json()
        assert "Tenant B's game" in str(design)
        assert not more.done()  # tenant A's tool call is still waiting for the pool: only tool I/O is stuck
    finally:
        release.set()
        await asyncio.gather(*stuck_calls)
    assert (await asyncio.wait_for(more, 60)).state == ToolResultState.ERROR
