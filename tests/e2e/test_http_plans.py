"""``GET /v1/threads/{id}/plans`` and ``GET /v1/threads/{id}/plan?version=N`` on the real service (uvicorn, Redis;
no worker: the thread and its goal/plan versions are written to the store as the run loop writes them), and
``tier2 runs plan`` against it."""

from __future__ import annotations

import asyncio
import json
import shutil
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.e2e.helpers import serve_in_process
from tests.fixtures.plan_records import plan_record
from tier2.client.api import ServiceClient
from tier2.client.plans import plan_lines
from tier2.settings.loader import REPO_ROOT, Settings
from tier2.store.keys import Keys
from tier2.store.plans import PlanVersions
from tier2.store.run_store import RunStore

pytestmark = [pytest.mark.e2e, pytest.mark.redis]
A = {"Authorization": "Bearer plans-key-of-tenant-a-1"}
B = {"Authorization": "Bearer plans-key-of-tenant-b-2"}


@dataclass
class Service:
    api: httpx.AsyncClient
    store: RunStore
    workspaces: Path


@pytest.fixture(scope="module")
async def service(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> AsyncIterator[Service]:
    root = tmp_path_factory.mktemp("plans")
    shutil.copytree(REPO_ROOT / "config", root / "config")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIER2_API_KEYS", "tenant-a:plans-key-of-tenant-a-1, tenant-b:plans-key-of-tenant-b-2")
        settings = Settings(workspaces=root / "ws", redis_url=redis_url, config_dir=root / "config",
                            key_prefix=f"plans-{uuid.uuid4().hex[:8]}")
        store = RunStore.from_url(redis_url, Keys(prefix=settings.key_prefix))
        try:
            async with serve_in_process(settings, redis_url, workers=0) as api:
                yield Service(api, store, settings.workspaces)
        finally:
            await store.close()


async def _thread(service: Service, versions: int) -> tuple[str, str, str]:
    """A thread of tenant-a whose project has goal versions 1..``versions`` (v1 with two plan revisions)."""
    tag = uuid.uuid4().hex[:8]
    thread_id, project_id, run_id = f"t-{tag}", f"game-{tag}", f"r-{tag}"
    project_dir = str(service.workspaces / "projects" / project_id)
    got = await service.store.accept_run(run_id, {"status": "queued", "project_id": project_id, "tenant": "tenant-a",
                                                  "thread_id": thread_id, "brief": "a cozy bakery"},
                                         project_id=project_id, dispatch=False, tenant="tenant-a",
                                         thread=(thread_id, {"tenant": "tenant-a", "project_id": project_id,
                                                             "project_dir": project_dir}))
    assert got.outcome == "created"
    plans = PlanVersions(service.store.r, service.store.keys)
    await plans.append(project_id, plan_record(1, 1, run_id=run_id, project_id=project_id, end=None), None)
    await plans.append(project_id, plan_record(1, 2, run_id=run_id, project_id=project_id), None)
    for gv in range(2, versions + 1):
        record = plan_record(gv, 1, run_id=f"{run_id}-{gv}", project_id=project_id,
                             end="blocked" if gv == versions else "delivered")
        record["plan"]["nodes"]["design.economy"]["evidence"] = {"tables": f"{project_dir}/data/economy.json",
                                                                 "log": "/opt/secret/host/build.log pid 4242"}
        await plans.append(project_id, record, None)
    return thread_id, project_id, run_id


async def test_the_goal_versions_and_one_version_with_its_diff(service: Service) -> None:
    thread_id, project_id, run_id = await _thread(service, versions=4)
    listed = await service.api.get(f"/v1/threads/{thread_id}/plans", headers=A)
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert body["thread_id"] == thread_id and body["project_id"] == project_id
    assert [(v["goal_version"], v["plan_version"], v["entries"], v["author"], v["end"]) for v in body["versions"]] == [
        (1, 2, 2, "user", "delivered"), (2, 1, 1, "user", "delivered"), (3, 1, 1, "user", "delivered"),
        (4, 1, 1, "evidence", "blocked")]
    assert body["versions"][1] | {"at": 0} == {
        "goal_version": 2, "plan_version": 1, "entries": 1, "author": "user", "text": "same game, snowy theme",
        "at": 0, "run_id": f"{run_id}-2", "added": 1, "changed": 1, "removed": 1, "invalidated": 2, "reused": 2,
        "end": "delivered"}

    newest = (await service.api.get(f"/v1/threads/{thread_id}/plan", headers=A)).json()
    assert newest["goal_version"] == 4 and newest["end"] == {"kind": "blocked", "reason": "blocked",
                                                            "options": ["drop R7", "keep the old theme"]}
    assert [g["version"] for g in newest["goals"]] == [1, 2, 3, 4]
    two = await service.api.get(f"/v1/threads/{thread_id}/plan", params={"version": 2}, headers=A)
    assert two.status_code == 200
    v2 = two.json()
    assert v2["goal"] == {"version": 2, "text": "same game, snowy theme", "author": "user"}
    assert v2["diff"]["requirements"]["changed"] == [{"id": "R3", "text": "customers wait 20 s",
                                                      "was": "customers wait 10 s", "fields": ["predicate", "text"]}]
    assert v2["diff"]["requirements"]["added"] == [{"id": "R12", "text": "snow everywhere 2", "was": None,
                                                    "fields": []}]
    assert v2["diff"]["invalidated"] == {"design.assets": "goal v2: theme → snow", "req.R3": "input spec:R3 changed"}
    assert v2["diff"]["reused"] == ["design.economy", "req.R1"]
    assert v2["metrics"]["local_replan_ratio"] == 0.6 and v2["plan"]["nodes"]["req.R3"]["status"] == "verified"
    # no host path: the project's own paths become relative, any other server path is cut, pids hidden
    evidence = v2["plan"]["nodes"]["design.economy"]["evidence"]
    assert evidence["tables"] == "data/economy.json"
    assert "/opt/secret" not in evidence["log"] and "4242" not in evidence["log"]
    assert str(service.workspaces) not in two.text and "project_dir" not in two.text
    one = (await service.api.get(f"/v1/threads/{thread_id}/plan?version=1", headers=A)).json()
    assert one["plan_version"] == 2 and one["diff"]["requirements"]["added"][0]["id"] == "R1"  # v1's newest plan


async def test_unknown_versions_bad_versions_and_other_tenants(service: Service) -> None:
    thread_id, _, _ = await _thread(service, versions=2)
    for bad in ("0", "-1", "two", "1.5", "99999999999"):
        r = await service.api.get(f"/v1/threads/{thread_id}/plan", params={"version": bad}, headers=A)
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request", (bad, r.text)
    r = await service.api.get(f"/v1/threads/{thread_id}/plan?version=3", headers=A)
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    for path in (f"/v1/threads/{thread_id}/plan", f"/v1/threads/{thread_id}/plan?version=1",
                 f"/v1/threads/{thread_id}/plans"):
        other = await service.api.get(path, headers=B)  # another tenant's thread: exactly an unknown one
        assert other.status_code == 404 and other.json()["error"]["message"] == "unknown thread", path
        assert (await service.api.get(path)).status_code == 401
    assert (await service.api.get("/v1/threads/t-unknown/plans", headers=A)).status_code == 404
    empty_thread = f"t-{uuid.uuid4().hex[:8]}"
    await service.store.accept_run(f"r-{empty_thread}", {"status": "queued", "project_id": f"g-{empty_thread}",
                                                         "tenant": "tenant-a"}, project_id=f"g-{empty_thread}",
                                   dispatch=False, tenant="tenant-a",
                                   thread=(empty_thread, {"tenant": "tenant-a", "project_id": f"g-{empty_thread}",
                                                          "project_dir": ""}))
    assert (await service.api.get(f"/v1/threads/{empty_thread}/plans", headers=A)).json()["versions"] == []
    assert (await service.api.get(f"/v1/threads/{empty_thread}/plan", headers=A)).status_code == 404


async def test_the_openapi_documents_both_routes(service: Service) -> None:
    spec = (await service.api.get("/openapi.json", headers=A)).json()
    one = spec["paths"]["/v1/threads/{thread_id}/plan"]["get"]
    assert one["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/PlanVersionView"}
    assert {"404", "422"} <= set(one["responses"])
    assert [p["name"] for p in one["parameters"]] == ["thread_id", "version"]
    listed = spec["paths"]["/v1/threads/{thread_id}/plans"]["get"]["responses"]["200"]
    assert listed["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/PlanList"}


async def test_the_cli_prints_the_versions_and_one_versions_diff(service: Service) -> None:
    thread_id, _, run_id = await _thread(service, versions=3)
    url, key = str(service.api.base_url), A["Authorization"].split()[1]

    def read(version: int | None) -> tuple[dict, dict | None]:
        with ServiceClient(url, api_key=key) as api:
            return api.thread_plans(thread_id), api.thread_plan(thread_id, version) if version else None

    listed, _ = await asyncio.to_thread(read, None)
    lines = plan_lines(listed, None)
    assert lines[1].split() == ["GOAL", "PLAN", "AUTHOR", "END", "+REQ", "~REQ", "-REQ", "INVAL", "REUSED", "RUN",
                                "TEXT"]
    assert lines[3].split()[:9] == ["v2", "1", "user", "delivered", "1", "1", "1", "2", "2"]
    assert lines[4].split()[:4] == ["v3", "1", "user", "blocked"]
    listed, v2 = await asyncio.to_thread(read, 2)
    text = "\n".join(plan_lines(listed, v2))
    assert "goal v2 (user): same game, snowy theme" in text
    assert "+ R12  snow everywhere 2" in text
    assert "~ R3  customers wait 20 s  (was: customers wait 10 s; changed: predicate, text)" in text
    assert "- R2  requirement 2" in text and "design.assets: goal v2: theme → snow" in text
    assert "reused (2): design.economy, req.R1" in text and "local_replan_ratio 0.6" in text
    assert "end: delivered — delivered: every requirement verified" in text
    assert json.loads(json.dumps(v2))["run_id"] == f"{run_id}-2"
