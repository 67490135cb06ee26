"""``"pack"`` on ``POST /v1/runs`` (and `served_pack`): the service's own pack is accepted; any other is refused with
the reason — not installed, not allowed, or allowed but run by another process — and nothing is accepted: a brief
is never built with an engine it did not ask for."""

from __future__ import annotations

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
from tier2.runs.submit import served_pack
from tier2.service import deps
from tier2.settings.loader import REPO_ROOT, PolicyStore, Settings, load_security
from tier2.store.keys import Keys
from tier2.store.run_store import RunStore

PHASER = load_pack(REPO_ROOT / "capability_packs", "phaser")


def test_served_pack_accepts_its_own_and_says_why_not_for_others(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    for pid in ("phaser", "other", "banned"):
        (packs / pid).mkdir(parents=True)
        (packs / pid / "pack.yaml").write_text(f"id: {pid}\n")
    security = load_security(REPO_ROOT / "config").model_copy(update={"allowed_packs": ["phaser", "other"]})
    rt = SimpleNamespace(pack=PHASER, security=security, settings=SimpleNamespace(packs_dir=packs))
    assert served_pack(rt, "phaser") == "phaser"  # type: ignore[arg-type]
    for asked, says in (("nope", "is not installed (installed: banned, other, phaser)"),
                        ("banned", "is not allowed here"), ("other", "TIER2_PACK=other")):
        with pytest.raises(BadInput, match=says.replace("(", r"\(").replace(")", r"\)")):
            served_pack(rt, asked)  # type: ignore[arg-type]


@pytest.fixture
async def client(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, RunStore]]:
    store = RunStore(aioredis.Redis.from_url(redis_url, decode_responses=True),
                     Keys(prefix=f"pk-{uuid.uuid4().hex[:8]}"))
    settings = Settings(workspaces=tmp_path / "ws", redis_url=redis_url)
    app = build_app(settings, redis_url, workers=0)
    rt = Runtime(settings=settings, security=load_security(REPO_ROOT / "config"),
                 policies=PolicyStore(REPO_ROOT / "config"), pack=PHASER, pool=None, store=store,  # type: ignore[arg-type]
                 redis_url=redis_url)
    app.dependency_overrides[deps.runtime] = lambda: rt
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
        yield c, store
    await store.close()


@pytest.mark.redis
async def test_a_run_for_another_pack_is_refused_and_nothing_accepted(
        client: tuple[httpx.AsyncClient, RunStore]) -> None:
    c, store = client
    refused = await c.post("/v1/runs", json={"brief": "a pixel maze with a mouse and cheese", "pack": "pixi"})
    assert refused.status_code == 422, refused.text
    assert "pack 'pixi' is not installed" in refused.text
    assert await store.r.zcard(store.keys.runs_index()) == 0              # nothing accepted
    bad = await c.post("/v1/runs", json={"brief": "a pixel maze with a mouse and cheese", "pack": "../phaser"})
    assert bad.status_code == 422                                         # not even an id
    ok = await c.post("/v1/runs", json={"brief": "a pixel maze with a mouse and cheese", "pack": "phaser"})
    assert ok.status_code == 202, ok.text
    assert await store.r.zcard(store.keys.runs_index()) == 1
