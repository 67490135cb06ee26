"""Uploads are charged what they unpack to (issue #21, M7), on the real service (uvicorn, Redis, real files): a few
KB that expand past the tenant's ``disk_bytes`` — a zip (its declared total, before anything is written) or a
gzipped tar (as it streams) — are a 507 ``quota_exceeded`` naming used and limit; nothing of the tenant's is lost,
nothing of the refused import is left, and another tenant with room loads the very same archive."""

from __future__ import annotations

import gzip
import hashlib
import io
import shutil
import tarfile
import uuid
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aioredis

from tests.e2e.helpers import serve_in_process, template_zip
from tier2.packs import load_pack
from tier2.settings.loader import REPO_ROOT, Settings
from tier2.store.keys import Keys
from tier2.store.quotas import QuotaStore

pytestmark = [pytest.mark.e2e, pytest.mark.redis]
DISK = 3_000_000
KEYS = {t: {"Authorization": f"Bearer key-of-{t}-0123"} for t in ("tight", "roomy", "full")}
BOMB = 15_000_000  # zeros: ~15 KB compressed
TEMPLATE = template_zip()
#: room for the template's files, not for the ``.tier2/project.json`` tier2 adds: loading it fills the quota
FULL = sum(i.file_size for i in zipfile.ZipFile(io.BytesIO(TEMPLATE)).infolist()) + 64
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


def _zip_bomb() -> bytes:
    return template_zip({"my-game/assets/zeros.bin": bytes(BOMB)}, compression=zipfile.ZIP_DEFLATED)


def _tgz_bomb() -> bytes:
    raw = io.BytesIO()
    template = load_pack(REPO_ROOT / "capability_packs", "phaser").genre("shop").template_dir  # composed
    with tarfile.open(fileobj=raw, mode="w") as tf:
        tf.add(template, arcname="my-game")
        info = tarfile.TarInfo("my-game/assets/zeros.bin")
        info.size = BOMB
        tf.addfile(info, io.BytesIO(bytes(BOMB)))
    return gzip.compress(raw.getvalue())


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
async def service(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    root = tmp_path_factory.mktemp("storage")
    config = root / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    prefix = f"sq-{uuid.uuid4().hex[:8]}"
    (config / "security" / "zz-test.toml").write_text(
        "[imports]\nmax_ratio = 100000.0\n"  # past the ratio check: what stops these archives is the disk quota
        f"[tenants.overrides.tight]\ndisk_bytes = {DISK}\n[tenants.overrides.full]\ndisk_bytes = {FULL}\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIER2_API_KEYS", ",".join(f"{t}:key-of-{t}-0123" for t in KEYS))
        settings = Settings(workspaces=root / "ws", redis_url=redis_url, config_dir=config, key_prefix=prefix)
        async with serve_in_process(settings, redis_url, workers=0) as client:
            client.keys = Keys(prefix=prefix)  # type: ignore[attr-defined]
            client.workspaces = root / "ws"  # type: ignore[attr-defined]
            yield client


async def test_a_compressible_upload_is_charged_unpacked_and_refused_over_the_disk_quota(
        service: httpx.AsyncClient, redis_url: str) -> None:
    zip_type, tgz_type = {"Content-Type": "application/zip"}, {"Content-Type": "application/gzip"}
    first = await service.post("/v1/projects", content=template_zip(), headers={**KEYS["tight"], **zip_type})
    assert first.status_code == 201, first.text
    kept = first.json()["project_id"]
    projects = service.workspaces / "projects"  # type: ignore[attr-defined]
    before = _files(projects / kept)
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    quotas = QuotaStore(r, service.keys)  # type: ignore[attr-defined]
    used = await quotas.disk_used("tight")
    assert 0 < used < DISK

    for body, headers in ((_zip_bomb(), zip_type), (_tgz_bomb(), tgz_type)):
        assert len(body) < 200_000 < DISK < BOMB  # small on the wire, large on disk
        refused = await service.post("/v1/projects", content=body, headers={**KEYS["tight"], **headers})
        assert refused.status_code == 507, refused.text
        error = refused.json()["error"]
        assert error["code"] == "quota_exceeded"
        assert error["quota"] == {"name": "disk_bytes", "used": used, "limit": DISK}
        assert f"use {used} of {DISK} bytes (disk_bytes)" in error["message"]
        # nothing already stored is lost, nothing of the refused import is left, the reservation is gone
        assert sorted(p.name for p in projects.iterdir()) == [kept]
        assert _files(projects / kept) == before
        assert (await service.get(f"/v1/projects/{kept}", headers=KEYS["tight"])).status_code == 200
        assert await quotas.disk_used("tight") == used

    other = await service.post("/v1/projects", content=_zip_bomb(), headers={**KEYS["roomy"], **zip_type})
    assert other.status_code == 201, other.text  # another tenant, with room: the same archive loads
    assert await quotas.disk_used("roomy") > BOMB  # and is charged what it unpacked to
    await r.aclose()


async def test_a_tenant_over_its_disk_quota_gets_507_for_runs_and_uploads_and_others_do_not(
        service: httpx.AsyncClient) -> None:
    zip_type = {"Content-Type": "application/zip"}
    retried = {**KEYS["full"], "Idempotency-Key": "before-the-disk-filled"}
    first = await service.post("/v1/runs", json={"brief": POTION}, headers=retried)
    assert first.status_code == 202, first.text
    loaded = await service.post("/v1/projects", content=TEMPLATE, headers={**KEYS["full"], **zip_type})
    assert loaded.status_code == 201, loaded.text  # its files fit; with tier2's metadata the tenant is now over
    project_id = loaded.json()["project_id"]
    for refused in (await service.post("/v1/runs", json={"brief": POTION}, headers=KEYS["full"]),
                    await service.post("/v1/runs", json={"brief": POTION, "project_id": project_id},
                                       headers=KEYS["full"]),
                    await service.post("/v1/projects", content=TEMPLATE, headers={**KEYS["full"], **zip_type})):
        assert refused.status_code == 507, refused.text
        quota = refused.json()["error"]["quota"]
        assert quota["name"] == "disk_bytes" and quota["limit"] == FULL and quota["used"] > FULL
    assert (await service.get(f"/v1/projects/{project_id}", headers=KEYS["full"])).status_code == 200
    replay = await service.post("/v1/runs", json={"brief": POTION}, headers=retried)  # a retry still gets its run
    assert replay.status_code == 202 and replay.json()["run_id"] == first.json()["run_id"], replay.text
    assert replay.headers["Idempotent-Replayed"] == "true"
    accepted = await service.post("/v1/runs", json={"brief": POTION}, headers=KEYS["roomy"])
    assert accepted.status_code == 202, accepted.text  # another tenant is unaffected
