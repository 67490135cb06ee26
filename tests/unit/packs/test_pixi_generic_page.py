"""The PixiJS adapter's in-page script in generic mode (``capability_packs/pixi/adapter/page.js``), run in node on
stand-in pages: it finds a PixiJS 7 game through its EventSystem's bind and a PixiJS 8 game through the devtools
init hooks (keeping a hook the page installs), counts only the renderer's screen renders as frames, takes the
stage from them, and answers info/snapshot/discover/missingTextures for it — without the game's cooperation."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tier2.settings.loader import REPO_ROOT

PAGE_JS = REPO_ROOT / "capability_packs" / "pixi" / "adapter" / "page.js"

_PAGE = """
globalThis.window = globalThis;
globalThis.document = {querySelector: () => ({})};
globalThis.HTMLImageElement = class HTMLImageElement {};
window.__tier2KeyNames = new Set(['ArrowLeft', 'Space']);
%s
const img = (w) => Object.assign(new HTMLImageElement(), {complete: true, naturalWidth: w});
const at = (x, y, w, h) => () => ({x, y, width: w, height: h});
const node = (o) => ({x: 0, y: 0, rotation: 0, alpha: 1, visible: true, children: [], ...o});
const canvas = {isConnected: true, getBoundingClientRect: () => ({left: 10, top: 20, width: 400, height: 300})};
const world = () => {
  const ship = node({x: 12.4, y: 500, texture: %s, getBounds: at(0, 480, 40, 40)});
  const lost = node({x: 300, y: 40, texture: %s, getBounds: at(290, 30, 20, 20)});
  const hidden = node({visible: false, texture: %s, getBounds: at(0, 0, 20, 20)});
  const play = node({eventMode: 'static', _events: {pointertap: {}}, text: 'PLAY', getBounds: at(350, 250, 100, 40)});
  const screen = node({label: 'Game', children: [ship, lost, hidden, play], getBounds: at(0, 0, 800, 600)});
  return {stage: node({children: [node({children: [screen], getBounds: at(0, 0, 800, 600)})]}), ship};
};
const out = {};
%s
setTimeout(() => {
  const e = window.__tier2Engine;
  const app = e.app();
  Object.assign(out, {info: e.info(), frame: e.frame(), missing: e.missingTextures(), snapshot: e.snapshot(),
                      discover: e.discover(), app: app ? {renderer: !!app.renderer, stage: !!app.stage} : null});
  console.log(JSON.stringify(out));
}, 0);
"""

_V7 = """
const {stage, ship} = world();
const renderer = {gl: {}, screen: {width: 800, height: 600}, view: canvas, render() {}};
out.before = window.__tier2Engine.info();
class EventSystem {  // PixiJS 7: binds its DOM handlers in its constructor, then holds the renderer
  constructor(r) { this.onPointerDown = this.onPointerDown.bind(this); this.renderer = r; }
  onPointerDown() {}
  setTargetElement() {}
}
new EventSystem(renderer);
queueMicrotask(() => {
  renderer.render(stage);
  renderer.render(stage);
  renderer.render(ship, {renderTexture: {}});  // render-to-texture: not a frame, not the stage
});
"""

_V8 = """
const {stage, ship} = world();
const renderer = {name: 'webgl', screen: {width: 800, height: 600}, canvas, render() {}};
globalThis.__PIXI_APP_INIT__ = (app) => { out.pageHookSaw = !!app.stage; };  // the page's own devtools hook
globalThis.__PIXI_APP_INIT__({renderer, stage}, '8.14.1');
renderer.render({container: stage});
renderer.render({container: ship, target: {}});
"""


def _run(tmp_path: Path, game: str, textures: tuple[str, str, str]) -> dict[str, Any]:
    script = tmp_path / "page.js"
    script.write_text(_PAGE % (PAGE_JS.read_text(), *textures, game))
    proc = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def test_a_pixi7_game_is_found_through_its_event_system(tmp_path: Path) -> None:
    ok, broken = "{baseTexture: {resource: {source: img(32)}}}", "{baseTexture: {resource: {source: img(0)}}}"
    out = _run(tmp_path, _V7, (ok, broken, broken))
    assert out["before"]["game"] is False
    info = out["info"]
    assert (info["game"], info["booted"], info["renderer"], info["frame"]) == (True, True, "webgl", 2)
    # the wrapper and the screen in it, named by their label (a minified class name otherwise) and a stable id
    assert len(info["scenes"]) == 1 and info["scenes"][0].split("/")[-1].startswith("Game#")
    assert out["frame"] == 2 and out["missing"] == 1  # the hidden broken sprite is not shown
    objects = out["snapshot"]["objects"]
    assert out["snapshot"]["scenes"] == info["scenes"][0]
    assert {o["type"] for o in objects.values()} >= {"Container", "Sprite", "Text"}
    ship = next(o for o in objects.values() if o["y"] == 500)
    assert ship["x"] == 12 and ship["frame"].startswith("t")
    d = out["discover"]
    # the PLAY text: bounds centre (400, 270) in an 800x600 screen drawn at 400x300 from (10, 20)
    assert d["pointer"] is True and d["interactive"] == [[210, 155, 50, 20]]
    assert [10 + 10, 20 + 250, 20, 20] in d["objects"]  # the ship, for board pairs
    assert d["names"] == ["ArrowLeft", "Space"]
    assert out["app"] == {"renderer": True, "stage": True}  # no Application announced: the renderer and stage


def test_a_pixi8_game_is_found_through_the_devtools_hook_the_page_keeps(tmp_path: Path) -> None:
    ok, broken = "{source: {resource: img(32)}}", "{source: {resource: img(0)}}"
    out = _run(tmp_path, _V8, (ok, ok, broken))
    assert out["pageHookSaw"] is True
    assert (out["info"]["booted"], out["info"]["renderer"], out["frame"]) == (True, "webgl", 1)
    assert out["missing"] == 0  # only the hidden sprite's image is broken
    assert len(out["snapshot"]["objects"]) == 6


_HOOKED = """
const {stage} = world();
const renderer = {name: 'webgl', screen: {width: 800, height: 600}, canvas, render() {}};
window.__TIER2__ = {game: {app: {renderer, stage}, scenes: {active: () => ['Play']}, frame: () => 7}};
"""


def test_a_tier2_games_hook_names_its_scenes_and_frames(tmp_path: Path) -> None:
    ok, empty = "{source: {resource: img(32)}}", "{label: 'EMPTY', source: {label: 'EMPTY'}}"
    out = _run(tmp_path, _HOOKED, (ok, empty, ok))
    assert (out["info"]["scenes"], out["info"]["booted"], out["frame"]) == (["Play"], True, 7)
    assert out["missing"] == 1  # a tier2 game draws a texture it lacks with the empty one
    generic = _run(tmp_path, _V8, (ok, empty, ok))
    assert generic["missing"] == 0  # any other game may use the empty texture on purpose (a hit area)


def test_no_game_no_answers(tmp_path: Path) -> None:
    out = _run(tmp_path, "", ("null", "null", "null"))
    assert out["info"] == {"game": False, "booted": False, "scenes": [], "renderer": None, "frame": None,
                           "canvas": True}
    assert (out["snapshot"], out["discover"], out["missing"], out["frame"], out["app"]) == (None, None, 0, None, None)
