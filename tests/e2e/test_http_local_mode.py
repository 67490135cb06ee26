"""Issue #21, local mode hardened (M4, M5) and the API's low findings (a, e, g), on the real service (uvicorn, Redis,
Chromium): a web page the user visits must not be able to drive a local service, nor a game page to act as the API.

* M5 — DNS rebinding: requests naming a foreign ``Host`` (crafted, and from a real Chromium whose resolver maps an
  attacker's name to 127.0.0.1) are refused before any route runs; a cross-site ``POST`` is refused too.
* M4 — artifacts are sandboxed downloads: a hostile ``dist/index.html`` opened at its artifact URL never runs; the
  game is played through the play route, whose sandbox keeps it away from the API.
* (a) a non-ASCII ``?token=`` is a 401; (e) budgets are JSON numbers; (g) 400 and 405 (``Allow``) are documented.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, async_playwright

from tests.e2e.helpers import play_in_chromium, serve_in_process, wait_finished
from tier2.browser import find_chromium
from tier2.settings.loader import REPO_ROOT, Settings, load_security

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]  # its service warms Chromium
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
KEY = "key-of-local-mode-4242"
HOSTILE = "a rebinding attack started this run from a game page"
#: a game page that tries to act as the API: list the user's runs (their briefs) and start one
HOSTILE_PAGE = f"""<!doctype html><title></title><script>
fetch('/v1/runs').then(r => r.text()).then(runs => fetch('/v1/runs', {{method: 'POST',
  body: JSON.stringify({{brief: {json.dumps(HOSTILE)} + ' ' + runs.length}})}}))
  .then(r => {{ document.title = 'posted ' + r.status; }}, e => {{ document.title = 'blocked'; }});
</script>"""


@pytest.fixture(scope="module")
def local_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("local-mode") / "ws"


@pytest.fixture(scope="module")
async def local(local_ws: Path, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """The service in local mode (no API keys), with one extra trusted name."""
    ws = local_ws
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("TIER2_API_KEYS", raising=False)
        settings = Settings(workspaces=ws, redis_url=redis_url, key_prefix="local-mode", trusted_hosts="tier2.lan")
        async with serve_in_process(settings, redis_url) as client:
            yield client


@pytest.fixture(scope="module")
async def keyed(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIER2_API_KEYS", f"tenant-k:{KEY}")
        settings = Settings(workspaces=tmp_path_factory.mktemp("keyed") / "ws", redis_url=redis_url,
                            key_prefix="keyed-mode")
        async with serve_in_process(settings, redis_url, workers=0) as client:
            yield client


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    """A Chromium of the test's own whose resolver maps the attacker's names to loopback (what DNS rebinding does),
    launched here so that no flag of tier2's game browser (proxy, resolver rules) changes what it reaches."""
    exe = find_chromium(None, load_security(REPO_ROOT / "config").browser.executables)
    async with async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=exe, headless=True, args=[
            "--no-sandbox", "--host-resolver-rules=MAP rebind.attacker.test 127.0.0.1, MAP tier2.lan 127.0.0.1"])
        try:
            yield b
        finally:
            await b.close()


@pytest.fixture(scope="module")
async def delivered(local: httpx.AsyncClient) -> dict[str, Any]:
    r = await local.post("/v1/runs", json={"brief": POTION})
    assert r.status_code == 202, r.text
    run = await wait_finished(local, r.json()["run_id"])
    assert run["status"] == "delivered", run
    return run


def _port(client: httpx.AsyncClient) -> int:
    port = client.base_url.port
    assert port is not None
    return port


def _refused(r: httpx.Response, status: int, code: str, words: str) -> None:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert body["error"]["code"] == code and words in body["error"]["message"], body


async def _briefs(client: httpx.AsyncClient) -> list[str]:
    r = await client.get("/v1/runs", params={"limit": 200})
    assert r.status_code == 200, r.text
    return [run["brief"] for run in r.json()["runs"]]


# -- M5: Host and Origin -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["attacker.example", "rebind.attacker.test:{port}", "192.168.1.20:{port}",
                                  "127.0.0.1.attacker.example", "evil.example@127.0.0.1", "[::2]:{port}", ""])
