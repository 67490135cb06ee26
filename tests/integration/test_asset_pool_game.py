"""The asset pool in a real game: the shooter template with registered assets, built by real esbuild and played in
real Chromium, loads them and draws its player and enemies with them; `l1.assets` passes, then fails on a changed,
missing or unregistered asset; `asset_role` passes for the registered assets seen in play and fails otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tier2.design.asset_gen import generate
from tier2.design.asset_pool import register_asset
from tier2.settings.loader import Policy
from tier2.validators import ValidationRunner
from tier2.validators.l1.assets import asset_gate

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BRIEF = "a vertical shmup where a paper airplane shoots down angry origami birds over a city"


def _spec(*preds: dict) -> dict:
    return {"spec_version": 1, "title": "Paper Skies", "genre": "shooter", "brief": BRIEF,
            "scope": {"buildable": True, "unsupported": []},
            "requirements": [{"id": f"R{i}", "text": f"requirement {i}", "source": BRIEF, "role": "content",
                              "predicate": p} for i, p in enumerate(preds, 1)]}


async def test_registered_assets_load_draw_their_roles_and_are_gated(pool, pack, tmp_path: Path) -> None:
    game = tmp_path / "game"
    shutil.copytree(pack.genre("shooter").template_dir, game)
    for role, desc in (("player", "a paper airplane"), ("enemy", "angry origami birds"), ("backdrop", "a city")):
        register_asset(game, role, desc, [], generate(role, desc), "procedural", "CC0-1.0")
    spec = _spec(
        {"kind": "asset_role", "role": "player", "asset": "player.paper_airplane"},
        {"kind": "asset_role", "role": "enemy", "asset": "enemy.angry_origami_birds"},
        {"kind": "asset_role", "role": "backdrop", "asset": "backdrop.city"},
        {"kind": "asset_role", "role": "enemy", "asset": "enemy.paper_airplane"})  # not registered
    runner = ValidationRunner(pool, pack, Policy(timeouts={"validation_s": 30, "boot_s": 10}),
                              design=lambda: (spec, BRIEF))
    report = await runner.validate_project(game, tmp_path / "r1")
    gates = {g.id: g for g in report.gates}
    assert report.passed, report.feedback()
    assert gates["l1.assets"].passed and gates["l1.assets"].evidence["loaded"] == [
        "player.paper_airplane", "enemy.angry_origami_birds", "backdrop.city"]
    assert (game / "dist/assets/player.paper_airplane.png").is_file()
    assert all(gates[f"l2.req.R{i}"].passed for i in (1, 2, 3)), [gates[f"l2.req.R{i}"].summary for i in (1, 2, 3)]
    assert not gates["l2.req.R4"].passed and "not registered" in gates["l2.req.R4"].summary
    assert "angry_origami_birds" in gates["l2.req.R4"].summary  # what was observed instead
    trace = runner.last_trace
    # an unregistered key named in the sources, a missing file: the gate says so
    play = game / "src/scenes/Play.js"
    play.write_text(play.read_text() + "\nexport const EXTRA = 'enemy.ghost_crow';\n")
    assert any("'enemy.ghost_crow', which is not registered" in f.message for f in asset_gate(game, trace).findings)
    play.write_text(play.read_text().replace("\nexport const EXTRA = 'enemy.ghost_crow';\n", ""))
    # a changed asset: not published by the build, so not loaded; the gate fails on the hash and the load
    (game / "assets/enemy.angry_origami_birds.png").write_bytes(generate("enemy", "a rubber duck"))
    report = await runner.validate_project(game, tmp_path / "r2")
    gates = {g.id: g for g in report.gates}
    msgs = [f.message for f in gates["l1.assets"].findings]
    assert not report.passed and not gates["l1.assets"].passed, msgs
    assert any("does not match its sha256" in m for m in msgs)
    assert not gates["l2.req.R2"].passed  # the enemies are drawn with the template's shapes again
    (game / "assets/enemy.angry_origami_birds.png").unlink()
    assert any("is missing" in f.message for f in asset_gate(game, runner.last_trace).findings)
