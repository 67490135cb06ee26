"""The real-game corpus's recipes: a strict loader, a cache key that only the build changes, installs that never
run a package's scripts, and build steps wrapped in the isolated sandbox (no root, no network)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from tier2.sandbox.bwrap import bwrap_available
from tier2.testing.corpus import RECIPES_DIR, Recipe, build_sandbox, install_argv, load_recipes
from tier2.validators.mutants import SITE_MUTANTS

BASE = {
    "name": "toy-game", "repo": "someone/toy-game", "commit": "0" * 40, "licence": "MIT",
    "licence_file": "LICENSE", "genre": "arcade", "engine": "3.80.1", "engine_evidence": "lockfile",
    "build_kind": "vite", "installer": "npm", "build": [["npm", "run", "build"]], "output": "dist",
    "label": "working", "judged": "played: boots, moves on arrows",
}


def _write(root: Path, **fields: object) -> Path:
    data = {**BASE, **fields}
    folder = root / str(data["name"])
    folder.mkdir(parents=True)
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data))
    return root


def test_a_recipe_loads_with_its_fields(tmp_path: Path) -> None:
    [recipe] = load_recipes(_write(tmp_path, defects={"syntax_error": "l1.boots"}))
    assert (recipe.name, recipe.build_kind, recipe.defects) == ("toy-game", "vite", {"syntax_error": "l1.boots"})


@pytest.mark.parametrize("bad", [
    {"colour": "red"},  # unknown field
    {"commit": "abc123"},  # not a full sha
    {"build_kind": "gulp"},  # not a supported build kind
    {"engine": "v3.80"},  # not a version number (any engine's: the version as shipped)
    {"output": "../elsewhere"},  # outside the game's folder
    {"subdir": "/etc"},
    {"label": "maybe"},
    {"build": "npm run build"},  # a shell string, not argv lists
])
def test_the_loader_is_strict(bad: dict[str, object], tmp_path: Path) -> None:
    with pytest.raises(ValidationError):
        load_recipes(_write(tmp_path, **bad))


def test_a_broken_game_names_its_gate_and_its_folder_is_its_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="broken_gate"):
        load_recipes(_write(tmp_path / "a", label="broken"))
    root = _write(tmp_path / "b")
    (root / "toy-game").rename(root / "other-name")
    with pytest.raises(ValueError, match="not its folder"):
        load_recipes(root)


def test_the_cache_key_changes_with_the_build_not_with_the_label() -> None:
    recipe = Recipe.model_validate(BASE)
    relabelled = Recipe.model_validate({**BASE, "label": "broken", "broken_gate": "l1.boots", "judged": "x"})
    rebuilt = Recipe.model_validate({**BASE, "build": [["npm", "run", "build:prod"]]})
    moved = Recipe.model_validate({**BASE, "commit": "1" * 40})
    assert recipe.key() == relabelled.key()
    assert len({recipe.key(), rebuilt.key(), moved.key()}) == 3


@pytest.mark.parametrize("installer", ["npm", "pnpm", "yarn", "npm-no-lockfile"])
def test_installs_never_run_package_scripts(installer: str) -> None:
    argv = install_argv(Recipe.model_validate({**BASE, "installer": installer}))
    assert argv is not None and "--ignore-scripts" in argv
    assert install_argv(Recipe.model_validate({**BASE, "installer": "none"})) is None


@pytest.mark.skipif(bool(bwrap_available()), reason=f"no bubblewrap here: {bwrap_available()}")
def test_a_build_step_is_wrapped_unprivileged_without_network(tmp_path: Path) -> None:
    game = tmp_path / "game"
    game.mkdir()
    argv = build_sandbox(game, tmp_path / "home").wrap(["npm", "run", "build"])
    joined = " ".join(argv)
    assert "--cap-drop ALL" in joined and "--unshare-net" in joined and "--clearenv" in joined
    assert "--uid 1000" in joined
    # only the game's folder is bound writable
    binds = [argv[i + 2] for i, a in enumerate(argv) if a == "--bind"]
    assert binds == [str(game.resolve())]
    assert argv[-3:] == ["npm", "run", "build"]


def test_every_committed_recipe_loads_and_plants_known_defects() -> None:
    """The recipes present here (tests/fixtures/real/*/recipe.yaml; none on a clean clone) are valid, and each
    planted defect is a site mutant whose intended gates include the recipe's."""
    site = {m.defect: m for m in SITE_MUTANTS}
    for recipe in load_recipes(RECIPES_DIR):
        for defect, gate in recipe.defects.items():
            assert defect in site, f"{recipe.name}: unknown defect class {defect}"
            assert gate in site[defect].intended_gates, f"{recipe.name}: {defect} is not meant for {gate}"