async def test_a_foreign_host_is_refused_on_every_route(local: httpx.AsyncClient, host: str) -> None:
    host = host.format(port=_port(local))
    for method, path in (("GET", "/healthz"), ("GET", "/v1/runs"), ("GET", "/studio"), ("GET", "/openapi.json"),
                         ("POST", "/v1/runs")):
        body = json.dumps({"brief": HOSTILE}).encode() if method == "POST" else None
        r = await local.request(method, path, content=body, headers={"Host": host})
        _refused(r, 400, "invalid_request", "untrusted Host header")
    assert HOSTILE not in " ".join(await _briefs(local))


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST.", "[::1]:{port}", "tier2.lan"])
async def test_loopback_names_and_configured_names_are_served(local: httpx.AsyncClient, host: str) -> None:
    r = await local.get("/v1/runs", headers={"Host": host.format(port=_port(local))})
    assert r.status_code == 200, r.text


async def test_a_rebinding_page_in_chromium_reads_and_starts_nothing(local: httpx.AsyncClient,
                                                                     browser: Browser) -> None:
    """The attack as a browser makes it: the attacker's name resolves to 127.0.0.1, the page is "same origin" with
    the service, and its requests name the attacker's host."""
    page = await browser.new_page()
    try:
        attacker = f"http://rebind.attacker.test:{_port(local)}"
        shown = await page.goto(f"{attacker}/v1/runs")
        assert shown is not None and shown.status == 400
        assert "untrusted Host header" in await page.content() and POTION not in await page.content()
        posted = await page.evaluate("""async (brief) => {
            const r = await fetch('/v1/runs', {method: 'POST', body: JSON.stringify({brief})});
            return [r.status, await r.text()]; }""", HOSTILE)
        assert posted[0] == 400 and "untrusted Host header" in posted[1]
        trusted = await page.goto(f"http://tier2.lan:{_port(local)}/studio")  # a configured name still works
        assert trusted is not None and trusted.status == 200
    finally:
        await page.close()
    assert HOSTILE not in " ".join(await _briefs(local))


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1.evil.example:80"])
async def test_a_cross_site_post_is_refused(local: httpx.AsyncClient, origin: str) -> None:
    """A page of another site can send a no-CORS POST to 127.0.0.1 with a JSON body and no Content-Type."""
    r = await local.post("/v1/runs", content=json.dumps({"brief": HOSTILE}).encode(), headers={"Origin": origin})
    _refused(r, 403, "forbidden", "cross-origin request refused")
    assert HOSTILE not in " ".join(await _briefs(local))


async def test_the_services_own_pages_may_post(local: httpx.AsyncClient) -> None:
    r = await local.post("/v1/runs", json={"brief": "  "}, headers={"Origin": f"http://localhost:{_port(local)}"})
    assert r.status_code == 422 and "brief is empty" in r.text  # past the guard, refused by the route itself


# -- M4: artifacts are downloads; the game plays through the play route ------------------------------------------


async def test_artifacts_are_sandboxed_downloads(local: httpx.AsyncClient, delivered: dict[str, Any]) -> None:
    run_id = delivered["run_id"]
    for name, filename in (("dist/index.html", "index.html"), ("dist/bundle.js", "bundle.js"),
                           ("screenshot.png", "screenshot.png"), ("delivery.json", "delivery.json")):
        r = await local.get(f"/v1/runs/{run_id}/artifacts/{name}")
        assert r.status_code == 200, (name, r.text)
        assert r.headers["content-security-policy"] == "sandbox", name
        assert r.headers["x-content-type-options"] == "nosniff", name
        assert r.headers["content-disposition"] == f'attachment; filename="{filename}"', name
    assert delivered["links"]["play"] == f"/v1/runs/{run_id}/play-token"


