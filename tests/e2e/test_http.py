"""The HTTP service (AgentScope create_app + tier2 routes) on uvicorn: submit a brief, stream SSE with ids,
resume from Last-Event-ID, fetch the delivery and play the served game in Chromium."""

from __future__ import annotations

import json
import typing
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.helpers import play_in_chromium, serve_in_process, wait_finished
from tier2.events import Tier2Event
from tier2.settings.loader import Settings

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.browser, pytest.mark.redis]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


@pytest.fixture(scope="module")
def http_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("http-ws")


@pytest.fixture(scope="module")
async def service(http_ws: Path, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(workspaces=http_ws, redis_url=redis_url)
    async with serve_in_process(settings, redis_url) as client:
        yield client


async def _sse(client: httpx.AsyncClient, run_id: str, headers: dict[str, str] | None = None,
               limit: int | None = None) -> list[tuple[int, dict]]:
    frames: list[tuple[int, dict]] = []
    async with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers or {},
                             timeout=httpx.Timeout(300)) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        eid = None
        async for line in r.aiter_lines():
            if line.startswith("id: "):
                eid = int(line[4:])
            elif line.startswith("data: "):
                frames.append((eid, json.loads(line[6:])))
                if limit and len(frames) >= limit:
                    break
    return frames


async def test_health_is_minimal_and_only_tier2_routes_are_served(service: httpx.AsyncClient) -> None:
    r = await service.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}, r.text
    body = (await service.get("/v1/health")).json()  # the details (local mode: no key needed)
    assert body["ok"] and body["redis"]["ok"] and body["browser"]["version"] and body["toolchain"]["pack"]
    assert "/" not in body["browser"]["executable"]
    r = await service.get("/agent/", headers={"X-User-ID": "u1"})  # AgentScope's own routes are not mounted
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    paths = (await service.get("/openapi.json")).json()["paths"]
    assert {"/v1/runs", "/v1/runs/{run_id}/events", "/healthz"} <= set(paths) and "/chat/" not in paths


