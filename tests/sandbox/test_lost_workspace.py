"""A lost workspace loses nothing: a run is interrupted mid-turn (its attempt abandoned, as when a worker dies),
its project directory is deleted (and a docker workspace's container with it), and the next attempt — resuming
from the newest checkpoint — gets back exactly the files that checkpoint's snapshot names, then finishes the run.
Real run session, real lease/fence, real checkpoints in Redis, real sandbox; only the model is scripted."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from agentscope.message import Msg, TextBlock, ToolCallBlock

from tests.sandbox.conftest import KINDS, skip_unless_kind
from tier2.middleware.checkpoint import restorable_state
from tier2.middleware.snapshots import snapshot_of
from tier2.runs import execute_run
from tier2.runs.request import Resume, RunRequest, new_run_id
from tier2.store.checkpoints import CheckpointStore
from tier2.store.leases import LeaseStore
from tier2.testing import ScriptedChatModel, tool_results
from tier2.workspace import new_project
from tier2.workspace.snapshots import scan

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]
BRIEF = "a potion shop tycoon where I brew potions from herbs"


def _calls(project: Path, kind: str) -> list[tuple[str, dict[str, Any]]]:
    third = (("Bash", {"command": "mkdir -p notes && printf 'made by bash\\n' > notes/bash.txt && "
                                  "head -c 3000 /dev/urandom > notes/noise.bin"})
             if kind != "local" else ("Write", {"file_path": str(project / "notes" / "third.txt"),
                                                "content": "third\n"}))
    return [
        ("Write", {"file_path": str(project / "src" / "extra.js"), "content": "export const EXTRA = 1;\n"}),
        ("Write", {"file_path": str(project / "notes.md"), "content": "# notes\nfirst attempt\n"}),
        third,
        ("Build", {}),
        ("RunGame", {}),
    ]


class _Gated(ScriptedChatModel):
    """Blocks (until cancelled) before the model call that follows ``block_at`` tool results, once."""

    def __init__(self, script: Any, block_at: int) -> None:
        super().__init__(script, model="tier2-offline-policy-v1")  # a priced name: the run's budget applies
        self.block_at, self.reached, self.armed = block_at, asyncio.Event(), True

    async def _call_api(self, model_name: str, messages: list[Msg], *args: Any, **kwargs: Any) -> Any:
        if self.armed and tool_results(messages) == self.block_at:
            self.reached.set()
            await asyncio.Event().wait()
        return await super()._call_api(model_name, messages, *args, **kwargs)


@pytest.mark.parametrize(("kind", "uploaded"), [(k, False) for k in KINDS] + [("isolated", True)])
async def test_a_deleted_workspace_comes_back_exactly_as_the_checkpoint_had_it(
        kind: str, uploaded: bool, runtime, tmp_path: Path, docker_host: str | None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    skip_unless_kind(kind, docker_host)
    run_id, project_id = new_run_id(), "p-lost"
    project = (tmp_path / "ws" / "projects" / project_id).resolve()
    calls = _calls(project, kind)

    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)
        if done < len(calls):
            name, args = calls[done]
            return [ToolCallBlock(id=f"s{done}", name=name, input=json.dumps(args))]
        return [TextBlock(text="done")]

    model = _Gated(script, block_at=3)
    options = {"workspace": kind}
    where: dict[str, Any] = {"out_dir": project}
    if uploaded:  # a loaded project: the run works on it where it is (no template copy on resume)
        new_project(runtime.pack, project, project_id)
        where = {"existing_project": project}
    store = runtime.store
    await store.accept_run(run_id, {"status": "queued", "brief": BRIEF, "project_id": project_id,
                                    "project_dir": str(project), "options": options},
                           project_id=project_id, dispatch=False)
    leases = LeaseStore(store.r, store.keys)
    first = await leases.acquire(run_id, "w1", 120_000)
    assert not isinstance(first, str)
    attempt = asyncio.create_task(execute_run(runtime, RunRequest(
        brief=BRIEF, run_id=run_id, project_id=project_id, fence=first.fence, options=options,
        scripted_models={"writer": model}, **where)))
    reached = asyncio.create_task(model.reached.wait())
    await asyncio.wait([reached, attempt], timeout=120, return_when=asyncio.FIRST_COMPLETED)
    if attempt.done():
        ended = attempt.result()
        raise AssertionError(f"the first attempt ended before the gate: {ended.status} {ended.stop_reason}")
    checkpoints = CheckpointStore(store.r, store.keys, run_id)

    async def newest() -> tuple[int, dict[str, Any], dict[str, Any]]:
        for _ in range(200):  # the write after step 3 goes out in the background
            latest = await checkpoints.latest()
            if latest is not None and sum(1 for m in latest[1]["context"] for b in m.get("content") or []
                                          if isinstance(b, dict) and b.get("type") == "tool_result") == 3:
                return latest
            await asyncio.sleep(0.05)
        raise AssertionError("no checkpoint after the third step")

    number, state, meta = await newest()
    expected = {e.path: (e.sha256, e.mode, e.link) for e in scan(project)[0].entries}
    assert snapshot_of(state) is not None and "notes.md" in expected
    attempt.cancel()  # the worker dies: the attempt is abandoned (nothing delivered)
    with pytest.raises(asyncio.CancelledError):
        await attempt
    await leases.release(first)

    shutil.rmtree(project)  # the sandbox and its files are lost
    assert not project.exists()

    second = await leases.acquire(run_id, "w2", 120_000)
    assert not isinstance(second, str) and second.token == 2
    model.armed = False
    restored: dict[str, Any] = {}
    real_restore = __import__("tier2.runs.loop.sandboxing", fromlist=["RunWorkspace"]).RunWorkspace.restore

    async def spy(self: Any, state_json: str | None) -> str | None:
        sid = await real_restore(self, state_json)
        restored["files"] = {e.path: (e.sha256, e.mode, e.link) for e in scan(self.project)[0].entries}
        restored["sid"] = sid
        return sid

    monkeypatch.setattr("tier2.runs.loop.sandboxing.RunWorkspace.restore", spy)
    resume = Resume(checkpoint=number, state_json=restorable_state(state), round=int(meta.get("round", 0)),
                    stage=str(meta.get("stage", "turn")), usage=meta.get("usage") or {}, step=int(meta.get("step", 0)))
    outcome = await execute_run(runtime, RunRequest(
        brief=BRIEF, run_id=run_id, project_id=project_id, fence=second.fence, resume=resume, options=options,
        scripted_models={"writer": model}, **where))
    assert restored["sid"] == snapshot_of(state)
    assert restored["files"] == expected  # exactly the checkpoint's files, before the attempt did anything
    final = {e.path: (e.sha256, e.mode, e.link) for e in scan(project)[0].entries}
    assert final == expected  # the rest of the turn only built and played
    assert outcome.status == "delivered", outcome.stop_reason
