"""A tenant's disk quota holds against what its writer produces (issue #21, M7): a run whose files take the tenant
past ``disk_bytes`` stops at the next step naming the quota, keeps every file it wrote, and the tenant's next
submission is refused (507) while another tenant's is accepted; the ended run's snapshots are freed by the GC.
Real run session, real Redis, real files; only the model is scripted."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from agentscope.message import Msg, TextBlock, ToolCallBlock

from tier2.errors import QuotaExceeded
from tier2.runs import execute_run
from tier2.runs.process.runtime import Runtime, open_runtime
from tier2.runs.request import RunRequest, new_run_id
from tier2.runs.submit import RunSubmission, submit_run
from tier2.settings.loader import Settings
from tier2.store.keys import Keys
from tier2.store.quotas import QuotaStore
from tier2.store.snapshots import SnapshotStore
from tier2.testing import ScriptedChatModel, tool_results

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]
BRIEF = "a potion shop tycoon where I brew potions from herbs"
QUOTA = 250_000


@pytest.fixture
async def quota_runtime(tmp_path: Path, redis_url: str, config_dir: Path) -> AsyncIterator[Runtime]:
    (config_dir / "security" / "zz-quota.toml").write_text(f"[tenants.overrides.local]\ndisk_bytes = {QUOTA}\n")
    settings = Settings(workspaces=tmp_path / "ws", redis_url=redis_url, config_dir=config_dir)
    async with open_runtime(settings, redis_url, Keys(prefix=f"test-{tmp_path.name}")) as rt:
        yield rt


async def test_a_run_past_the_disk_quota_stops_and_the_tenant_is_refused_until_it_has_room(
        quota_runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rt = quota_runtime
    run_id, project_id = new_run_id(), "p-quota"
    project = (tmp_path / "ws" / "projects" / project_id).resolve()
    chunk = "x" * 100_000  # the template and design (~90 KB) and one fit the quota, a second one passes it
    calls = [("Write", {"file_path": str(project / "assets" / f"big{i}.txt"), "content": chunk}) for i in range(3)]

    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)
        if done < len(calls):
            name, args = calls[done]
            return [ToolCallBlock(id=f"q{done}", name=name, input=json.dumps(args))]
        return [TextBlock(text="done")]

    model = ScriptedChatModel(script, model="tier2-offline-policy-v1")
    await rt.store.accept_run(run_id, {"status": "queued", "brief": BRIEF, "project_id": project_id,
                                       "project_dir": str(project)}, project_id=project_id, dispatch=False)
    outcome = await execute_run(rt, RunRequest(
        brief=BRIEF, scripted_models={"writer": model}, run_id=run_id, project_id=project_id,
        out_dir=project))
    assert outcome.status == "stopped", outcome.stop_reason
    assert outcome.stop_reason.startswith("quota: ") and "disk_bytes" in outcome.stop_reason
    assert f"quota of {QUOTA} bytes" in outcome.stop_reason
    assert (project / "assets" / "big0.txt").stat().st_size == 100_000  # nothing already stored is lost
    assert (project / "assets" / "big1.txt").stat().st_size == 100_000
    assert not (project / "assets" / "big2.txt").exists()  # stopped before the model asked for more
    quotas = QuotaStore(rt.store.r, rt.store.keys)
    used = await quotas.disk_used("local")
    assert used > QUOTA

    with pytest.raises(QuotaExceeded) as refused:
        await submit_run(rt, RunSubmission(tenant="local", brief=BRIEF))
    assert (refused.value.quota, refused.value.used, refused.value.limit) == ("disk_bytes", used, QUOTA)
    assert f"use {used} of {QUOTA} bytes" in str(refused.value)
    accepted = await submit_run(rt, RunSubmission(tenant="other", brief=BRIEF))  # another tenant is unaffected
    assert accepted.run.status == "queued"
    # the ended run can never resume: the GC after it freed its snapshots
    assert await SnapshotStore(rt.store.r, rt.store.keys, "local").used() == 0
