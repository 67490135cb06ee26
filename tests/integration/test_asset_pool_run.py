"""An offline `generate` of the paper-airplane brief: the offline leader's spec names the player, the enemies and
the setting (`asset_role`), the offline writer requests those assets before it builds, the game draws a
paper-airplane player, origami-bird enemies and a city backdrop from the pool, and the completion map verifies
every content requirement."""

from __future__ import annotations

from pathlib import Path

import pytest

from tier2.design.asset_pool import read_manifest
from tier2.runs import RunRequest, execute_run

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]

BRIEF = "a vertical shmup where a paper airplane shoots down angry origami birds over a city"


async def test_the_offline_writer_gets_the_spec_entities_from_the_pool(runtime, tmp_path: Path) -> None:
    game = tmp_path / "game"
    out = await execute_run(runtime, RunRequest(brief=BRIEF, out_dir=game))
    assert out.status == "delivered", out.stop_reason
    rows = out.delivery["completion"]["requirements"]
    wanted = {r["id"]: r for r in rows if r.get("kind") in ("player", "enemy", "setting")}
    assert {r["kind"] for r in wanted.values()} == {"player", "enemy", "setting"}
    pool = read_manifest(game)
    assert not pool.problems
    assert {e.id for e in pool.entries} == {"player.paper_airplane", "enemy.angry_origami_birds", "backdrop.city"}
    assert {rid for e in pool.entries for rid in e.requirements} == set(wanted)
    for rid, row in wanted.items():
        assert row["status"] == "verified", (rid, row["reason"])
    assert out.delivery["completion"]["content"]["verified"] == out.delivery["completion"]["content"]["total"]
    assert (game / "dist/assets/player.paper_airplane.png").is_file()
