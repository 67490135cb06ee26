"""Generic mode's engine detection over the installed packs (`tier2.packs.registry.load_installed`,
`choose_adapter`): minified bundles of real games — PixiJS 8 (its devtools hook), PixiJS 7.2 (no hook: its warning
and banner texts), Phaser 3 — pick their own engine's adapter whichever pack is configured; a plain canvas game
keeps the configured one. The snippets are what the real corpus's built bundles contain (tests/fixtures/real)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tier2.packs import EngineAdapter, choose_adapter
from tier2.packs.registry import load_installed
from tier2.settings.loader import REPO_ROOT
from tier2.validators.site import SiteKind
from tier2.validators.targets import engine_pack

PIXI8 = ('const uc="8.14.1";class cc{static init(){globalThis.__PIXI_APP_INIT__?.(this,uc)}static destroy(){}}'
         'class g_{init(){globalThis.__PIXI_RENDERER_INIT__?.(this._renderer,uc)}}')
PIXI7 = ('console.warn("PixiJS Deprecation Warning: ",n);const s=`PixiJS 7.2.3 - ${t.rendererLogId} - `;'
         'if(!e)throw new Error("Unable to auto-detect a suitable renderer.")')
PHASER = 'var C={VERSION:"3.80.1"};console.log("%c %c %c %c %c Phaser v"+C.VERSION+" (WebGL | Arcade Physics)")'
PLAIN = "const ctx=document.querySelector('canvas').getContext('2d');requestAnimationFrame(loop);"


@pytest.fixture(scope="module")
def adapters() -> dict[str, EngineAdapter]:
    packs, refused = load_installed(REPO_ROOT / "capability_packs")
    assert not refused, refused
    found = {p.id: p.adapter for p in packs}
    assert {"phaser", "pixi"} <= set(found), sorted(found)
    return found


@pytest.mark.parametrize("configured", ["phaser", "pixi"])
def test_each_bundle_picks_its_engines_adapter_whichever_pack_is_configured(adapters: dict[str, EngineAdapter],
                                                                             configured: str) -> None:
    ordered = [adapters[configured], *(a for k, a in sorted(adapters.items()) if k != configured)]
    assert choose_adapter(ordered, ["vendor: " + PIXI8]).pack_id == "pixi"
    assert choose_adapter(ordered, [PLAIN, PIXI7]).pack_id == "pixi"
    assert choose_adapter(ordered, [PHASER]).pack_id == "phaser"
    assert choose_adapter(ordered, [PLAIN]).pack_id == configured


def test_no_engine_claims_the_others_bundle(adapters: dict[str, EngineAdapter]) -> None:
    assert not adapters["phaser"].detects(PIXI8) and not adapters["phaser"].detects(PIXI7)
    assert not adapters["pixi"].detects(PHASER) and not adapters["pixi"].detects(PLAIN)


def test_a_source_project_is_bundled_with_the_pack_of_the_engine_it_uses(tmp_path: Path) -> None:
    packs = {p.id: p for p in load_installed(REPO_ROOT / "capability_packs")[0]}
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"pixi.js": "^8.1.0", "gsap": "^3.12.0"}}))
    source = SiteKind("source", ["src/main.ts is .ts source (needs a compiler)"])
    assert engine_pack(tmp_path, source, packs["phaser"]).id == "pixi"
    imports = SiteKind("source", ["src/scenes/Play.js imports the bare module 'phaser/src/core' (needs a bundler)"])
    assert engine_pack(tmp_path / "none", imports, packs["pixi"]).id == "phaser"
    assert engine_pack(tmp_path / "none", source, packs["pixi"]).id == "pixi"  # no evidence: the configured pack
