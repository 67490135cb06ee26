"""The PixiJS pack's engine adapter: ``l1.engine_calls`` over real scanner facts against the pinned pixi.js's own
bundled declarations (exports, members through extends and mixins, deprecations), the shipped-version rule for
games nobody here wrote, and engine detection."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tier2.packs import Pack, choose_adapter, load_pack
from tier2.settings.loader import REPO_ROOT
from tier2.validators.static.scan import scan_sources

SRC = """
import { Application, Graphics, Text, BaseTexture, Sprite, Container } from 'pixi.js';
import * as PIXI from 'pixi.js';
const app = new Application();
app.stage.addChild(new Graphics().rect(0, 0, 1, 1).fill(0xff0000));
const g = new Graphics();
g.beginFill(0xff0000);
g.nosuchthing();
const t = new Text({ text: 'x' });
t.anchor.set(0.5); t.myField = 3;
Sprite.from('a.png'); Sprite.frm('b');
PIXI.utils.hex2rgb(1);
class Play extends Container { create() { this.addChild(g); this.ownThing(); this.sortChildren(); } ownThing() {} }
class Holder { constructor() { this.app = new Application(); }
  go() { this.app.stage.removeChildren(); this.app.tickr.add(() => 0); } }
"""


@pytest.fixture(scope="module")
def pixi() -> Pack:
    return load_pack(REPO_ROOT / "capability_packs", "pixi")


def _check(pixi: Pack, src: dict[str, str]) -> tuple[bool, list[str], list[str]]:
    result = pixi.adapter.check_sources(src, scan_sources(src, pixi.node_modules))
    errors = [f.message for f in result.findings if f.severity == "error"]
    warnings = [f.message for f in result.findings if f.severity == "warning"]
    return result.passed, errors, warnings


def test_missing_names_fail_where_they_are_and_deprecated_ones_warn(pixi: Pack) -> None:
    passed, errors, warnings = _check(pixi, {"src/main.js": SRC})
    assert not passed
    said = "\n".join(errors)
    assert "src/main.js:2:39: BaseTexture is not exported by pixi.js 8.22.0" in said  # v7's, gone in v8
    assert "Graphics#nosuchthing does not exist" in said
    assert "Sprite.frm does not exist in PixiJS 8.22.0 (did you mean from?)" in said
    assert "utils is not exported" in said
    assert "Application#tickr does not exist in PixiJS 8.22.0 (did you mean ticker?)" in said  # through this.app
    assert len(errors) == 5, errors
    # members through the class chain and mixins, a game's own members and writes are never flagged
    for fine in ("addChild", "removeChildren", "sortChildren", "ownThing", "myField", "anchor", "rect"):
        assert fine not in said, fine
    assert any("Graphics#beginFill is deprecated" in w for w in warnings)
    assert not any("#fill is deprecated" in w for w in warnings)  # a method with one deprecated overload is not


def test_the_templates_own_sources_pass(pixi: Pack) -> None:
    for genre in pixi.genres.values():
        src = {p.relative_to(genre.template_dir).as_posix(): p.read_text()
               for p in sorted((genre.template_dir / "src").rglob("*.js"))}
        passed, errors, _ = _check(pixi, src)
        assert passed, (genre.id, errors)


def test_a_game_shipping_another_pixi_version_is_not_checked_against_this_one(pixi: Pack, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.js").write_text("import { BaseTexture } from 'pixi.js';\nBaseTexture.from('x');\n")
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"pixi.js": "^7.4.2"}}))
    src = {"src/main.js": (tmp_path / "src" / "main.js").read_text()}
    scan = scan_sources(src, pixi.node_modules)
    shipped = asyncio.run(pixi.adapter.check_engine_calls(tmp_path, src, scan, tmp_path / "engines"))
    assert shipped.passed and shipped.evidence["shipped"] == "7.4.2"
    assert shipped.findings[0].rule == "l1.engine_calls.version_unverified"
    own = asyncio.run(pixi.adapter.check_engine_calls(tmp_path, src, scan, None))  # tier2's own game: checked
    assert not own.passed


def test_detection_tells_the_engines_apart(pixi: Pack, pack: Pack) -> None:
    assert pixi.adapter.detects("globalThis.__PIXI_APP_INIT__?.(this, VERSION)")
    assert pixi.adapter.detects("/*! PixiJS - v8.22.0 */")
    assert not pixi.adapter.detects("/* Phaser v3.90.0 (WebGL | Arcade Physics) */")
    assert not pack.adapter.detects("globalThis.__PIXI_APP_INIT__?.(this, VERSION)")
    both = [pack.adapter, pixi.adapter]
    assert choose_adapter(both, ["globalThis.__PIXI_RENDERER_INIT__?.(r, v)"]).pack_id == "pixi"
    assert choose_adapter(both, ["Phaser v3.90.0"]).pack_id == "phaser"
