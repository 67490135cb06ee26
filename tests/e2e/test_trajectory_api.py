"""GET /v1/runs/{id}/trajectory on the real service (uvicorn, Redis, Chromium, offline model): every model and
tool call of a run, visible to its tenant only."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.e2e.helpers import serve_in_process, wait_finished
from tier2.settings.loader import REPO_ROOT, Settings

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
A = {"Authorization": "Bearer key-of-tenant-a-789"}
B = {"Authorization": "Bearer key-of-tenant-b-012"}


@pytest.fixture(scope="module")
async def service(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    root = tmp_path_factory.mktemp("trajectory")
    shutil.copytree(REPO_ROOT / "config", root / "config")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIER2_API_KEYS", "tenant-a:key-of-tenant-a-789, tenant-b:key-of-tenant-b-012")
        settings = Settings(workspaces=root / "ws", redis_url=redis_url, config_dir=root / "config")
        async with serve_in_process(settings, redis_url) as client:
            yield client


async def _finished_run(client: httpx.AsyncClient) -> tuple[str, dict]:
    run_id = (await client.post("/v1/runs", json={"brief": POTION}, headers=A)).json()["run_id"]
    return run_id, await wait_finished(client, run_id, A)


async def test_the_trajectory_lists_every_call_to_its_tenant_only(service: httpx.AsyncClient) -> None:
    run_id, run = await _finished_run(service)
    assert run["status"] == "delivered", run.get("stop_reason")
    r = await service.get(f"/v1/runs/{run_id}/trajectory", headers=A)
    assert r.status_code == 200
    body = r.json()
    calls, usage = body["calls"], run["usage"]
    models = [c for c in calls if c["kind"] == "model"]
    tools = [c for c in calls if c["kind"] == "tool"]
    assert len(models) == usage["model_calls"] == body["summary"]["model_calls"]
    agents = body["summary"]["agents"]  # per agent: the writer and the design studio's roles
    assert agents["writer"]["model_calls"] >= 1 and sum(a["model_calls"] for a in agents.values()) == len(models)
    assert sum(a["cost_usd"] for a in agents.values()) == pytest.approx(usage["cost_usd"], abs=1e-5)
    assert {t["tool"]: sum(1 for x in tools if x["tool"] == t["tool"]) for t in tools} == usage["tool_calls"]
    assert [m["step"] for m in models] == list(range(1, len(models) + 1))
    assert all(m["model"] == "tier2-offline-policy-v1" and m["state"] == "success" and m["cost_usd"] > 0
               for m in models)
    assert sum(m["cost_usd"] for m in models) == pytest.approx(usage["cost_usd"], abs=1e-5)
    assert all(t["call_id"].startswith("t:") and t["args_sha256"] and t["duration_ms"] >= 0 for t in tools)
    assert any(t["tool"] == "RunGame" and t["state"] == "success" for t in tools)
    assert [c["started_at"] for c in calls] == sorted(c["started_at"] for c in calls)
    plan = body["summary"]["plan"]  # the run's plan metrics beside its calls
    assert plan["goal_coverage"] == 1.0 and plan["reused"] == 0 and plan["modifications"] == 0, plan

    only_tools = (await service.get(f"/v1/runs/{run_id}/trajectory?kind=tool&offset=1&limit=2",
                                    headers=A)).json()
    assert only_tools["total"] == len(tools) and [c["call_id"] for c in only_tools["calls"]] == [
        t["call_id"] for t in tools[1:3]]

    assert (await service.get(f"/v1/runs/{run_id}/trajectory", headers=B)).status_code == 404  # another tenant
    assert (await service.get(f"/v1/runs/{run_id}/trajectory")).status_code == 401
    assert (await service.get("/v1/runs/r-doesnotexist/trajectory", headers=A)).status_code == 404
