"""The pack owns its engine: no engine name and none of the engine's own globals/APIs appear in core (tier2/).

The words: every pack's engine package name and title (any case), the second engine's (PixiJS: ``pixi``, ``PIXI``,
``pixi.js``, any case) and the identifiers each pack's manifest lists under ``adapter.identifiers`` (as written:
``getScenes``, ``__MISSING``...). What the engine means to the validators is the pack's engine adapter
(`tier2.packs.engine`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tier2.packs import Pack, load_pack

ROOT = Path(__file__).resolve().parents[3]
PACK_IDS = sorted(p.parent.name for p in (ROOT / "capability_packs").glob("*/pack.yaml"))
#: core: the tier2 package (code, prompts, templates, data) — every text file in it
SUFFIXES = {".py", ".md", ".js", ".mjs", ".json", ".yaml", ".yml", ".html", ".css", ".txt", ".toml"}
#: the second engine (issue #26): named nowhere in core either, before its pack exists
OTHER_ENGINES = ("pixi", "pixijs")


def _patterns(pack: Pack) -> list[re.Pattern[str]]:
    names = {pack.manifest.engine.name, pack.manifest.engine.title, *OTHER_ENGINES}
    ids = set(pack.manifest.adapter.identifiers)

    def alt(words: set[str]) -> str:
        return "|".join(sorted(map(re.escape, words), key=len, reverse=True))

    edge_l, edge_r = r"(?<![A-Za-z0-9_-])", r"(?![A-Za-z0-9_-])"
    return [re.compile(f"{edge_l}({alt(names)}){edge_r}", re.I), re.compile(f"{edge_l}({alt(ids)}){edge_r}")]


def _hits(patterns: list[re.Pattern[str]], text: str) -> list[str]:
    return [m.group(0) for p in patterns for m in p.finditer(text)]


def test_every_installed_pack_is_covered(pack: Pack) -> None:
    assert {"phaser", "pixi"} <= set(PACK_IDS)
    assert {"phaser", "Phaser", "getScenes", "__MISSING"} <= {pack.manifest.engine.name, pack.manifest.engine.title,
                                                              *pack.manifest.adapter.identifiers}


@pytest.mark.parametrize("pack_id", PACK_IDS)
def test_no_engine_name_in_core(pack_id: str) -> None:
    patterns = _patterns(load_pack(ROOT / "capability_packs", pack_id))
    found = []
    for path in sorted((ROOT / "tier2").rglob("*")):
        if path.suffix not in SUFFIXES or not path.is_file():
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            found += [f"{path.relative_to(ROOT)}:{n}: {w!r} in {line.strip()[:100]}" for w in _hits(patterns, line)]
    assert not found, "engine names in core (they belong in the pack's adapter or texts):\n" + "\n".join(found[:40])


def test_the_check_sees_a_planted_engine_name(pack: Pack) -> None:
    patterns = _patterns(pack)
    for planted in ("new Phaser.Game(config)", "import * as PIXI from 'pixi.js'", "the PHASER pack",
                    "g.scene.getScenes(true)", "o.texture.key === '__MISSING'", "const app = new Pixi()"):
        assert _hits(patterns, planted), planted
    for clean in ("a pixie and a fairy", "phasers_and_lasers", "myGetScenes()", "window.__tier2Engine.snapshot()",
                  "__MISSING_TEXT"):
        assert not _hits(patterns, clean), clean
