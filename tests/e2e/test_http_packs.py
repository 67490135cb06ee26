"""One service, every allowed pack: a service whose default pack is Phaser serves a ``"pack": "pixi"`` run end to end
offline (delivered with the PixiJS pack, its project stamped with it) and, in the same worker, a run that names no
pack with the default; a follow-up on the PixiJS project asking for another pack, and an unknown pack, are 422s.
An uploaded project is adopted with the pack whose engine its sources import."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.helpers import serve_in_process, template_zip, wait_finished
from tier2.settings.loader import REPO_ROOT, Settings, load_security

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.browser, pytest.mark.redis]
CLICKER = "a cookie clicker where I click a giant cookie to bake cookies and buy ovens and grandmas"
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


@pytest.fixture
async def service(tmp_path: Path, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    assert load_security(REPO_ROOT / "config").default_pack == "phaser"  # what "the default" means below
    settings = Settings(workspaces=tmp_path, redis_url=redis_url)
    async with serve_in_process(settings, redis_url, workers=1) as client:
        yield client


def _made_with(workspaces: Path, project_id: str) -> str:
    return str(json.loads((workspaces / "projects" / project_id / ".tier2" / "project.json").read_text())["pack"])


async def test_one_worker_serves_each_run_with_the_pack_it_names(service: httpx.AsyncClient, tmp_path: Path) -> None:
    unknown = await service.post("/v1/runs", json={"brief": CLICKER, "pack": "nope"})
    assert unknown.status_code == 422 and "pack 'nope' is not installed" in unknown.text, unknown.text

    pixi = await service.post("/v1/runs", json={"brief": CLICKER, "pack": "pixi"})
    assert pixi.status_code == 202, pixi.text
    run = await wait_finished(service, pixi.json()["run_id"])
    assert run["status"] == "delivered", run
    delivery = (await service.get(f"/v1/runs/{pixi.json()['run_id']}/delivery")).json()
    assert delivery["pack"] == "pixi@1.0.0" and delivery["status"] == "delivered"
    assert _made_with(tmp_path, pixi.json()["project_id"]) == "pixi@1.0.0"

    default = await service.post("/v1/runs", json={"brief": POTION})  # no pack named: the default, same worker
    assert default.status_code == 202, default.text
    run = await wait_finished(service, default.json()["run_id"])
    assert run["status"] == "delivered", run
    delivery = (await service.get(f"/v1/runs/{default.json()['run_id']}/delivery")).json()
    assert delivery["pack"] == "phaser@1.0.0"
    assert _made_with(tmp_path, default.json()["project_id"]) == "phaser@1.0.0"

    switch = await service.post("/v1/runs", json={"brief": "keep it, but make the cookies chocolate",
                                                  "thread_id": pixi.json()["thread_id"], "pack": "phaser"})
    assert switch.status_code == 422, switch.text
    assert f"project {pixi.json()['project_id']} was made with pack 'pixi'" in switch.text
    assert _made_with(tmp_path, pixi.json()["project_id"]) == "pixi@1.0.0"  # untouched


async def test_an_uploaded_project_gets_the_pack_its_sources_import(service: httpx.AsyncClient) -> None:
    toolchain = (await service.get("/v1/health")).json()["toolchain"]  # what the service serves
    assert toolchain["ok"] and toolchain["pack"] == "phaser@1.0.0"
    assert toolchain["packs"] == ["phaser@1.0.0", "pixi@1.0.0"]
    zipped = {"Content-Type": "application/zip"}
    loaded = {}
    for pack, genre in (("pixi", "clicker"), ("phaser", "clicker")):
        r = await service.post("/v1/projects", content=template_zip(pack=pack, genre=genre), headers=zipped)
        assert r.status_code == 201, r.text
        assert r.json()["pack"] == f"{pack}@1.0.0"
        loaded[pack] = r.json()["project_id"]
    switch = await service.post("/v1/runs", json={"brief": CLICKER, "project_id": loaded["pixi"], "pack": "phaser"})
    assert switch.status_code == 422, switch.text
    assert f"project {loaded['pixi']} was made with pack 'pixi'" in switch.text