async def test_bad_requests_get_clear_errors(service: httpx.AsyncClient) -> None:
    r = await service.post("/v1/runs", json={"brief": "  "})
    assert r.status_code == 422 and "brief is empty" in r.text
    r = await service.post("/v1/runs", json={"brief": "x" * 5000})
    assert r.status_code == 422 and "limit" in r.text
    r = await service.post("/v1/runs", json={"brief": POTION, "model": "nope"})
    assert r.status_code == 422 and "unknown model route" in r.text
    r = await service.post("/v1/runs", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert (await service.get("/v1/runs/r-unknown")).status_code == 404
    assert (await service.get("/v1/runs/r-unknown/events")).status_code == 404


async def test_run_over_http_streams_resumes_and_delivers(service: httpx.AsyncClient, viewer_pool) -> None:
    r = await service.post("/v1/runs", json={"brief": POTION})
    assert r.status_code == 202, r.text
    run_id = r.json()["run_id"]
    first = await _sse(service, run_id, limit=3)               # a client that drops after 3 frames
    rest = await _sse(service, run_id, headers={"Last-Event-ID": str(first[-1][0])})
    ids = [i for i, _ in first + rest]
    assert ids == list(range(1, len(ids) + 1)), ids            # no gap, no duplicate across the reconnect
    assert rest[-1][1]["type"] == "run_finished" and rest[-1][1]["status"] == "delivered"
    replay = await _sse(service, run_id, headers={"Last-Event-ID": "0"})   # full replay after the end
    assert [i for i, _ in replay] == ids
    assert [i for i, _ in await _sse(service, run_id)] == ids
    after = await service.get(f"/v1/runs/{run_id}/events", params={"after": len(ids) - 1})
    assert after.text.count("id: ") == 1

    run = (await service.get(f"/v1/runs/{run_id}")).json()
    assert run["status"] == "delivered" and run["phase"] == "deliver"
    delivery = (await service.get(f"/v1/runs/{run_id}/delivery")).json()
    assert delivery["run_id"] == run_id and delivery["status"] == "delivered"
    shot = await service.get(f"/v1/runs/{run_id}/artifacts/screenshot.png")
    assert shot.status_code == 200 and shot.content[:4] == b"\x89PNG"
    for bad in ("../../etc/passwd", "src/main.js", ".tier2/project.json", "dist/../../x"):
        assert (await service.get(f"/v1/runs/{run_id}/artifacts/{bad}")).status_code == 404, bad
    grant = (await service.post(run["links"]["play"])).json()  # the artifact is a download: play through a token
    seen = await play_in_chromium(viewer_pool, f"{service.base_url}{grant['url']}")
    assert seen["errors"] == [] and seen["after"]["money"] < seen["before"]["money"]
    assert delivery["preview"] == {"path": "dist/index.html",
                                   "url": f"/v1/runs/{run_id}/artifacts/dist/index.html"}
    assert (await service.get(delivery["preview"]["url"])).status_code == 200


EVENT_TYPES = [cls.model_fields["type"].default for cls in typing.get_args(typing.get_args(Tier2Event)[0])]


async def test_browser_eventsource_resumes_after_dropped_connections(service: httpx.AsyncClient,
                                                                     viewer_pool) -> None:
    """A real EventSource in Chromium: the server drops the stream every 4 frames; the browser reconnects with
    Last-Event-ID and ends up with every event exactly once."""
    run_id = (await service.post("/v1/runs", json={"brief": POTION})).json()["run_id"]
    base = str(service.base_url)
    context = await viewer_pool.new_context()
    try:
        page = await context.new_page()
        await page.route(f"{base}/es-test.html", lambda route: route.fulfill(
            content_type="text/html", body="<!doctype html><title>es</title>"))
        await page.goto(f"{base}/es-test.html")
        await page.evaluate("""([url, types]) => {
            window.ids = []; window.opens = 0; window.done = false;
            const es = new EventSource(url);
            es.onopen = () => { window.opens += 1; };
            for (const t of types) es.addEventListener(t, (e) => {
                window.ids.push(Number(e.lastEventId));
                if (t === 'run_finished') { window.done = true; es.close(); }
            });
        }""", [f"/v1/runs/{run_id}/events?limit=4", EVENT_TYPES])
        await page.wait_for_function("window.done === true", timeout=180_000)
        ids, opens = await page.evaluate("[window.ids, window.opens]")
    finally:
        await context.close()
    assert ids == list(range(1, len(ids) + 1)), ids
    assert opens >= len(ids) // 4  # it really was dropped and resumed many times


async def _terminal(client: httpx.AsyncClient, run_id: str) -> dict:
    return await wait_finished(client, run_id)


async def test_follow_up_in_a_thread_continues_the_conversation_on_the_same_project(
        service: httpx.AsyncClient, http_ws: Path) -> None:
    first = (await service.post("/v1/runs", json={"brief": POTION})).json()
    run1 = await _terminal(service, first["run_id"])
    follow = await service.post("/v1/runs", json={"brief": "keep the gameplay, make it a snowy frozen tavern",
                                                  "thread_id": first["thread_id"]})
    assert follow.status_code == 202 and follow.json()["project_id"] == first["project_id"]
    run2 = await _terminal(service, follow.json()["run_id"])
    assert run1["status"] == run2["status"] == "delivered"
    # the prior conversation came along: the follow-up writer's first call already carries the first run's
    # (the follow-up as a whole may cost less: only what its change invalidated is redone)
    async def first_writer_call(run_id: str) -> int:
        calls = (await service.get(f"/v1/runs/{run_id}/trajectory")).json()["calls"]
        return next(c["input_tokens"] for c in calls if c["kind"] == "model" and c["agent"] == "writer")
    assert await first_writer_call(follow.json()["run_id"]) > await first_writer_call(first["run_id"])
    assert run2["usage"]["model_calls"] < run1["usage"]["model_calls"]  # and it redid less than the first run
    thread = (await service.get(f"/v1/threads/{first['thread_id']}")).json()
    assert [r["run_id"] for r in thread["runs"]] == [first["run_id"], follow.json()["run_id"]]
    assert "project_dir" not in run2
    theme = json.loads((http_ws / "projects" / first["project_id"] / "data/theme.json").read_text())
    assert "snow" in json.dumps(theme).lower() or "frozen" in json.dumps(theme).lower()
    assert (await service.get("/v1/threads/t-unknown")).status_code == 404