async def test_a_hostile_game_page_cannot_act_as_the_api(local: httpx.AsyncClient, delivered: dict[str, Any],
                                                         local_ws: Path, browser: Browser, viewer_pool: Any) -> None:
    """The game still plays through ``links.play``; then the page is replaced by one that reads the runs and starts
    one: at its artifact URL it is a download (nothing runs); through the play route it runs sandboxed and reaches
    nothing of the API."""
    run_id = delivered["run_id"]
    grant = (await local.post(f"/v1/runs/{run_id}/play-token")).json()
    seen = await play_in_chromium(viewer_pool, f"{local.base_url}{grant['url']}")
    assert seen["errors"] == [] and seen["after"]["money"] < seen["before"]["money"]

    context = await browser.new_context(accept_downloads=True)
    try:
        page = await context.new_page()
        (local_ws / "projects" / delivered["project_id"] / "dist" / "index.html").write_text(HOSTILE_PAGE)
        async with page.expect_download(timeout=20_000) as download:  # old code: the page ran instead
            with pytest.raises(Exception, match="Download is starting"):
                await page.goto(f"{local.base_url}/v1/runs/{run_id}/artifacts/dist/index.html")
        assert (await download.value).suggested_filename == "index.html"
        play = (await local.post(f"/v1/runs/{run_id}/play-token")).json()["url"]
        await page.goto(f"{local.base_url}{play}")
        await page.wait_for_function("document.title !== ''")
        assert await page.title() == "blocked"  # the play CSP: no request outside the game's own files
    finally:
        await context.close()
    assert HOSTILE not in " ".join(await _briefs(local))



# -- (a) tokens, (e) budgets, (g) the OpenAPI document -------------------------------------------------------------


@pytest.mark.parametrize("token", ["é", "ünïcode.mac", "eyJ0Ijoi.Zm9v\u00e9", "\u2603.\u2603", "a.b"])
async def test_a_token_that_is_not_a_signed_token_is_a_401(keyed: httpx.AsyncClient, token: str) -> None:
    """Non-ASCII text used to reach ``hmac.compare_digest`` as str: a 500."""
    A = {"Authorization": f"Bearer {KEY}"}
    run_id = (await keyed.post("/v1/runs", json={"brief": POTION}, headers=A)).json()["run_id"]
    r = await keyed.get(f"/v1/runs/{run_id}/events", params={"token": token})
    _refused(r, 401, "unauthorized", "invalid or expired stream token")


@pytest.mark.parametrize("budget", [{"usd": True}, {"usd": "5"}, {"tokens": True}, {"tokens": "5"},
                                    {"tokens": 5.5}, {"deadline_s": False}, {"deadline_s": "60"}])
async def test_budgets_are_json_numbers(keyed: httpx.AsyncClient, budget: dict[str, Any]) -> None:
    A = {"Authorization": f"Bearer {KEY}"}
    r = await keyed.post("/v1/runs", json={"brief": POTION, "budget": budget}, headers=A)
    (field,) = budget
    _refused(r, 422, "invalid_request", f"body.budget.{field}")
    assert "valid number" in r.text or "valid integer" in r.text, r.text


async def test_numeric_budgets_are_still_accepted(keyed: httpx.AsyncClient) -> None:
    A = {"Authorization": f"Bearer {KEY}"}
    r = await keyed.post("/v1/runs", json={"brief": POTION, "budget": {"usd": 1, "tokens": 1000, "deadline_s": 60.5}},
                         headers=A)
    assert r.status_code == 202, r.text


async def test_400_and_405_with_allow_are_documented_and_answered(keyed: httpx.AsyncClient) -> None:
    A = {"Authorization": f"Bearer {KEY}"}
    spec = (await keyed.get("/openapi.json", headers=A)).json()
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            assert {"400", "405"} <= set(op["responses"]), (method, path)
            assert "Allow" in op["responses"]["405"]["headers"], (method, path)
    r = await keyed.delete("/v1/runs", headers=A)
    _refused(r, 405, "method_not_allowed", "Method Not Allowed")
    assert set(r.headers["allow"].replace(" ", "").split(",")) == {"GET", "POST"}


async def test_with_keys_a_foreign_host_needs_the_key_not_a_name(keyed: httpx.AsyncClient) -> None:
    """With API keys the key is the protection; the Host check applies only when TIER2_TRUSTED_HOSTS is set."""
    r = await keyed.get("/v1/runs", headers={"Host": "tier2.example.com"})
    _refused(r, 401, "unauthorized", "API key")
