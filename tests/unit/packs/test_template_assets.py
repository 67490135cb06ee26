"""Every genre template of the Phaser pack carries the same asset loader (src/assets.js), an empty manifest, a
preload that queues the registered assets and a hook that reports them — the shared parts living once, in the
pack's common/template, overlaid under each genre's own files (`tier2.packs.templates`)."""

from __future__ import annotations

import json
from pathlib import Path

from tier2.packs import load_pack

PACK_ROOT = Path(__file__).resolve().parents[3] / "capability_packs/phaser"
SHARED = ("index.html", "src/hook.js", "src/assets.js", "src/scenes/Boot.js", "assets/manifest.json")


def test_every_template_shares_the_asset_loader_and_reports_assets() -> None:
    pack = load_pack(PACK_ROOT.parent, "phaser")
    templates = sorted(g.template_dir for g in pack.genres.values())
    assert len(templates) >= 6
    loaders = {(t / "src/assets.js").read_text() for t in templates}
    assert loaders == {(PACK_ROOT / "common/template/src/assets.js").read_text()}  # one file, overlaid
    for t in templates:
        assert json.loads((t / "assets/manifest.json").read_text()) == {"assets": []}, t
        assert "queueAssets(this)" in (t / "src/scenes/Preload.js").read_text(), t
        assert "assets: () => assetReport(game)" in (t / "src/hook.js").read_text(), t
    skinned = {g.id for g in pack.genres.values() if "skin(" in (g.template_dir / "src/scenes/Play.js").read_text()}
    assert skinned >= {"shooter", "platformer", "maze", "shop", "puzzle"}


def test_shared_parts_live_once_and_a_genre_file_overrides_them() -> None:
    pack = load_pack(PACK_ROOT.parent, "phaser")
    for rel in SHARED:
        assert (PACK_ROOT / "common/template" / rel).is_file(), rel
        owners = [g.id for g in pack.genres.values() if any((t / rel).exists() for t in g.template_layers[1:])]
        assert owners in ([], ["shooter"]) if rel == "index.html" else owners == [], (rel, owners)
    shooter = pack.genre("shooter")
    assert (shooter.template_dir / "index.html").read_text() == (shooter.template_layers[-1] / "index.html").read_text()
    for genre in pack.genres.values():                # each hook names its own genre, from its state.js
        assert f"export const GENRE = '{genre.id}'" in (genre.template_dir / "src/state.js").read_text()
