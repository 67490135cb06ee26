"""Generic mode on a real PixiJS game nobody here wrote (`galaxian-volodalexey`: PixiJS 7.2.3, webpack, keyboard;
its recipe, licence and label in tests/fixtures/real/README.md), rebuilt from its pinned commit into the cache like
the Phaser corpus: the runner, configured with another pack, reads it with the PixiJS pack's engine adapter (every
installed pack's is a candidate, chosen by the evidence of its scripts), it passes, and a planted defect — every
animation frame throws after the 120th — fails by the gate meant for it. A repository that is not mirrored here is
skipped, said so (the recipes stay on the machine with the mirror)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tier2.packs import Pack
from tier2.settings.loader import REPO_ROOT, Policy
from tier2.testing.corpus import Recipe, build_recipe, load_recipes, mirror_of
from tier2.validators import ValidationRunner
from tier2.validators.mutants import SITE_MUTANTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GAME = "galaxian-volodalexey"
CACHE = REPO_ROOT / "workspaces" / ".cache"


def _recipe() -> Recipe:
    recipe = next((r for r in load_recipes() if r.name == GAME), None)
    if recipe is None or not mirror_of(recipe).is_dir():
        pytest.skip(f"{GAME}: its recipe or the mirror of its repository is not on this machine "
                    "(tests/fixtures/real/README.md)")
    return recipe


async def _validate(pool, pack: Pack, game: Path, out: Path):
    policy = Policy(timeouts={"validation_s": 60, "boot_s": 15})
    return await ValidationRunner(pool, pack, policy).validate_target(str(game), out, mode="generic")


async def test_a_real_pixi_game_passes_and_its_planted_defect_fails_by_the_intended_gate(pool, pack: Pack,
                                                                                        tmp_path: Path) -> None:
    recipe = _recipe()
    built = await build_recipe(recipe, CACHE)
    game = tmp_path / "game"
    shutil.copytree(built, game)
    report = await _validate(pool, pack, game, tmp_path / "r-game")
    assert report.passed, report.feedback()
    assert any("PixiJS" in n and "engine adapter" in n for n in report.notes), report.notes
    inputs = next(g for g in report.gates if g.id == "l1.input_changes_state").evidence["inputs"]
    assert any(i["changed"] for i in inputs)  # a key it listens to moved something

    mutant = next(m for m in SITE_MUTANTS if m.defect == "throws_in_loop")
    broken = tmp_path / "broken"
    shutil.copytree(built, broken)
    mutant.apply(broken)
    failed = {g.id for g in (await _validate(pool, pack, broken, tmp_path / "r-broken")).failures}
    assert recipe.defects["throws_in_loop"] in failed and mutant.intended_gates & failed
