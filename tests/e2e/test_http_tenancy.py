"""Tenants, API keys, idempotent submits and cancel on the real service (uvicorn, Redis, Chromium)."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.e2e.helpers import serve_in_process, template_zip, wait_finished
from tier2.settings.loader import REPO_ROOT, Settings
from tier2.testing import FakeOpenAIServer, Reply

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]  # its service warms Chromium
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
A = {"Authorization": "Bearer key-of-tenant-a-123"}
B = {"Authorization": "Bearer key-of-tenant-b-456"}


IN_CALL, RELEASE = threading.Event(), threading.Event()


def _slow_model(body: dict) -> Reply:
    IN_CALL.set()
    RELEASE.wait(60)  # a model call that lasts until the test lets it go: the cancel lands in the middle of it
    return Reply(text="still thinking")


@pytest.fixture(scope="module")
async def service(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    root = tmp_path_factory.mktemp("tenancy")
    config = root / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    with FakeOpenAIServer(_slow_model) as slow, pytest.MonkeyPatch.context() as mp:
        (config / "policy" / "zz-test.yaml").write_text(
            f"models:\n  slow:\n    kind: openai\n    model: slow-model\n    base_url: {slow.base_url}\n"
            "    max_retries: 0\nprices:\n  slow-model: {input_per_mtok: 0.0, output_per_mtok: 0.0}\n")
        (config / "security" / "zz-test.toml").write_text("[imports]\nmax_upload_bytes = 2000000\n")
        mp.setenv("TIER2_API_KEYS", "tenant-a:key-of-tenant-a-123, tenant-b:key-of-tenant-b-456")
        settings = Settings(workspaces=root / "ws", redis_url=redis_url, config_dir=config)
        try:
            async with serve_in_process(settings, redis_url) as client:
                yield client
        finally:
            RELEASE.set()


async def _wait_terminal(client: httpx.AsyncClient, run_id: str, headers: dict) -> dict:
    return await wait_finished(client, run_id, headers)


async def test_every_route_needs_a_valid_key(service: httpx.AsyncClient) -> None:
    for method, path in (("POST", "/v1/runs"), ("GET", "/v1/runs/r-x"), ("GET", "/v1/runs/r-x/events"),
                         ("POST", "/v1/runs/r-x/cancel"), ("GET", "/v1/health"), ("GET", "/docs"),
                         ("GET", "/redoc"), ("GET", "/openapi.json"), ("POST", "/v1/projects"),
                         ("GET", "/v1/threads/t-x"), ("GET", "/v1/runs/r-x/trajectory")):
        r = await service.request(method, path, json={"brief": POTION} if method == "POST" else None)
        assert r.status_code == 401, (method, path, r.status_code)
        assert r.json()["error"]["code"] == "unauthorized"
        r = await service.request(method, path, headers={"Authorization": "Bearer wrong-key-000"})
        assert r.status_code == 401, (method, path)
    assert (await service.get("/openapi.json", headers=A)).status_code == 200
    for path in ("/agent/", "/sessions/?agent_id=a", "/credential/"):  # AgentScope's routes are not served
        assert (await service.get(path, headers=A)).status_code == 404, path


async def test_idempotent_submit_and_tenant_isolation(service: httpx.AsyncClient) -> None:
    key = {"Idempotency-Key": f"order-{time.time_ns()}"}
    first = await service.post("/v1/runs", json={"brief": POTION}, headers={**A, **key})
    assert first.status_code == 202
    again = await service.post("/v1/runs", json={"brief": POTION}, headers={**A, **key})
    assert again.status_code == 202 and again.json() == first.json()
    assert again.headers.get("Idempotent-Replayed") == "true"
    other_body = await service.post("/v1/runs", json={"brief": POTION + " at night"}, headers={**A, **key})
    assert other_body.status_code == 409
    other_tenant = await service.post("/v1/runs", json={"brief": POTION}, headers={**B, **key})
    assert other_tenant.status_code == 202 and other_tenant.json()["run_id"] != first.json()["run_id"]

    run_id = first.json()["run_id"]
    run = await _wait_terminal(service, run_id, A)
    assert run["status"] == "delivered" and run["tenant"] == "tenant-a"
    for method, path in (("GET", f"/v1/runs/{run_id}"), ("GET", f"/v1/runs/{run_id}/events"),
                         ("GET", f"/v1/runs/{run_id}/delivery"), ("POST", f"/v1/runs/{run_id}/cancel"),
                         ("GET", f"/v1/runs/{run_id}/artifacts/screenshot.png")):
        assert (await service.request(method, path, headers=B)).status_code == 404, path
    assert (await service.get(f"/v1/runs/{run_id}/artifacts/screenshot.png", headers=A)).status_code == 200
    await _wait_terminal(service, other_tenant.json()["run_id"], B)

    # a browser EventSource cannot send Authorization: a stream token bound to one run stands in for the key
    assert (await service.post(f"/v1/runs/{run_id}/stream-token", headers=B)).status_code == 404
    grant = (await service.post(f"/v1/runs/{run_id}/stream-token", headers=A)).json()
    events = await service.get(grant["events"])
    assert events.status_code == 200 and "event: run_finished" in events.text
    other_run = other_tenant.json()["run_id"]
    assert (await service.get(f"/v1/runs/{other_run}/events", params={"token": grant["token"]})).status_code == 401
    assert (await service.get(f"/v1/runs/{run_id}", params={"token": grant["token"]})).status_code == 401
    forged = grant["token"][:-2] + ("AA" if not grant["token"].endswith("AA") else "BB")
    assert (await service.get(f"/v1/runs/{run_id}/events", params={"token": forged})).status_code == 401


async def test_cancel_records_request_then_stop(service: httpx.AsyncClient) -> None:
    r = await service.post("/v1/runs", json={"brief": POTION, "model": "slow"}, headers=A)
    run_id = r.json()["run_id"]
    assert await asyncio.to_thread(IN_CALL.wait, 120), "the run never reached its model call"
    c = await service.post(f"/v1/runs/{run_id}/cancel", headers=A)
    assert c.status_code == 202 and c.json()["status"] == "cancel_requested"
    run = await _wait_terminal(service, run_id, A)
    assert run["status"] == "stopped" and run["cancel_requested"] is True
    assert "cancel" in run["stop_reason"]
    events = (await service.get(f"/v1/runs/{run_id}/events", headers=A)).text
    assert events.index("event: cancel_requested") < events.index("event: run_finished")
    assert (await service.post(f"/v1/runs/{run_id}/cancel", headers=A)).status_code == 409
    delivery = (await service.get(f"/v1/runs/{run_id}/delivery", headers=A)).json()
    assert delivery["status"] == "stopped"


def _template_zip(extra: dict[str, bytes] | None = None) -> bytes:
    return template_zip(extra)


async def test_load_a_project_from_an_archive_and_run_on_it(service: httpx.AsyncClient) -> None:
    zip_headers = {"Content-Type": "application/zip"}
    r = await service.post("/v1/projects", content=_template_zip(), headers={**A, **zip_headers})
    assert r.status_code == 201, r.text
    project_id = r.json()["project_id"]
    assert (await service.get(f"/v1/projects/{project_id}", headers=A)).json()["tenant"] == "tenant-a"
    assert (await service.get(f"/v1/projects/{project_id}", headers=B)).status_code == 404
    assert (await service.post("/v1/runs", json={"brief": POTION, "project_id": project_id},
                               headers=B)).status_code == 404
    r = await service.post("/v1/runs", json={"brief": POTION, "project_id": project_id}, headers=A)
    assert r.status_code == 202 and r.json()["project_id"] == project_id
    busy = await service.post("/v1/runs", json={"brief": POTION, "project_id": project_id}, headers=A)
    assert busy.status_code == 409  # one writer per project
    run = await _wait_terminal(service, r.json()["run_id"], A)
    assert run["status"] == "delivered"
    delivery = (await service.get(f"/v1/runs/{r.json()['run_id']}/delivery", headers=A)).json()
    assert delivery["project_id"] == project_id


@pytest.mark.parametrize(("body", "ctype", "status", "needle"), [
    (b"not an archive", "application/zip", 422, "neither a zip nor a tar"),
    (b"{}", "text/plain", 415, "unsupported Content-Type"),
    (b'{"path": "/etc"}', "application/json", 422, "outside the import root"),
    (b"x" * 2_100_000, "application/zip", 413, "limit"),
])
async def test_bad_project_uploads_are_refused(service: httpx.AsyncClient, body: bytes, ctype: str, status: int,
                                               needle: str) -> None:
    r = await service.post("/v1/projects", content=body, headers={**A, "Content-Type": ctype})
    assert r.status_code == status and needle in r.text, r.text


async def test_archive_with_traversal_or_not_a_project_is_refused(service: httpx.AsyncClient) -> None:
    evil = _template_zip({"my-game/../../../evil.js": b"x"})
    r = await service.post("/v1/projects", content=evil, headers={**A, "Content-Type": "application/zip"})
    assert r.status_code == 422 and "escapes" in r.text
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("readme.txt", "hello")
    r = await service.post("/v1/projects", content=buf.getvalue(), headers={**A, "Content-Type": "application/zip"})
    assert r.status_code == 422 and "not a phaser@" in r.text
