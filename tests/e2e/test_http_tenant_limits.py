"""Tenant limits on the real service (uvicorn, Redis, in-process worker): queue cap, submission rate, upload
bytes per day, budget ceiling and finite budgets, allowed routes — each a 4xx with a clear reason — and counts
that heal whichever way a run ends (delivered, cancelled, failed)."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
import redis.asyncio as aioredis

from tests.e2e.helpers import serve_in_process
from tests.e2e.test_http_tenancy import _template_zip
from tier2.settings.loader import REPO_ROOT, Settings
from tier2.store.keys import Keys
from tier2.store.run_store import RunStore
from tier2.testing import FakeOpenAIServer, Reply

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]  # its service warms Chromium
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
TENANTS = ("queue", "rate", "upload", "budget", "routes", "heal")
KEYS = {t: {"Authorization": f"Bearer key-of-{t}-0123"} for t in TENANTS}
ZIP = _template_zip()


def _slow_model(body: dict) -> Reply:
    time.sleep(1.0)
    return Reply(text="still thinking")


@pytest.fixture(scope="module")
async def service(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    root = tmp_path_factory.mktemp("limits")
    config = root / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    prefix = f"tl-{uuid.uuid4().hex[:8]}"
    with FakeOpenAIServer(_slow_model) as slow, pytest.MonkeyPatch.context() as mp:
        (config / "policy" / "zz-test.yaml").write_text(
            f"models:\n  slow:\n    kind: openai\n    model: slow-model\n    base_url: {slow.base_url}\n"
            "    max_retries: 0\nprices:\n  slow-model: {input_per_mtok: 0.0, output_per_mtok: 0.0}\n")
        (config / "security" / "zz-test.toml").write_text(
            "[tenants.overrides.queue]\nmax_queued = 2\n"
            "[tenants.overrides.rate]\nsubmissions_per_minute = 2\n"
            f"[tenants.overrides.upload]\nupload_bytes_per_day = {len(ZIP) * 3 // 2}\n"
            '[tenants.overrides.routes]\nallowed_routes = ["offline"]\n'
            "[tenants.overrides.heal]\nmax_queued = 1\n")
        mp.setenv("TIER2_API_KEYS", ",".join(f"{t}:key-of-{t}-0123" for t in TENANTS))
        settings = Settings(workspaces=root / "ws", redis_url=redis_url, config_dir=config, key_prefix=prefix)
        async with serve_in_process(settings, redis_url) as client:
            client.keys = Keys(prefix=prefix)  # type: ignore[attr-defined]
            yield client


async def _submit(client: httpx.AsyncClient, tenant: str, **body: object) -> httpx.Response:
    return await client.post("/v1/runs", json={"brief": POTION, **body}, headers=KEYS[tenant])


async def _terminal(client: httpx.AsyncClient, run_id: str, tenant: str) -> dict:
    for _ in range(1200):
        run = (await client.get(f"/v1/runs/{run_id}", headers=KEYS[tenant])).json()
        if run["status"] in ("delivered", "failed", "stopped"):
            return run
        await asyncio.sleep(0.1)
    raise AssertionError(f"run {run_id} did not end")


async def _cancel_all(client: httpx.AsyncClient, tenant: str, run_ids: list[str]) -> None:
    for run_id in run_ids:
        await client.post(f"/v1/runs/{run_id}/cancel", headers=KEYS[tenant])
    for run_id in run_ids:
        await _terminal(client, run_id, tenant)


async def test_queue_cap_is_a_429_with_retry_after_and_a_cancel_frees_a_slot(service: httpx.AsyncClient) -> None:
    ids = [(await _submit(service, "queue", model="slow")).json()["run_id"] for _ in range(2)]
    full = await _submit(service, "queue", model="slow")
    assert full.status_code == 429 and "max_queued = 2" in full.text, full.text
    assert int(full.headers["Retry-After"]) > 0
    assert (await _submit(service, "rate", model="slow")).status_code == 202   # another tenant is not affected
    await service.post(f"/v1/runs/{ids[0]}/cancel", headers=KEYS["queue"])
    assert (await _terminal(service, ids[0], "queue"))["status"] == "stopped"
    again = await _submit(service, "queue", model="slow")
    assert again.status_code == 202, again.text                                # the count healed
    await _cancel_all(service, "queue", [ids[1], again.json()["run_id"]])


async def test_submission_rate_is_a_429_with_retry_after(service: httpx.AsyncClient) -> None:
    ids = []  # (the queue test may have used one of "rate"'s two submissions this minute)
    while (r := await _submit(service, "rate", model="slow")).status_code == 202:
        ids.append(r.json()["run_id"])
    assert r.status_code == 429 and "submissions_per_minute" in r.text, r.text
    assert 1 <= int(r.headers["Retry-After"]) <= 60
    assert len(ids) <= 2
    await _cancel_all(service, "rate", ids)


async def test_upload_bytes_per_day(service: httpx.AsyncClient) -> None:
    zip_headers = {**KEYS["upload"], "Content-Type": "application/zip"}
    first = await service.post("/v1/projects", content=ZIP, headers=zip_headers)
    assert first.status_code == 201, first.text
    second = await service.post("/v1/projects", content=ZIP, headers=zip_headers)
    assert second.status_code == 429 and "upload_bytes_per_day" in second.text, second.text
    assert 1 <= int(second.headers["Retry-After"]) <= 86_400
    huge = await service.post("/v1/projects", content=ZIP * 2, headers=zip_headers)
    assert huge.status_code == 413, huge.text                          # one upload over the whole daily quota
    other = await service.post("/v1/projects", content=ZIP, headers={**zip_headers, **KEYS["budget"]})
    assert other.status_code == 201                                     # per tenant


@pytest.mark.parametrize(("raw", "needle"), [
    ('{"usd": 1000000000.0}', "less than or equal"),                   # above the compiled ceiling
    ('{"usd": 10}', "ceiling of 5 USD"),                               # above the tenant's ceiling
    ('{"tokens": 9000000}', "max_tokens"),
    ('{"deadline_s": 7200}', "max_deadline_s"),
    ('{"usd": Infinity}', "finite"), ('{"usd": NaN}', "finite"), ('{"usd": 1e400}', "finite"),
    ('{"usd": -1}', "greater than 0"), ('{"tokens": Infinity}', "integer"),
])
async def test_a_budget_above_the_ceiling_or_not_finite_is_a_422(service: httpx.AsyncClient, raw: str,
                                                                  needle: str) -> None:
    body = f'{{"brief": {json.dumps(POTION)}, "budget": {raw}}}'
    r = await service.post("/v1/runs", content=body, headers={**KEYS["budget"], "Content-Type": "application/json"})
    assert r.status_code == 422 and needle in r.text, r.text


async def test_a_forbidden_route_is_a_403(service: httpx.AsyncClient) -> None:
    r = await _submit(service, "routes", model="slow")
    assert r.status_code == 403 and "'slow' is not allowed for tenant 'routes'" in r.text, r.text
    ok = await _submit(service, "routes", budget={"usd": 1.0})                # the offline writer route is allowed
    assert ok.status_code == 202, ok.text
    await _cancel_all(service, "routes", [ok.json()["run_id"]])


async def test_counts_heal_after_failure_and_delivery_and_a_bad_stored_budget_fails_cleanly(
        service: httpx.AsyncClient, redis_url: str) -> None:
    # a run whose stored budget is not finite (written behind the API's back): the worker fails it, visibly
    store = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True), service.keys)  # type: ignore[attr-defined]
    try:
        from tier2.store.quotas import Admission

        got = await store.accept_run(
            "r-badbudget", {"status": "queued", "phase": "setup", "brief": POTION, "tenant": "heal",
                            "project_id": "p-badbudget", "dispatched": True, "project_dir": None},
            project_id="p-badbudget", dispatch=False, tenant="heal", admission=Admission("heal", 1, 100))
        assert got.outcome == "created"
        key = store.keys.run("r-badbudget")  # the record rewritten raw: a JSON Infinity no model would store
        raw = json.loads(await store.r.get(key))
        await store.r.set(key, json.dumps({**raw, "options": {"budget": {"usd": float("inf")}}}))
        await store.r.xadd(store.keys.dispatch(), {"run_id": "r-badbudget", "tenant": "heal"})
        assert (await _submit(service, "heal")).status_code == 429          # max_queued = 1 is taken
        failed = await _terminal(service, "r-badbudget", "heal")
        assert failed["status"] == "failed" and "budget" in failed["stop_reason"], failed
    finally:
        await store.close()
    ok = await _submit(service, "heal")                                      # healed after a failure
    assert ok.status_code == 202, ok.text
    assert (await _terminal(service, ok.json()["run_id"], "heal"))["status"] == "delivered"  # the worker lives on
    assert (await _submit(service, "heal", model="slow")).status_code == 202  # healed after a delivery
