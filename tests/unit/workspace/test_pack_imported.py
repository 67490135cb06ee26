"""`pack_imported`: an uploaded project is adopted with the pack whose engine module its sources import (the
manifests' ``engine.name``, statically, dynamically or a subpath); none or both: None (the caller's default)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tier2.packs import load_pack
from tier2.settings.loader import REPO_ROOT
from tier2.workspace.projects import pack_imported

PACKS = [load_pack(REPO_ROOT / "capability_packs", "phaser"), load_pack(REPO_ROOT / "capability_packs", "pixi")]


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


@pytest.mark.parametrize(("files", "want"), [
    ({"src/main.js": "import { Application } from 'pixi.js';\n"}, "pixi"),
    ({"src/main.js": "import './scenes/Play.js';", "src/scenes/Play.js": 'import Phaser from "phaser";'}, "phaser"),
    ({"src/main.js": "const m = await import('pixi.js/lib/index.js');"}, "pixi"),
    ({"src/main.js": "import x from './phaser-like.js';\nconst engine = 'phaser';"}, None),  # a name, no import
    ({"src/main.js": "import { Sprite } from 'pixi.js';\nimport Phaser from 'phaser';"}, None),  # both: undecided
    ({"src/main.js": "export const a = 1;", "lib/other.js": "import 'pixi.js';"}, None),  # outside src/
    ({"src/main.js": "import 'phaserx';"}, None),                                          # another package
])
def test_the_engine_the_sources_import_names_the_pack(tmp_path: Path, files: dict[str, str],
                                                     want: str | None) -> None:
    found = pack_imported(_project(tmp_path, files), PACKS)
    assert (found.id if found is not None else None) == want


def test_a_project_without_sources_names_no_pack(tmp_path: Path) -> None:
    assert pack_imported(tmp_path, PACKS) is None
