"""Issue #21 M1 on the real service (uvicorn, Redis, Chromium, two tenants): a run whose ``delivery.json`` (or
screenshot, report directory, design docs) the sandbox replaced with a symlink into another tenant's project never
serves the other tenant's files — the delivery route answers 409, the artifact 404, the report and design views
show nothing of the other project."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.helpers import serve_in_process, wait_finished
from tier2.settings.loader import REPO_ROOT, Settings

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
A = {"Authorization": "Bearer key-of-tenant-a-777"}
B = {"Authorization": "Bearer key-of-tenant-b-888"}


@pytest.fixture(scope="module")
async def service(tmp_path_factory: pytest.TempPathFactory,
                  redis_url: str) -> AsyncIterator[tuple[httpx.AsyncClient, Path]]:
    root = tmp_path_factory.mktemp("m1")
    config = root / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIER2_API_KEYS", "tenant-a:key-of-tenant-a-777, tenant-b:key-of-tenant-b-888")
        settings = Settings(workspaces=root / "ws", redis_url=redis_url, config_dir=config)
        async with serve_in_process(settings, redis_url) as client:
            yield client, root / "ws"


def _project_of(ws: Path, run_id: str) -> Path:
    for delivery in ws.rglob("delivery.json"):
        if json.loads(delivery.read_text()).get("run_id") == run_id:
            return delivery.parent
    raise AssertionError(f"no project delivered {run_id}")


async def test_a_symlinked_delivery_never_serves_another_tenants(service: tuple[httpx.AsyncClient, Path]) -> None:
    client, ws = service
    a = (await client.post("/v1/runs", json={"brief": POTION}, headers=A)).json()["run_id"]
    b = (await client.post("/v1/runs", json={"brief": POTION + " at night"}, headers=B)).json()["run_id"]
    assert (await wait_finished(client, a, A))["status"] == "delivered"
    assert (await wait_finished(client, b, B))["status"] == "delivered"
    mine, theirs = _project_of(ws, a), _project_of(ws, b)
    assert (await client.get(f"/v1/runs/{a}/delivery", headers=A)).json()["run_id"] == a
    assert (await client.get(f"/v1/runs/{a}/artifacts/screenshot.png", headers=A)).status_code == 200

    # what the sandbox's `ln -sfn` leaves behind in tenant A's project
    for name in ("delivery.json", "screenshot.png"):
        (mine / name).unlink()
        (mine / name).symlink_to(theirs / name)
    shutil.rmtree(mine / ".tier2")
    (mine / ".tier2").symlink_to(theirs / ".tier2")
    (theirs / "docs/design").mkdir(parents=True, exist_ok=True)
    (theirs / "docs/design/GDD.md").write_text(f"# tenant B's secret design for {b}\n")
    shutil.rmtree(mine / "docs/design", ignore_errors=True)
    (mine / "docs").mkdir(exist_ok=True)
    (mine / "docs/design").symlink_to(theirs / "docs/design")

    r = await client.get(f"/v1/runs/{a}/delivery", headers=A)
    assert r.status_code == 409 and b not in r.text, r.text
    assert "symbolic link" in r.json()["error"]["message"]
    r = await client.get(f"/v1/runs/{a}/artifacts/delivery.json", headers=A)
    assert r.status_code == 409 and b not in r.text
    r = await client.get(f"/v1/runs/{a}/artifacts/screenshot.png", headers=A)
    assert r.status_code == 404 and "symbolic link" in r.text
    r = await client.get(f"/v1/runs/{a}/report", headers=A)
    assert r.status_code == 404 and b not in r.text
    design = (await client.get(f"/v1/runs/{a}/design", headers=A)).json()
    assert design.get("docs", []) == [] and "secret design" not in json.dumps(design)
    # a FIFO at the name: answered at once, never a blocked worker thread
    (mine / "delivery.json").unlink()
    os.mkfifo(mine / "delivery.json")
    r = await asyncio.wait_for(client.get(f"/v1/runs/{a}/delivery", headers=A), 30)  # (the harness's bound)
    assert r.status_code == 409 and "FIFO" in r.json()["error"]["message"]
    # tenant B still gets its own
    assert (await client.get(f"/v1/runs/{b}/delivery", headers=B)).json()["run_id"] == b
