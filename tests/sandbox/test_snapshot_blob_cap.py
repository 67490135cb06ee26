"""H2 in a real sandbox (issue #21): the writer's own command makes a 100 MB file in the project; the snapshot
layer does not read it nor store it in Redis — the run stops with ``quota: ... snapshot_blob_bytes`` and keeps the
project as it was. Real run session, real bubblewrap sandbox, real Redis; only the model is scripted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentscope.message import Msg, TextBlock, ToolCallBlock

from tests.sandbox.conftest import skip_unless_kind
from tier2.runs import execute_run
from tier2.runs.request import RunRequest, new_run_id
from tier2.store.snapshots import SnapshotStore
from tier2.testing import ScriptedChatModel, tool_results

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]
BRIEF = "a potion shop tycoon where I brew potions from herbs"
HUNDRED_MB = 100 << 20


async def test_a_100_mb_file_made_by_the_writer_is_never_stored_and_stops_the_run(
        runtime, tmp_path: Path, docker_host: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    skip_unless_kind("isolated", docker_host)
    run_id, project_id = new_run_id(), "p-blobcap"
    project = (tmp_path / "ws" / "projects" / project_id).resolve()
    calls = [("Bash", {"command": f"truncate -s {HUNDRED_MB} big.bin && ls -l big.bin"}),
             ("Bash", {"command": "echo never reached > after.txt"})]

    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)
        if done < len(calls):
            name, args = calls[done]
            return [ToolCallBlock(id=f"h{done}", name=name, input=json.dumps(args))]
        return [TextBlock(text="done")]

    model = ScriptedChatModel(script, model="tier2-offline-policy-v1")
    options = {"workspace": "isolated"}
    await runtime.store.accept_run(run_id, {"status": "queued", "brief": BRIEF, "project_id": project_id,
                                            "project_dir": str(project), "options": options},
                                   project_id=project_id, dispatch=False)
    outcome = await execute_run(runtime, RunRequest(
        brief=BRIEF, scripted_models={"writer": model}, run_id=run_id, project_id=project_id,
        out_dir=project, options=options))
    assert outcome.status == "stopped", outcome.stop_reason
    assert outcome.stop_reason.startswith("quota: big.bin is 104857600 bytes"), outcome.stop_reason
    assert "snapshot_blob_bytes" in outcome.stop_reason
    assert (project / "big.bin").stat().st_size == HUNDRED_MB  # the file stays; it is just not snapshotted
    assert not (project / "after.txt").exists()  # the run stopped before its next step
    r, keys = runtime.store.r, runtime.store.keys
    assert [k async for k in r.scan_iter(keys.snap_blob("local", "*")) if await r.strlen(k) > 1_000_000] == []
    assert await SnapshotStore(r, keys, "local").used() < 1_000_000
