"""The routes that let a person browse a run (the list, the design, the validation report and its screenshots, the
game under a play token) on a real store and a real project tree: tenant-scoped, and never a file outside the
project — a symlink planted in the project (by a game, an upload) is refused like a missing file."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aioredis

from tests.integration.routes_helpers import TWO_TENANTS, routes_client
from tier2.store.finish import RunEnd, finish_run
from tier2.store.keys import Keys
from tier2.store.run_store import RunStore

pytestmark = pytest.mark.redis
A = {"Authorization": "Bearer key-of-tenant-a-0001"}
B = {"Authorization": "Bearer key-of-tenant-b-0002"}
PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 16


def _project(root: Path, outside: Path) -> Path:
    """A run's project as the phases leave it: design docs and spec, a check report with screenshots, a build —
    plus symlinks pointing out of the project."""
    (outside / "secret.md").write_text("# the server's secret\n")
    (outside / "secret.png").write_bytes(PNG)
    (outside / "secret.json").write_text('{"secret": true}')
    design = root / "docs/design"
    design.mkdir(parents=True)
    (design / "gameplay.md").write_text("# Gameplay\n\nbuy and/or craft\n")
    (design / "GDD.md").write_text(f"# GDD\n\nwritten in {root}/docs/design by the leader\n")
    (design / "leak.md").symlink_to(outside / "secret.md")
    (root / "design").mkdir()
    (root / "design/spec.json").write_text(json.dumps({"title": "Potions", "genre": "shop", "requirements": []}))
    check = root / ".tier2/reports/check-01"
    check.mkdir(parents=True)
    (check / "01-menu.png").write_bytes(PNG)
    (check / "notes.txt").write_text("not an image")
    (check / "leak.png").symlink_to(outside / "secret.png")
    (check / "report.json").write_text(json.dumps({
        "mode": "contract", "passed": False, "notes": [f"reused from {check}/report.json"],
        "screenshots": [str(check / "01-menu.png")],
        "gates": [{"id": "l2.genre", "layer": "L2", "mode": "enforce", "passed": False, "summary": "mismatch",
                   "findings": [{"message": "the design declares a shooter", "severity": "error"}],
                   "evidence": {"observed_genre": "shop", "bundle": str(root / "dist/bundle.js")}}]}))
    (root / "dist").mkdir()
    (root / "dist/index.html").write_text("<!doctype html><script src=\"bundle.js\"></script>")
    (root / "dist/bundle.js").write_text("window.__TIER2__ = {};")
    (root / "dist/leak.json").symlink_to(outside / "secret.json")
    return root


@pytest.fixture
async def client(redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 ) -> AsyncIterator[tuple[httpx.AsyncClient, RunStore, Path]]:
    store = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True),
                     Keys(prefix=f"rf-{uuid.uuid4().hex[:8]}"))
    outside = tmp_path / "outside"
    outside.mkdir()
    project = _project(tmp_path / "ws" / "game-a1", outside)
    await store.accept_run("r-a1", {"status": "queued", "brief": "a space shooter", "tenant": "tenant-a",
                                    "project_id": "game-a1", "project_dir": str(project)},
                           project_id="game-a1", dispatch=False, tenant="tenant-a")
    await store.accept_run("r-a2", {"status": "queued", "brief": "a bakery", "tenant": "tenant-a",
                                    "project_id": "game-a2"}, project_id="game-a2", dispatch=False, tenant="tenant-a")
    monkeypatch.setenv("TIER2_API_KEYS", TWO_TENANTS)
    async with routes_client(store, tmp_path / "ws", redis_url, base_url="http://studio.test") as c:
        yield c, store, project
    await store.close()


async def test_the_run_list_is_the_callers(client: tuple[httpx.AsyncClient, RunStore, Path]) -> None:
    c, _, _ = client
    mine = (await c.get("/v1/runs", headers=A)).json()
    assert [r["run_id"] for r in mine["runs"]] == ["r-a2", "r-a1"] and mine["next_cursor"] is None
    assert "project_dir" not in mine["runs"][0] and "tenant" not in mine["runs"][0]
    assert (await c.get("/v1/runs", headers=B)).json()["runs"] == []
    page = (await c.get("/v1/runs", params={"limit": 1}, headers=A)).json()
    assert [r["run_id"] for r in page["runs"]] == ["r-a2"]
    rest = (await c.get("/v1/runs", params={"cursor": page["next_cursor"]}, headers=A)).json()
    assert [r["run_id"] for r in rest["runs"]] == ["r-a1"] and rest["next_cursor"] is None
    assert [r["run_id"] for r in (await c.get("/v1/runs?q=SHOOTER&status=queued", headers=A)).json()["runs"]] \
        == ["r-a1"]
    for bad in ({"cursor": "not-a-cursor"}, {"status": "lost"}, {"limit": 0}, {"q": "x\x00"}):
        r = await c.get("/v1/runs", params=bad, headers=A)
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request", bad
    assert (await c.get("/v1/runs")).status_code == 401


async def test_the_design_as_written_without_what_lies_outside(client: tuple[httpx.AsyncClient, RunStore, Path],
                                                                ) -> None:
    c, _, project = client
    design = (await c.get("/v1/runs/r-a1/design", headers=A)).json()
    assert [d["path"] for d in design["docs"]] == ["docs/design/GDD.md", "docs/design/gameplay.md"]
    assert design["spec"]["title"] == "Potions" and "spec_error" not in design
    gdd = design["docs"][0]["text"]
    assert str(project) not in gdd and "written in docs/design by" in gdd  # the server path is masked
    assert "and/or" in design["docs"][1]["text"]  # the rest of a document is content, left as it is
    assert "secret" not in json.dumps(design)
    (project / "design/spec.json").write_text('{"title": ')  # being written
    assert (await c.get("/v1/runs/r-a1/design", headers=A)).json()["spec_error"].startswith("design/spec.json is")
    (project / "design/spec.json").unlink()
    (project / "design/spec.json").symlink_to(project.parent.parent / "outside/secret.json")
    assert "spec" not in (await c.get("/v1/runs/r-a1/design", headers=A)).json()
    assert (await c.get("/v1/runs/r-a1/design", headers=B)).status_code == 404
    assert (await c.get("/v1/runs/r-a2/design", headers=A)).status_code == 409  # no project yet


async def test_the_report_its_evidence_and_its_screenshots(client: tuple[httpx.AsyncClient, RunStore, Path]) -> None:
    c, store, project = client
    report = (await c.get("/v1/runs/r-a1/report", headers=A)).json()
    assert report["path"] == ".tier2/reports/check-01/report.json" and report["passed"] is False
    gate = report["gates"][0]
    assert gate["findings"] == [{"message": "the design declares a shooter", "severity": "error"}]
    assert gate["evidence"]["bundle"] == "dist/bundle.js" and str(project) not in json.dumps(report)
    shot = report["screenshots"][0]
    assert shot["url"] == "/v1/runs/r-a1/artifacts/.tier2/reports/check-01/01-menu.png"
    got = await c.get(shot["url"], headers=A)
    assert got.status_code == 200 and got.content == PNG
    assert (await c.get(shot["url"], headers=B)).status_code == 404
    for name in (".tier2/reports/check-01/leak.png", ".tier2/reports/check-01/notes.txt",
                 ".tier2/reports/check-01/report.json", "dist/leak.json", "docs/design/GDD.md",
                 ".tier2/reports/check-01/../../../dist/../../outside/secret.png"):
        assert (await c.get(f"/v1/runs/r-a1/artifacts/{name}", headers=A)).status_code == 404, name
    assert (await c.get("/v1/runs/r-a1/report", headers=B)).status_code == 404

    final = project / ".tier2/reports/final"  # once the run has ended: the report its delivery names
    final.mkdir()
    (final / "report.json").write_text(json.dumps({"passed": True, "gates": [], "screenshots": []}))
    later = project / ".tier2/reports/check-02"
    later.mkdir()
    (later / "report.json").write_text(json.dumps({"passed": False, "gates": [], "screenshots": []}))
    (project / "delivery.json").write_text(json.dumps({"verification": {"report": str(final / "report.json")}}))
    await store.update_run("r-a1", status="running")
    await finish_run(store, "r-a1", RunEnd(status="delivered", stop_reason="test"))
    assert (await c.get("/v1/runs/r-a1/report", headers=A)).json()["path"] == ".tier2/reports/final/report.json"
    assert (await c.get("/v1/runs/r-a2/report", headers=A)).status_code == 409


async def test_the_game_under_a_play_token(client: tuple[httpx.AsyncClient, RunStore, Path]) -> None:
    c, _, _ = client
    assert (await c.post("/v1/runs/r-a1/play-token", headers=B)).status_code == 404
    assert (await c.post("/v1/runs/r-a1/play-token")).status_code == 401
    grant = (await c.post("/v1/runs/r-a1/play-token", headers=A)).json()
    assert grant["url"] == f"/v1/runs/r-a1/play/{grant['token']}/index.html"
    page = await c.get(grant["url"])  # no key: the token is the capability
    assert page.status_code == 200 and "bundle.js" in page.text
    csp = page.headers["content-security-policy"]
    prefix = f"studio.test/v1/runs/r-a1/play/{grant['token']}/"
    assert csp.startswith("sandbox allow-scripts;") and "default-src 'none'" in csp
    assert f"script-src {prefix} 'unsafe-inline'" in csp and f"connect-src {prefix} data: blob:" in csp
    assert "'self'" not in csp.replace("frame-ancestors 'self'", "")
    assert (await c.get(grant["url"].replace("index.html", "bundle.js"))).status_code == 200
    base = grant["url"].removesuffix("index.html")
    for name in ("leak.json", "..%2Fdelivery.json", "..%2F..%2F..%2Fartifacts%2Fscreenshot.png",
                 "%2e%2e/design/spec.json", "sub%2F..%2F..%2Fdelivery.json"):
        assert (await c.get(base + name)).status_code == 404, name
    # a client that resolves the dots itself lands on the artifact route, which wants the key
    assert (await c.get(base + "../../artifacts/screenshot.png")).status_code == 401
    stream = (await c.post("/v1/runs/r-a1/stream-token", headers=A)).json()["token"]
    assert (await c.get(f"/v1/runs/r-a1/play/{stream}/index.html")).status_code == 401  # another use's token
    assert (await c.get(f"/v1/runs/r-a2/play/{grant['token']}/index.html")).status_code == 401  # another run
    assert (await c.get(f"/v1/runs/r-a1/events?token={grant['token']}")).status_code == 401
    forged = grant["token"][:-2] + ("AA" if not grant["token"].endswith("AA") else "BB")
    assert (await c.get(f"/v1/runs/r-a1/play/{forged}/index.html")).status_code == 401
    r = await c.get("/v1/runs/r-a1/play/not a token/index.html")
    assert r.status_code == 422
    hostile = await c.get(grant["url"], headers={"Host": "evil.test; script-src *"})
    assert "evil" not in hostile.headers.get("content-security-policy", "")


async def test_game_pages_run_the_no_network_script_first_and_other_files_run_no_script(
        client: tuple[httpx.AsyncClient, RunStore, Path]) -> None:
    c, _, project = client
    (project / "dist/evil.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><script>x()</script></svg>')
    (project / "dist/help.htm").write_text("<script>first()</script>")
    grant = (await c.post("/v1/runs/r-a1/play-token", headers=A)).json()
    base = grant["url"].removesuffix("index.html")
    page = await c.get(grant["url"])
    assert page.text.startswith("<!doctype html><script>") and page.headers["content-type"].startswith("text/html")
    assert page.text.index("RTCPeerConnection") < page.text.index('<script src="bundle.js">')
    assert "{ viewer: true }" in page.text  # the viewer's browser: nothing else closes a WebSocket
    other = await c.get(base + "help.htm")
    assert other.text.index("RTCPeerConnection") < other.text.index("first()")
    assert other.headers["content-security-policy"].startswith("sandbox allow-scripts;")
    for name in ("evil.svg", "bundle.js"):
        r = await c.get(base + name)
        assert r.status_code == 200 and "RTCPeerConnection" not in r.text
        csp = r.headers["content-security-policy"]
        assert csp.startswith("sandbox;") and "allow-scripts" not in csp, name
