"""The engine-adapter facet (`tier2.packs.engine`): a pack's adapter loads with its page scripts, a pack whose
adapter lacks a part is refused with the reason, generic mode chooses the adapter by evidence, and the Phaser
adapter's in-page script finds a game and answers for it (run in node on a stand-in page)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tier2.errors import PackError
from tier2.packs import EngineAdapter, Pack, choose_adapter, load_pack
from tier2.packs.engine import PAGE_SCRIPTS, AdapterModule
from tier2.packs.registry import installed_pack_ids, load_installed


def test_the_pack_loads_its_adapter(pack: Pack) -> None:
    a = pack.adapter
    assert (a.pack_id, a.title, a.version) == ("phaser", "Phaser", pack.manifest.engine.version)
    assert a.root == pack.root / "adapter" and a.node_modules == pack.node_modules
    assert "window.__tier2Engine" in a.page_js and "(screen) =>" in a.legibility_js
    assert a.detects('/* Phaser v3.90.0 (WebGL | Arcade Physics) */') and a.detects('{VERSION:"3.55.2"}')
    assert not a.detects("const app = new Application(); // a canvas game")


def _copy(pack: Pack, tmp_path: Path) -> Path:
    root = tmp_path / "packs" / "phaser"
    shutil.copytree(pack.root, root, ignore=shutil.ignore_patterns("node_modules", "genres"), symlinks=True)
    shutil.copytree(pack.root / "genres" / pack.manifest.default_genre, root / "genres" / pack.manifest.default_genre,
                    ignore=shutil.ignore_patterns("node_modules"), symlinks=True)
    return root


def test_a_pack_whose_adapter_lacks_a_part_is_refused(pack: Pack, tmp_path: Path) -> None:
    root = _copy(pack, tmp_path / "a")
    init = root / "adapter" / "__init__.py"
    init.write_text(init.read_text().replace("def check_sources(", "def _check_sources("))
    with pytest.raises(PackError, match="engine adapter lacks check_sources"):
        load_pack(tmp_path / "a" / "packs", "phaser")
    root = _copy(pack, tmp_path / "b")
    (root / "adapter" / PAGE_SCRIPTS[0]).unlink()
    with pytest.raises(PackError, match="page.js missing"):
        load_pack(tmp_path / "b" / "packs", "phaser")
    root = _copy(pack, tmp_path / "c")
    (root / "adapter" / "__init__.py").write_text("import no_such_module_here\n")
    with pytest.raises(PackError, match="failed to import"):
        load_pack(tmp_path / "c" / "packs", "phaser")


def test_generic_mode_sees_every_installed_pack_and_leaves_a_broken_one_out(pack: Pack, tmp_path: Path) -> None:
    _copy(pack, tmp_path)
    (tmp_path / "packs" / "broken").mkdir()
    (tmp_path / "packs" / "broken" / "pack.yaml").write_text("id: broken\n")
    (tmp_path / "packs" / "notes").mkdir()  # no pack.yaml: not a pack
    assert installed_pack_ids(tmp_path / "packs") == ["broken", "phaser"]
    packs, refused = load_installed(tmp_path / "packs")
    assert [p.id for p in packs] == ["phaser"] and list(refused) == ["broken"]
    assert "invalid pack manifest" in refused["broken"]
    assert load_installed(tmp_path / "nowhere") == ([], {})


def _fake(pack_id: str, banner: str) -> EngineAdapter:
    module = cast(AdapterModule, SimpleNamespace(detects=lambda text: banner in text))
    return EngineAdapter(pack_id=pack_id, title=pack_id.title(), version="1", root=Path("."),
                         node_modules=Path("."), module=module)


def test_generic_mode_chooses_the_adapter_by_evidence(pack: Pack) -> None:
    other = _fake("other", "OtherEngine v8")
    adapters = [pack.adapter, other]
    assert choose_adapter(adapters, ["console.log('OtherEngine v8.1')"]) is other
    assert choose_adapter(adapters, ['window.Phaser={VERSION:"3.60.0"}']) is pack.adapter
    assert choose_adapter(adapters, ["a plain canvas game"]) is pack.adapter  # none: the configured pack's
    assert choose_adapter(adapters, ['{VERSION:"3.60.0"}', "OtherEngine v8"]) is pack.adapter  # both: likewise
    assert choose_adapter([other, pack.adapter], []) is other
    with pytest.raises(PackError):
        choose_adapter([], ["x"])


_STAND_IN = """
globalThis.window = globalThis;
globalThis.document = {querySelector: () => ({})};
window.__tier2ScanKeys = () => {};
window.__tier2KeyNames = new Set(['KeyP']);
%s
const kb = {keys: [{keyCode: 37}],
            _events: {'keydown-SPACE': {fn() {}}, 'keydown-A': {fn() {}}, 'keyup-ESC': {fn() {}}}};
const box = {x: 10, y: 20, width: 40, height: 30, centerX: 30, centerY: 35};
const play = {sys: {settings: {key: 'Play'}}, input: {keyboard: kb, _events: {pointerdown: {}},
  _list: [{input: {enabled: true}, visible: true, getBounds: () => box}]},
  children: {list: [{type: 'Sprite', x: 5, y: 6, visible: true, alpha: 1, texture: {key: '__MISSING'}}]},
  cameras: {main: {zoom: 1, scrollX: 0, scrollY: 0, width: 800, height: 600, x: 0, y: 0}}};
const game = {loop: {frame: 42}, scene: {getScenes: () => [play]}, config: {}, isBooted: true,
  renderer: {type: 2}, scale: {width: 800, height: 600}, input: {keyboard: {captures: [32]}},
  canvas: {width: 800, height: 600, getBoundingClientRect: () => ({left: 0, top: 0, width: 400, height: 300})}};
const e = window.__tier2Engine;
const before = e.info();
(function step() {}).bind(game);  // Game.boot binds its step function to the game
console.log(JSON.stringify({before, info: e.info(), frame: e.frame(), missing: e.missingTextures(),
                            snapshot: e.snapshot(), discover: e.discover()}));
"""


def test_the_page_script_finds_the_game_and_answers_for_it(pack: Pack, tmp_path: Path) -> None:
    script = tmp_path / "page.js"
    script.write_text(_STAND_IN % pack.adapter.page_js)
    out = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=30, check=True).stdout
    got: dict[str, Any] = json.loads(out)
    assert got["before"]["game"] is False and got["before"]["booted"] is False
    assert got["info"] == {"game": True, "booted": True, "scenes": ["Play"], "renderer": "webgl", "frame": 42,
                           "canvas": True}
    assert got["frame"] == 42 and got["missing"] == 1
    assert got["snapshot"]["scenes"] == "Play" and list(got["snapshot"]["objects"].values())[0]["type"] == "Sprite"
    d = got["discover"]
    # the keyboard plugin's key names come back as KeyboardEvent.code names; key codes as numbers
    assert set(d["names"]) == {"KeyP", "Space", "KeyA", "Escape"} and sorted(d["codes"]) == [32, 37]
    assert d["pointer"] is True and d["interactive"] == [[15, 18, 20, 15]]  # page coordinates (canvas at half size)
