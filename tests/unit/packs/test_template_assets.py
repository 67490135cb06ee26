"""Every genre template of the Phaser pack carries the same asset loader (src/assets.js), an empty manifest, a
preload that queues the registered assets and a hook that reports them."""

from __future__ import annotations

import json
from pathlib import Path

GENRES = Path(__file__).resolve().parents[3] / "capability_packs/phaser/genres"


def test_every_template_shares_the_asset_loader_and_reports_assets() -> None:
    templates = sorted(p / "template" for p in GENRES.iterdir() if (p / "template").is_dir())
    assert len(templates) >= 6
    loaders = {(t / "src/assets.js").read_text() for t in templates}
    assert len(loaders) == 1  # one file, copied as is into every template
    for t in templates:
        assert json.loads((t / "assets/manifest.json").read_text()) == {"assets": []}, t
        assert "queueAssets(this)" in (t / "src/scenes/Preload.js").read_text(), t
        assert "assets: () => assetReport(game)" in (t / "src/hook.js").read_text(), t
    skinned = {t.parent.name for t in templates if "skin(" in (t / "src/scenes/Play.js").read_text()}
    assert skinned >= {"shooter", "platformer", "maze", "shop", "puzzle"}
