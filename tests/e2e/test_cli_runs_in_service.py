"""A run started from the CLI (`tier2 generate`) belongs to the local tenant: a local `tier2 serve` (no API keys)
and its Studio list it, with its trajectory; a service with API keys never shows it to a keyed tenant."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.e2e.helpers import run_cli, serve_in_process
from tier2.settings.loader import Settings

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.browser, pytest.mark.redis]

BRIEF = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


async def test_a_cli_run_is_the_local_services_and_no_keyed_tenants(tmp_path: Path, redis_url: str) -> None:
    prefix = f"cli-svc-{uuid.uuid4().hex[:8]}"
    env = {"TIER2_WORKSPACES": str(tmp_path / "ws"), "REDIS_URL": redis_url, "TIER2_KEY_PREFIX": prefix}
    proc = run_cli("generate", BRIEF, "--out", str(tmp_path / "game"), "--json", env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_id = json.loads(proc.stdout)["run_id"]

    settings = Settings(workspaces=tmp_path / "ws", redis_url=redis_url, key_prefix=prefix)
    async with serve_in_process(settings, redis_url, workers=0) as client:
        listed = (await client.get("/v1/runs")).json()
        assert run_id in [r["run_id"] for r in listed["runs"]]
        run = (await client.get(f"/v1/runs/{run_id}")).json()
        assert run["status"] == "delivered"
        traj = (await client.get(f"/v1/runs/{run_id}/trajectory")).json()
        assert traj["summary"]["model_calls"] > 0 and {c["agent"] for c in traj["calls"]} >= {"writer"}

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIER2_API_KEYS", "tenant-a:key-of-tenant-a-123")
        async with serve_in_process(settings, redis_url, workers=0) as client:
            auth = {"Authorization": "Bearer key-of-tenant-a-123"}
            assert (await client.get(f"/v1/runs/{run_id}", headers=auth)).status_code == 404
            assert (await client.get(f"/v1/runs/{run_id}/trajectory", headers=auth)).status_code == 404
            assert run_id not in [r["run_id"] for r in (await client.get("/v1/runs", headers=auth)).json()["runs"]]
