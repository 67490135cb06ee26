"""A store read cannot return another tenant's record (run, thread, project): the check is in the store
(`RunStore.get_run_for`, ``get_thread_for``, ``get_project_for``), and every route that reads by id gets a 404 for
another tenant's id — exactly as for an unknown one — while the owner gets the typed view."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aioredis

from tests.integration.routes_helpers import TWO_TENANTS, routes_client
from tier2.store.keys import Keys
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis
A = {"Authorization": "Bearer key-of-tenant-a-0001"}
B = {"Authorization": "Bearer key-of-tenant-b-0002"}


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[RunStore]:
    s = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), Keys(prefix=f"ts-{uuid.uuid4().hex[:8]}"))
    await s.accept_run("r-a1", {"status": "queued", "brief": "a potion shop", "tenant": "tenant-a",
                                "project_id": "game-a1", "thread_id": "t-a1", "project_dir": "/srv/ws/game-a1"},
                       project_id="game-a1", dispatch=False, tenant="tenant-a",
                       thread=("t-a1", {"tenant": "tenant-a", "project_id": "game-a1",
                                        "project_dir": "/srv/ws/game-a1"}))
    await s.put_project("proj-a1", {"tenant": "tenant-a", "path": "/srv/ws/projects/proj-a1", "pack": "phaser@1",
                                    "source": {"kind": "archive", "bytes": 10}, "files": 3, "stripped": []})
    yield s
    await s.close()


async def test_the_store_returns_none_for_another_tenants_record(store: RunStore) -> None:
    run = await store.get_run_for("tenant-a", "r-a1")
    assert run is not None and run.tenant == "tenant-a"
    assert (await store.get_thread_for("tenant-a", "t-a1") or {}).get("project_id") == "game-a1"
    assert (await store.get_project_for("tenant-a", "proj-a1") or {}).get("files") == 3
    for tenant in ("tenant-b", "", "local"):
        assert await store.get_run_for(tenant, "r-a1") is None
        assert await store.get_thread_for(tenant, "t-a1") is None
        assert await store.get_project_for(tenant, "proj-a1") is None
    for bad in ("", "r" * 65, "../r-a1", "r-a1\n", "r-\ud800"):  # never a key lookup
        assert await store.get_run_for("tenant-a", bad) is None
        assert await store.get_thread_for("tenant-a", bad) is None
        assert await store.get_project_for("tenant-a", bad) is None


@pytest.fixture
async def client(store: RunStore, tmp_path: Path, redis_url: str,
                 monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[httpx.AsyncClient]:
    monkeypatch.setenv("TIER2_API_KEYS", TWO_TENANTS)
    # the routes read through the runtime only: the store above, no browser or pack needed (no lifespan runs)
    async with routes_client(store, tmp_path / "ws", redis_url) as c:
        yield c


@pytest.mark.parametrize("path", ["/v1/runs/r-a1", "/v1/threads/t-a1", "/v1/projects/proj-a1",
                                  "/v1/runs/r-a1/trajectory", "/v1/runs/r-a1/delivery",
                                  "/v1/runs/r-a1/artifacts/screenshot.png", "/v1/runs/r-a1/events"])
async def test_every_read_route_is_404_for_another_tenants_id(client: httpx.AsyncClient, path: str) -> None:
    r = await client.get(path, headers=B)
    assert r.status_code == 404, (path, r.text)
    assert r.json()["error"]["code"] == "not_found"
    for method, other in (("POST", "/v1/runs/r-a1/cancel"), ("POST", "/v1/runs/r-a1/stream-token")):
        assert (await client.request(method, other, headers=B)).status_code == 404, other
    follow_up = await client.post("/v1/runs", json={"brief": "a potion shop tycoon game", "thread_id": "t-a1"},
                                  headers=B)
    assert follow_up.status_code == 404 and follow_up.json()["error"]["message"] == "unknown thread"
    on_project = await client.post("/v1/runs", json={"brief": "a potion shop tycoon game",
                                                     "project_id": "proj-a1"}, headers=B)
    assert on_project.status_code == 404 and on_project.json()["error"]["message"] == "unknown project"


async def test_the_owner_gets_typed_views_without_server_paths(client: httpx.AsyncClient) -> None:
    run = (await client.get("/v1/runs/r-a1", headers=A)).json()
    assert run["tenant"] == "tenant-a" and run["status"] == "queued" and run["attempts"] == []
    assert run["links"]["game"] == "/v1/runs/r-a1/artifacts/dist/index.html" and "project_dir" not in run
    assert "finished_at" not in run and "usage" not in run  # what the stored record lacks is left out
    thread = (await client.get("/v1/threads/t-a1", headers=A)).json()
    assert [r["run_id"] for r in thread["runs"]] == ["r-a1"] and "project_dir" not in thread
    project = (await client.get("/v1/projects/proj-a1", headers=A)).json()
    assert project["source"] == {"kind": "archive", "bytes": 10} and "path" not in project
    assert (await client.get("/v1/runs/r-a1/delivery", headers=A)).status_code == 409  # not ended yet
