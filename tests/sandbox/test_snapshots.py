"""Content-addressed project snapshots: a manifest + blobs in Redis, and a restore that makes a project hold exactly
a snapshot's files (extra files removed, changed ones rewritten, binary bytes, modes, symlinks kept as links)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from tier2.middleware.snapshots import restore_snapshot, snapshot_of, take_snapshot
from tier2.store.keys import Keys
from tier2.store.snapshots import SnapshotStore
from tier2.workspace.snapshots import scan

pytestmark = [pytest.mark.redis]


@pytest.fixture
async def store(redis_url: str, tmp_path: Path) -> AsyncIterator[SnapshotStore]:
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        yield SnapshotStore(client, Keys(prefix=f"snap-{tmp_path.name}"))
    finally:
        await client.aclose()


def _tree(root: Path) -> dict[str, object]:
    manifest, _ = scan(root)
    return {e.path: (e.sha256, e.mode, e.link) for e in manifest.entries}


async def test_restore_gives_back_exactly_the_snapshot(store: SnapshotStore, tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "main.js").write_text("console.log(1)\n")
    (root / "src" / "deep" / "bin.dat").write_bytes(bytes(range(256)) * 3)
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    os.symlink("src/main.js", root / "link.js")
    (root / "dist").mkdir()
    (root / "dist" / "bundle.js").write_text("built")  # build output: never part of a snapshot
    sid = await take_snapshot(store, root)
    want = _tree(root)
    # the sandbox changes everything, then is lost
    (root / "src" / "main.js").write_text("changed")
    (root / "src" / "deep" / "bin.dat").unlink()
    (root / "extra").mkdir()
    (root / "extra" / "planted.txt").write_text("x")
    (root / "link.js").unlink()
    (root / "link.js").write_text("not a link any more")
    (root / "run.sh").chmod(0o644)
    await restore_snapshot(store, root, sid)
    assert _tree(root) == want and not (root / "extra").exists()
    assert (root / "dist" / "bundle.js").read_text() == "built"
    # a project directory deleted outright comes back the same
    import shutil

    shutil.rmtree(root)
    await restore_snapshot(store, root, sid)
    assert _tree(root) == want and os.readlink(root / "link.js") == "src/main.js"
    assert (root / "src" / "deep" / "bin.dat").read_bytes() == bytes(range(256)) * 3


async def test_equal_trees_share_an_id_and_blobs_are_stored_once(store: SnapshotStore, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        root.mkdir()
        (root / "same.txt").write_text("same bytes")
    assert await take_snapshot(store, a) == await take_snapshot(store, b)
    keys = [k async for k in store.r.scan_iter(f"{store.keys.prefix}:snap:blob:*")]
    assert len(keys) == 1


def test_a_checkpoint_state_names_its_snapshot() -> None:
    assert snapshot_of({"middle_context": {"tier2.snapshot": "abc"}}) == "abc"
    assert snapshot_of('{"middle_context": {}}') is None and snapshot_of(None) is None


async def test_a_replayed_write_brings_back_the_files_right_after_it(store: SnapshotStore, tmp_path: Path) -> None:
    """The checkpoint may lag one step behind the operation ledger: when the ledger replays a write on a resumed
    attempt (the effect is not repeated), the snapshot middleware restores the files as they were right after it."""
    from types import SimpleNamespace

    from agentscope.message import TextBlock, ToolCallBlock
    from agentscope.tool import ToolResponse

    from tier2.middleware.operations import operation_id
    from tier2.middleware.snapshots import SNAPSHOT_KEY, SnapshotMiddleware

    root = tmp_path / "p"
    root.mkdir()
    (root / "a.txt").write_text("before")
    agent = SimpleNamespace(state=SimpleNamespace(context=[], middle_context={}))
    call = ToolCallBlock(id="c1", name="Write", input=json.dumps({"file_path": str(root / "a.txt"), "content": "x"}))
    middleware = SnapshotMiddleware(store, root, f"run-{tmp_path.name}")

    async def write(**_: object):
        (root / "a.txt").write_text("after the write")
        yield ToolResponse(content=[TextBlock(text="ok")], state="success", id="c1")

    async for _ in middleware.on_acting(agent, {"tool_call": call}, write):
        pass
    after = agent.state.middle_context[SNAPSHOT_KEY]
    (root / "a.txt").write_text("before")  # the attempt died; its checkpoint was one step older
    agent.state.middle_context.clear()
    op = operation_id(agent, call)

    async def replayed(**_: object):
        yield ToolResponse(content=[TextBlock(text="ok")], state="success", id="c1",
                           metadata={"operation": op, "replayed": True})

    async for _ in middleware.on_acting(agent, {"tool_call": call}, replayed):
        pass
    assert (root / "a.txt").read_text() == "after the write"
    assert agent.state.middle_context[SNAPSHOT_KEY] == after


async def test_a_check_whose_fix_changed_files_is_snapshotted(store: SnapshotStore, tmp_path: Path) -> None:
    """A Build during which the case library applied a fix says ``files_changed``: the step's checkpoint then names
    a snapshot with the fixed files (a resume restores them with the conversation that read the fixed result);
    a Build that changed nothing takes no snapshot."""
    from types import SimpleNamespace

    from agentscope.message import TextBlock, ToolCallBlock
    from agentscope.tool import ToolResponse

    from tier2.middleware.snapshots import SNAPSHOT_KEY, SnapshotMiddleware

    root = tmp_path / "p"
    root.mkdir()
    (root / "main.js").write_text("broken(")
    agent = SimpleNamespace(state=SimpleNamespace(context=[], middle_context={}))
    middleware = SnapshotMiddleware(store, root, f"run-{tmp_path.name}")

    async def build(changed: bool):
        if changed:
            (root / "main.js").write_text("fixed();")
        yield ToolResponse(content=[TextBlock(text="BUILD OK")], state="success", id="b1",
                           metadata={"files_changed": changed})

    call = ToolCallBlock(id="b1", name="Build", input="{}")
    async for _ in middleware.on_acting(agent, {"tool_call": call}, lambda **_: build(False)):
        pass
    assert SNAPSHOT_KEY not in agent.state.middle_context
    async for _ in middleware.on_acting(agent, {"tool_call": call}, lambda **_: build(True)):
        pass
    sid = agent.state.middle_context[SNAPSHOT_KEY]
    (root / "main.js").write_text("lost with the sandbox")
    await restore_snapshot(store, root, sid)
    assert (root / "main.js").read_text() == "fixed();"


async def test_a_side_effect_has_its_files_stored_before_the_ledger_commits_it(store: SnapshotStore,
                                                                               tmp_path: Path) -> None:
    """The worker dies right after the ledger committed a Write and before anything outside it ran (the snapshot
    layer's own pass, the checkpoint): the ledger's effect hook had stored the files first, so the next attempt —
    whose files are back at the older checkpoint — replays the operation and gets the written file back."""
    from types import SimpleNamespace

    from agentscope.message import TextBlock, ToolCallBlock
    from agentscope.tool import ToolResponse

    from tier2.middleware.operations import OperationsMiddleware, operation_id
    from tier2.middleware.snapshots import SNAPSHOT_KEY, SnapshotMiddleware
    from tier2.store.operations import OperationStore

    root = tmp_path / "p"
    root.mkdir()
    (root / "a.txt").write_text("before")
    run = f"run-{tmp_path.name}"
    snapshots = SnapshotMiddleware(store, root, run)
    ledger = OperationsMiddleware(OperationStore(store.r, store.keys, run), None, frozenset({"Write"}),
                                  effects=[snapshots.record_effect])
    agent = SimpleNamespace(state=SimpleNamespace(context=[], middle_context={}))
    call = ToolCallBlock(id="c1", name="Write", input=json.dumps({"file_path": str(root / "a.txt"), "content": "x"}))

    async def write(**_: object):
        (root / "a.txt").write_text("after the write")
        yield ToolResponse(content=[TextBlock(text="ok")], state="success", id="c1")

    async for _ in ledger.on_acting(agent, {"tool_call": call}, write):  # only the ledger ran: then the worker died
        pass
    op = operation_id(agent, call)
    after = await store.after_op(run, op)
    assert after is not None and agent.state.middle_context[SNAPSHOT_KEY] == after
    (root / "a.txt").write_text("before")                  # the next attempt restored the older checkpoint's files
    agent.state.middle_context.clear()

    async def never(**_: object):
        raise AssertionError("a committed Write must not run again")
        yield

    async def through_ledger(**kwargs: object):
        async for chunk in ledger.on_acting(agent, kwargs, never):  # type: ignore[arg-type]
            yield chunk

    async for _ in snapshots.on_acting(agent, {"tool_call": call}, through_ledger):
        pass
    assert (root / "a.txt").read_text() == "after the write"
    assert agent.state.middle_context[SNAPSHOT_KEY] == after
