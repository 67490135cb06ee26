"""`tier2 packs lookup` through the real CLI (a separate process, its own docs cache), and the pack check's docs
line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.helpers import run_cli
from tier2.packs import Pack
from tier2.runs.commands.pack_check import _docs_line
from tier2.settings.loader import Settings

pytestmark = [pytest.mark.e2e]


def test_lookup_prints_the_top_sections(tmp_path: Path) -> None:
    env = {"TIER2_WORKSPACES": str(tmp_path / "ws")}
    proc = run_cli("packs", "lookup", "phaser", "Cannot read properties of undefined (reading 'setVelocityX')",
                   env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "phaser 3.90.0 docs" in proc.stdout and "## Phaser.Physics.Arcade.Sprite#setVelocityX" in proc.stdout
    assert list((tmp_path / "ws/.cache/docs").glob("phaser-*.json"))  # cached under the settings' cache dir
    proc = run_cli("packs", "lookup", "phaser", "this.tweens.timeline", "--json", "--top-k", "2", env=env)
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["meta"]["cache"] == "hit"
    assert [h["id"] for h in data["hits"]] == ["Phaser.Tweens.TweenManager#chain", "Phaser.Tweens.TweenChain"]
    assert run_cli("packs", "lookup", "phaser", "sprite", "--top-k", "99", env=env).returncode == 2
    assert run_cli("packs", "lookup", "phaser", "zzqxv wvvkq", env=env).returncode == 1


def test_pack_check_has_a_docs_line(pack: Pack, tmp_path: Path) -> None:
    line = _docs_line(pack, Settings(workspaces=tmp_path))
    assert line.ok and "13" in line.detail and "→ Phaser.Physics.Arcade.Factory#sprite" in line.detail
