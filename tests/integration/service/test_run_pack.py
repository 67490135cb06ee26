"""``"pack"`` on ``POST /v1/runs`` (`served_pack`, `run_pack`): every pack the service loaded is accepted and
recorded with the run; any other is refused with the reason — not installed, not allowed — and nothing is
accepted: a brief is never built with an engine it did not ask for. A run on a project (a loaded one, a thread's
follow-up) uses the pack the project was made with; asking it for another is refused."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
import redis.asyncio as aioredis

from tier2.app import build_app
from tier2.errors import BadInput
from tier2.packs import load_pack
from tier2.runs import Runtime
from tier2.runs.submit import run_pack, served_pack
from tier2.service import deps
from tier2.settings.loader import REPO_ROOT, PolicyStore, Settings, load_security
from tier2.store.keys import Keys
from tier2.store.run_store import RunStore

PHASER = load_pack(REPO_ROOT / "capability_packs", "phaser")
PIXI = load_pack(REPO_ROOT / "capability_packs", "pixi")


def test_served_pack_accepts_every_loaded_pack_and_says_why_not_for_others(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    for pid in ("phaser", "pixi", "other", "banned"):
        (packs / pid).mkdir(parents=True)
        (packs / pid / "pack.yaml").write_text(f"id: {pid}\n")
    security = load_security(REPO_ROOT / "config").model_copy(update={"allowed_packs": ["phaser", "pixi", "other"]})
    rt = SimpleNamespace(pack=PHASER, packs={"phaser": PHASER, "pixi": PIXI}, security=security,
                         settings=SimpleNamespace(packs_dir=packs))
    assert served_pack(rt, "phaser") == "phaser"  # type: ignore[arg-type]
    assert served_pack(rt, "pixi") == "pixi"  # type: ignore[arg-type]
    for asked, says in (("nope", "is not installed (installed: banned, other, phaser, pixi)"),
                        ("banned", "is not allowed here"), ("other", "was not loaded by this service")):
        with pytest.raises(BadInput, match=says.replace("(", r"\(").replace(")", r"\)")):
            served_pack(rt, asked)  # type: ignore[arg-type]


def test_run_pack_is_the_projects_and_another_is_refused(tmp_path: Path) -> None:
    rt = SimpleNamespace(pack=PHASER, packs={"phaser": PHASER, "pixi": PIXI},
                         security=load_security(REPO_ROOT / "config"),
                         settings=SimpleNamespace(packs_dir=REPO_ROOT / "capability_packs"))
    made = tmp_path / "made"
    (made / ".tier2").mkdir(parents=True)
    (made / ".tier2" / "project.json").write_text(json.dumps({"project_id": "p-made", "path": str(made),
                                                              "pack": PIXI.ref, "created_at": 1.0}))
    assert run_pack(rt, None, None, "p-new") == "phaser"  # type: ignore[arg-type]  # the default
    assert run_pack(rt, "pixi", None, "p-new") == "pixi"  # type: ignore[arg-type]
    assert run_pack(rt, None, str(made), "p-made") == "pixi"  # type: ignore[arg-type]  # the project's own
    assert run_pack(rt, "pixi", str(made), "p-made") == "pixi"  # type: ignore[arg-type]
    with pytest.raises(BadInput, match="project p-made was made with pack 'pixi': its runs use that pack, not "
                                       "'phaser'"):
        run_pack(rt, "phaser", str(made), "p-made")  # type: ignore[arg-type]
    assert run_pack(rt, "pixi", str(tmp_path / "not-yet"), "p-x") == "pixi"  # type: ignore[arg-type]


@pytest.fixture
async def client(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, RunStore]]:
    store = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True),
                     Keys(prefix=f"pk-{uuid.uuid4().hex[:8]}"))
    settings = Settings(workspaces=tmp_path / "ws", redis_url=redis_url)
    app = build_app(settings, redis_url, workers=0)
    rt = Runtime(settings=settings, security=load_security(REPO_ROOT / "config"),
                 policies=PolicyStore(REPO_ROOT / "config"), pack=PHASER, pool=None, store=store,  # type: ignore[arg-type]
                 redis_url=redis_url, packs={"phaser": PHASER, "pixi": PIXI})
    app.dependency_overrides[deps.runtime] = lambda: rt
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
        yield c, store
    await store.close()


@pytest.mark.redis
async def test_a_run_names_any_loaded_pack_and_an_unknown_one_is_refused(
        client: tuple[httpx.AsyncClient, RunStore]) -> None:
    c, store = client
    refused = await c.post("/v1/runs", json={"brief": "a pixel maze with a mouse and cheese", "pack": "nope"})
    assert refused.status_code == 422, refused.text
    assert "pack 'nope' is not installed" in refused.text
    assert await store.r.zcard(store.keys.runs_index()) == 0              # nothing accepted
    bad = await c.post("/v1/runs", json={"brief": "a pixel maze with a mouse and cheese", "pack": "../phaser"})
    assert bad.status_code == 422                                         # not even an id
    runs = {}
    for asked in ("pixi", "phaser", None):
        ok = await c.post("/v1/runs", json={"brief": "a pixel maze with a mouse and cheese",
                                            **({"pack": asked} if asked else {})})
        assert ok.status_code == 202, ok.text
        runs[asked] = ok.json()
    assert await store.r.zcard(store.keys.runs_index()) == 3
    for asked, want in (("pixi", "pixi"), ("phaser", "phaser"), (None, "phaser")):  # recorded: the worker's pack
        record = await store.get_record(runs[asked]["run_id"])
        assert record is not None and record.options["pack"] == want


@pytest.mark.redis
async def test_a_follow_up_asking_another_pack_than_its_projects_is_refused(
        client: tuple[httpx.AsyncClient, RunStore], tmp_path: Path) -> None:
    c, store = client
    first = (await c.post("/v1/runs", json={"brief": "a pixel maze with a mouse and cheese", "pack": "pixi"})).json()
    project = tmp_path / "ws" / "projects" / first["project_id"]  # what its run made (as the worker writes it)
    (project / ".tier2").mkdir(parents=True)
    (project / ".tier2" / "project.json").write_text(json.dumps({"project_id": first["project_id"],
                                                                 "path": str(project), "pack": PIXI.ref,
                                                                 "created_at": 1.0}))
    await store.r.delete(store.keys.project_active(first["project_id"]))  # as if its run had ended
    refused = await c.post("/v1/runs", json={"brief": "now make the maze snowy", "thread_id": first["thread_id"],
                                             "pack": "phaser"})
    assert refused.status_code == 422, refused.text
    assert f"project {first['project_id']} was made with pack 'pixi'" in refused.text
    follow = await c.post("/v1/runs", json={"brief": "now make the maze snowy", "thread_id": first["thread_id"]})
    assert follow.status_code == 202, follow.text
    record = await store.get_record(follow.json()["run_id"])
    assert record is not None and record.options["pack"] == "pixi"  # the project's, unasked
