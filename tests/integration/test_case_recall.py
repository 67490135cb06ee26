"""Near-match recall through mem0 (the optional ``memory`` extra): a real local MiniLM embedder and an in-process
Qdrant, no network. Skipped only when mem0 is not installed *and* not required: CI installs the extra and sets
``TIER2_REQUIRE_MEMORY=1``, so there a missing mem0 fails instead of skipping. Without mem0 the library still
works on exact signatures (tests/integration/test_case_library.py)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from tier2.events import CaseHit
from tier2.learning import CaseLibrary, LibraryRun, available
from tier2.learning.signature import Failure, sign
from tier2.packs import Pack
from tier2.settings.policy import LearningPolicy
from tier2.store.cases import ENGINE_SCOPE, Case, CaseFix, CaseStore, tenant_scope
from tier2.store.keys import Keys
from tier2.store.run_store import RunStore
from tier2.workspace import new_project

pytestmark = [pytest.mark.redis, pytest.mark.slow]
REQUIRED = os.environ.get("TIER2_REQUIRE_MEMORY") == "1"

if not available():
    if REQUIRED:
        pytest.fail("TIER2_REQUIRE_MEMORY=1 but the memory extra (mem0) is not installed: "
                    "TIER2_MEMORY=1 scripts/setup.sh", pytrace=False)
    pytest.skip("the memory extra is not installed (pip install .[memory]); exact-signature tests cover the rest",
                allow_module_level=True)

ENGINE = "phaser@3.90.0"
KNOWN = [  # (gate, stage, message, fixer)
    ("l1.boots", "page", "tier2 data error: economy.json start_money: missing or not a number", "restore_data_key"),
    ("l1.builds", "build", "Expected identifier but found end of file", "restore_last_built"),
    ("l1.no_errors", "page", "Maximum call stack size exceeded", "revert_to_last_pass"),
    ("l1.canvas_not_blank", "gate", "canvas is blank in every screenshot", None),
]


@pytest.fixture
async def library(redis_url: str):
    store = RunStore.from_url(redis_url, Keys(prefix=f"test-recall-{uuid.uuid4().hex[:8]}"))
    lib = CaseLibrary(CaseStore(store.r, store.keys))
    assert lib.memory is not None
    yield lib
    await store.close()


async def _put(lib: CaseLibrary, scope: str, gate: str, stage: str, message: str, fixer: str | None) -> Case:
    sig = sign(Failure(stage, gate, message), ENGINE)  # type: ignore[arg-type]
    return await lib.record(Case(key=sig.key, engine=ENGINE, gate=gate, stage=stage, shape=sig.shape, scope=scope,
                                 fix=CaseFix(fixer=fixer, rule=f"rule of {message[:20]}"), source="test"))


async def test_a_near_match_is_recalled_and_offered(library: CaseLibrary, pack: Pack, tmp_path: Path) -> None:
    for gate, stage, message, fixer in KNOWN:
        await _put(library, ENGINE_SCOPE, gate, stage, message, fixer)
    # the same data defect, worded differently by the game: no exact signature, but the nearest case
    new = Failure("page", "l1.no_errors", "tier2 data error: levels.json target_score: must be a positive number")
    sig = sign(new, ENGINE)
    assert await library.exact(sig, [ENGINE_SCOPE]) is None
    near = await library.near(sig, [ENGINE_SCOPE], k=2, min_score=0.3, wait_s=600)
    assert near and near[0][0].fix.fixer == "restore_data_key", [(c.shape, s) for c, s in near]
    assert all(c.key != sig.key for c, _ in near)
    # through a run: the writer is offered it (recalled), nothing is applied without an exact hit
    project = tmp_path / "g"
    new_project(pack, project)
    events: list = []

    async def emit(event) -> None:
        events.append(event)
    run = LibraryRun(library, run_id="r-recall", tenant="acme", pack=pack, project=project, brief="a game",
                     policy=LearningPolicy(recall_min_score=0.3, recall_wait_s=600), emit=emit)
    from tier2.learning.library import Seen
    assist = await run.assist(Seen([(new, sig)], frozenset()))
    assert not assist.applied and assist.recalled and assist.recalled[0][0].fix.fixer == "restore_data_key"
    assert "Similar past failure" in run.message(assist)
    assert [e.action for e in events if isinstance(e, CaseHit)] == ["recalled"] * len(assist.recalled)


async def test_recall_keeps_to_the_tenants_scope(library: CaseLibrary) -> None:
    await _put(library, tenant_scope("tenant-a"), "l1.economy", "gate",
               "no profitable strategy: serving the orders in turn nets nothing", None)
    sig = sign(Failure("gate", "l1.economy", "no profitable strategy: every order loses money"), ENGINE)
    seen_by_a = await library.near(sig, [tenant_scope("tenant-a"), ENGINE_SCOPE], k=3, min_score=0.2, wait_s=600)
    seen_by_b = await library.near(sig, [tenant_scope("tenant-b"), ENGINE_SCOPE], k=3, min_score=0.2)
    assert [c.gate for c, _ in seen_by_a] == ["l1.economy"] and seen_by_b == []
