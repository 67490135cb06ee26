"""`tier2 validate FOLDER` reads a project with the pack it was made with, else the pack whose engine its sources
import, else the configured one (the runner's pack builds it and knows its genres: a PixiJS project built with
the Phaser pack's packages would not even resolve its imports)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tier2.packs import load_pack
from tier2.runs.commands.validate import _pack_of
from tier2.settings.loader import REPO_ROOT, Settings
from tier2.workspace.projects import new_project


def test_a_project_is_read_with_its_own_pack(tmp_path: Path) -> None:
    settings = Settings(workspaces=tmp_path / "ws")
    assert settings.pack_id == "phaser"
    pixi = load_pack(REPO_ROOT / "capability_packs", "pixi")
    new_project(pixi, tmp_path / "made", genre="maze")
    assert _pack_of(settings, tmp_path / "made").id == "pixi"               # its .tier2/project.json
    shutil.copytree(pixi.genre("shooter").template_dir, tmp_path / "uploaded")  # no metadata: its imports say
    assert _pack_of(settings, tmp_path / "uploaded").id == "pixi"
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "index.html").write_text("<canvas></canvas>")
    assert _pack_of(settings, tmp_path / "plain").id == "phaser"            # no engine of a pack: the configured
    assert _pack_of(settings, tmp_path / "no-such-dir").id == "phaser"       # a URL or a missing path
