"""l1.engine_calls against the real Phaser 3.90.0 index: real games pass clean, invented/removed APIs fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.validators.static.helpers import ADAPTER, DEMOS, TEMPLATE, adapter_module, inject, injected_line
from tier2.errors import ToolchainMissing
from tier2.validators.static import read_sources, run_static_gates, scan_sources
from tier2.validators.static import scan as scan_module

phaser_api_module = adapter_module("api")
PhaserApi, load_phaser_api = phaser_api_module.PhaserApi, phaser_api_module.load_phaser_api
check_engine_calls = adapter_module("engine_calls").check_engine_calls

PLAY = "src/scenes/Play.js"


def test_template_has_zero_findings(api: PhaserApi, template_src: dict[str, str]) -> None:
    result = check_engine_calls(template_src, api)
    assert result.passed, [f.message for f in result.findings]
    assert result.findings == []
    assert result.id == "l1.engine_calls" and result.layer == "L1"
    assert result.evidence["checked"] > 100  # the check really resolved the template's Phaser calls


MUTANTS = [
    # (code injected into Play.create(), bad member, expected suggestion or None)
    ("this.add.superSprite(10, 10, 'coin');", "superSprite", "sprite"),
    ("this.physics.add.magicCollider(this.children, this.children);", "magicCollider", "collider"),
    ("const r = Phaser.Math.RandomMagic(1, 6);", "RandomMagic", None),
    ("this.tweens.timeline({ tweens: [] });", "timeline", None),
    ("this.game.physics.startSystem(Phaser.Physics.ARCADE);", "physics", None),
    ("this.add.sprit(0, 0, 'coin');", "sprit", "sprite"),
    ("this.add.text(0, 0, 'x').setOrgin(0.5);", "setOrgin", "setOrigin"),
    ("this.cameras.main.shakeHard(100);", "shakeHard", "shake"),
    ("this.input.keyboard.createCursorKeyz();", "createCursorKeyz", "createCursorKeys"),
    ("const g = this.add.graphics(); g.fillCirc(1, 2, 3);", "fillCirc", "fillCircle"),
    ("const s = new Phaser.Physics.Arcade.ArcadeSprite(this, 0, 0, 'coin');", "ArcadeSprite", "Sprite"),
]


@pytest.mark.parametrize(("code", "member", "suggestion"), MUTANTS, ids=[m[1] for m in MUTANTS])
def test_mutant_fails_with_the_right_finding(api: PhaserApi, template_src: dict[str, str], code: str, member: str,
                                             suggestion: str | None) -> None:
    src = inject(template_src, PLAY, code)
    result = check_engine_calls(src, api)
    assert not result.passed
    line = injected_line(src, PLAY, code)
    hits = [f.message for f in result.findings if f"'{member}'" in f.message]
    assert hits, [f.message for f in result.findings]
    assert hits[0].startswith(f"{PLAY}:{line}:"), hits[0]
    if suggestion:
        assert f"did you mean '{suggestion}'" in hits[0]


def test_removed_timeline_cites_the_phaser_changelog(api: PhaserApi, template_src: dict[str, str]) -> None:
    result = check_engine_calls(inject(template_src, PLAY, "this.tweens.timeline({});"), api)
    (msg,) = [f.message for f in result.findings]
    assert "Phaser.Tweens.TweenManager has no member 'timeline'" in msg and "v3.60" in msg and "removed" in msg


def test_phaser2_game_is_flagged(api: PhaserApi) -> None:
    src = {"src/main.js": (
        "var game = new Phaser.Game(800, 600, Phaser.AUTO, '', { preload: preload, create: create });\n"
        "function create() {\n"
        "  game.physics.startSystem(Phaser.Physics.ARCADE);\n"
        "  this.physics.startSystem(1);\n"
        "}\n")}
    msgs = [f.message for f in check_engine_calls(src, api).findings]
    assert any(m.startswith("src/main.js:3:8:") and "Phaser.Game has no member 'physics'" in m for m in msgs), msgs
    assert any("'ARCADE'" in m and "did you mean 'Arcade'" in m for m in msgs), msgs
    assert any(m.startswith("src/main.js:4:") and "'startSystem'" in m for m in msgs), msgs


def test_named_imports_are_checked(api: PhaserApi) -> None:
    src = {"src/a.js": "import { Scene, SuperScene } from 'phaser';\nexport class A extends Scene {\n"
                       "  create() { this.add.sprite(0, 0, 'k').setTint(1); this.add.spriteX(); }\n}\n"}
    msgs = [f.message for f in check_engine_calls(src, api).findings]
    assert len(msgs) == 2, msgs
    assert "'SuperScene'" in msgs[0] and "'spriteX'" in msgs[1]


def test_unknown_receivers_and_own_properties_are_not_flagged(api: PhaserApi) -> None:
    src = {"src/a.js": (
        "import Phaser from 'phaser';\n"
        "export default class A extends Phaser.Scene {\n"
        "  create(data) {\n"
        "    data.whatever.magic();\n"                      # parameter: unknown
        "    const hero = this.add.sprite(0, 0, 'h');\n"
        "    hero.hp = 3; hero.hp -= 1;\n"                  # the game's own expando property
        "    this.helper().doThings();\n"                   # own method, unknown return
        "    this.cameras.main.customZoomLevel = 2;\n"      # written, not read
        "    window.foo.bar(); Math.hypot(1, 2);\n"
        "    function inner() { this.add.nothing(); }\n"    # `this` is not the scene here
        "    this.events.on('x', function () { this.frob(); });\n"
        "  }\n"
        "  helper() { return this.registry.get('x'); }\n"
        "}\n")}
    result = check_engine_calls(src, api)
    assert result.passed, [f.message for f in result.findings]


def test_own_scene_method_typo_is_flagged(api: PhaserApi) -> None:
    src = {"src/a.js": "export class A extends Phaser.Scene {\n  create() { this.refreshHud(); }\n"
                       "  refreshHUD() {}\n}\n"}
    (finding,) = check_engine_calls(src, api).findings
    assert "'refreshHud'" in finding.message and "did you mean 'refreshHUD'" in finding.message


def test_parse_errors_are_warnings_not_failures(api: PhaserApi) -> None:
    result = check_engine_calls({"src/bad.js": "const = ;"}, api)
    assert result.passed and result.findings[0].severity == "warning"
    assert result.evidence["unparsed"] == ["src/bad.js"]


@pytest.mark.parametrize("demo", DEMOS)
def test_create_game_demo_has_zero_findings(api: PhaserApi, demo_games: dict[str, Path], demo: str) -> None:
    src = read_sources(demo_games[demo])
    assert src, f"{demo}: no sources"
    result = check_engine_calls(src, api)
    assert result.passed, [f.message for f in result.findings]
    assert result.findings == []
    assert result.evidence["checked"] > 50


def test_index_is_derived_from_the_installed_package(api: PhaserApi, node_modules: Path) -> None:
    pkg = json.loads((node_modules / "phaser" / "package.json").read_text())
    assert api.version == pkg["version"] == "3.90.0"
    assert (node_modules / "phaser" / "types" / "phaser.d.ts").exists()  # shipped alongside the JSDoc JSON we read
    assert api.cache_path is not None and pkg["version"] in api.cache_path.name
    factory = api.classes["Phaser.GameObjects.GameObjectFactory"]["members"]
    assert {"sprite", "text", "particles", "tween"} <= set(factory) and "superSprite" not in factory
    assert "timeline" not in api.classes["Phaser.Tweens.TweenManager"]["members"]
    assert api.static_kind("Phaser.Math.Between") == "f" and api.static_kind("Phaser.Scale.FIT") == "v"
    assert api.static_kind("Phaser.Input.Events.POINTER_DOWN") == "v"
    scene = api.classes["Phaser.Scene"]["members"]
    assert scene["add"] == "v:Phaser.GameObjects.GameObjectFactory"
    assert scene["physics"] == "v:Phaser.Physics.Arcade.ArcadePhysics"
    assert "bringToTop" in api.classes["Phaser.GameObjects.DisplayList"]["members"]  # generic `augments` resolved


SCENE_SYSTEMS = {
    "add": "Phaser.GameObjects.GameObjectFactory", "make": "Phaser.GameObjects.GameObjectCreator",
    "physics": "Phaser.Physics.Arcade.ArcadePhysics", "input": "Phaser.Input.InputPlugin",
    "cameras": "Phaser.Cameras.Scene2D.CameraManager", "tweens": "Phaser.Tweens.TweenManager",
    "time": "Phaser.Time.Clock", "load": "Phaser.Loader.LoaderPlugin", "scene": "Phaser.Scenes.ScenePlugin",
    "anims": "Phaser.Animations.AnimationManager", "textures": "Phaser.Textures.TextureManager",
    "registry": "Phaser.Data.DataManager", "data": "Phaser.Data.DataManager", "events": "Phaser.Events.EventEmitter",
    "game": "Phaser.Game", "sys": "Phaser.Scenes.Systems", "children": "Phaser.GameObjects.DisplayList",
    "lights": "Phaser.GameObjects.LightsManager", "scale": "Phaser.Scale.ScaleManager",
    "plugins": "Phaser.Plugins.PluginManager", "sound": "Phaser.Sound.WebAudioSoundManager",
    "renderer": "Phaser.Renderer.WebGL.WebGLRenderer",
}


def test_scene_systems_come_from_the_docs(api: PhaserApi) -> None:
    scene = api.classes["Phaser.Scene"]["members"]
    for system, cls in SCENE_SYSTEMS.items():
        kind, types = api.member(frozenset({"Phaser.Scene"}), system)[0]
        assert kind == "v" and cls in types, (system, scene[system])
        assert api.is_class(cls)
    assert api.member(frozenset({"Phaser.Input.InputPlugin"}), "keyboard")[0][1] == [
        "Phaser.Input.Keyboard.KeyboardPlugin"]
    assert api.member(frozenset({"Phaser.Cameras.Scene2D.CameraManager"}), "main")[0][1] == [
        "Phaser.Cameras.Scene2D.Camera"]
    assert api.member(frozenset({"Phaser.Physics.Arcade.ArcadePhysics"}), "add")[0][1] == [
        "Phaser.Physics.Arcade.Factory"]


def test_cached_index_loads_fast(node_modules: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_phaser_api(node_modules)  # the on-disk cache exists (built here if this is the first use)
    phaser_api_module._load.cache_clear()

    def no_build(*_: object) -> None:
        raise AssertionError("the cached index was rebuilt from the doclets")

    monkeypatch.setattr(phaser_api_module, "build_index", no_build)  # the cached path reads one JSON file
    api = load_phaser_api(node_modules)
    assert api.build_ms == 0, "expected the on-disk cache to be used"
    assert load_phaser_api(node_modules) is api  # in-process memo


async def test_run_static_gates(node_modules: Path, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.js").write_text("import Phaser from 'phaser';\nPhaser.Math.Betwen(1, 2);\n")
    engine, magic = await run_static_gates(tmp_path, ADAPTER)
    assert (engine.id, engine.passed) == ("l1.engine_calls", False)
    assert "did you mean 'Between'" in engine.findings[0].message
    assert (magic.id, magic.mode, magic.passed) == ("l1.magic_numbers", "observe", True)


async def test_missing_node_raises_toolchain_missing(node_modules: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.js").write_text("1;\n")
    monkeypatch.setattr(scan_module.shutil, "which", lambda _name: None)
    with pytest.raises(ToolchainMissing, match="node"):
        await run_static_gates(tmp_path, ADAPTER)
    with pytest.raises(ToolchainMissing, match="node"):
        scan_sources({"src/main.js": "1;"}, node_modules)


def test_read_sources_lists_src_js_only() -> None:
    src = read_sources(TEMPLATE)
    assert "src/main.js" in src and PLAY in src
    assert all(k.startswith("src/") and k.endswith(".js") for k in src)
