"""An offline run of the paper-airplane brief with a spec that names its entities (hand-written `asset_role`
requirements, as the offline leader will emit them): the offline writer requests the assets before it builds, the
game draws a paper-airplane player and origami-bird enemies from the pool, and the completion map verifies them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tier2.design.asset_pool import read_manifest
from tier2.runs import RunRequest, execute_run

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]

BRIEF = "a vertical shmup where a paper airplane shoots down angry origami birds over a city"


async def test_the_offline_writer_gets_the_spec_entities_from_the_pool(runtime, tmp_path: Path) -> None:
    game = tmp_path / "game"
    paused = await execute_run(runtime, RunRequest(brief=BRIEF, out_dir=game, pause_after="design"))
    assert paused.status == "stopped", paused.stop_reason
    spec = json.loads((game / "design/spec.json").read_text())
    assert spec["genre"] == "shooter"
    n = len(spec["requirements"])
    spec["requirements"] += [
        {"id": f"R{n + 1}", "text": "the player is a paper airplane", "source": BRIEF, "role": "content",
         "predicate": {"kind": "asset_role", "role": "player", "asset": "player.paper_airplane"}},
        {"id": f"R{n + 2}", "text": "the enemies are angry origami birds", "source": BRIEF, "role": "content",
         "predicate": {"kind": "asset_role", "role": "enemy", "asset": "enemy.angry_origami_birds"}},
    ]
    (game / "design/spec.json").write_text(json.dumps(spec, indent=2))
    out = await execute_run(runtime, RunRequest(brief=BRIEF, existing_project=game))
    assert out.status == "delivered", out.stop_reason
    pool = read_manifest(game)
    assert not pool.problems and {e.id: e.requirements for e in pool.entries} == {
        "player.paper_airplane": (f"R{n + 1}",), "enemy.angry_origami_birds": (f"R{n + 2}",)}
    rows = {r["id"]: r for r in out.delivery["completion"]["requirements"]}
    for rid in (f"R{n + 1}", f"R{n + 2}"):
        assert rows[rid]["status"] == "verified", rows[rid]["reason"]
    assert (game / "dist/assets/player.paper_airplane.png").is_file()
