"""The Phaser a game ships, by evidence; its type data (phaser.d.ts before 3.60); reads told from calls; no type
data → "engine version X unverified", never a failure the game's own engine would not have."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.fixtures.fixture_games import GAMES
from tests.unit.validators.static.helpers import ADAPTER, adapter_module
from tier2.settings.loader import Policy
from tier2.validators.runner import apply_verdicts
from tier2.validators.static import run_static_gates

check_engine_calls = adapter_module("engine_calls").check_engine_calls
engine_version_module = adapter_module("engine_version")
doclets_from_dts = adapter_module("dts").doclets_from_dts
fetch_phaser_types, shipped_phaser = engine_version_module.fetch_phaser_types, engine_version_module.shipped_phaser
build_index = adapter_module("api").build_index

DTS = """/// <reference types="./matter" />
declare namespace Phaser {
    namespace Tweens {
        /**
         * The Tween Manager.
         */
        class TweenManager {
            constructor(scene: Phaser.Scene);
            /**
             * Create a Tween Timeline.
             */
            timeline(config?: Phaser.Types.Tweens.TimelineBuilderConfig | { tweens: object[] }): Phaser.Tweens.Timeline;
            readonly scene: Phaser.Scene;
            static count: number;
        }
        class Timeline extends Phaser.Events.EventEmitter implements Phaser.Mixin.Alpha {
            play(): this;
        }
    }
    namespace Mixin {
        interface Alpha {
            setAlpha(value?: number): this;
        }
    }
    namespace Events {
        class EventEmitter {
            on(event: string | symbol, fn: Function, context?: any): this;
        }
    }
    namespace Math {
        function Between(min: number, max: number): number;
        var PI2: number;
    }
    enum BlendModes {
        SKIP_CHECK,
        NORMAL = 0,
    }
}
declare class Class {
}
"""


def test_declarations_give_the_same_index_shape_as_the_doclet_json() -> None:
    index = build_index(doclets_from_dts(DTS), "3.55.2")
    tm = index["classes"]["Phaser.Tweens.TweenManager"]["members"]
    assert tm["timeline"] == "f:Phaser.Tweens.Timeline" and tm["scene"] == "v"
    timeline = index["classes"]["Phaser.Tweens.Timeline"]["members"]
    assert {"play", "on", "setAlpha"} <= set(timeline)  # extends and implements (mixins) are both inherited
    assert index["statics"]["Phaser.Math.Between"] == "f" and index["statics"]["Phaser.Math.PI2"] == "v"
    assert index["statics"]["Phaser.BlendModes.NORMAL"] == "v" and index["statics"]["Phaser.Tweens.TweenManager.count"]
    assert "Class" not in index["classes"]  # outside Phaser


def test_a_doclet_property_without_a_name_is_skipped() -> None:
    # phaser@3.80.1's types/phaser.json has one; the index must still build
    index = build_index([{"kind": "typedef", "longname": "Phaser.Types.T", "properties": [
        {"type": {"names": ["number"]}}, {"name": "x", "type": {"names": ["number"]}}]}], "3.80.1")
    assert index["classes"]["Phaser.Types.T"]["members"] == {"x": "v"}


def _game(tmp_path: Path, name: str, banner: str) -> Path:
    game = tmp_path / name
    shutil.copytree(GAMES / name, game)
    (game / "lib").mkdir()
    (game / "lib" / "phaser.min.js").write_text(f'!function(){{var t={{VERSION:"{banner}"}}}}();')
    return game


def test_the_shipped_version_comes_from_the_vendored_file_then_the_lockfile_then_package_json(tmp_path: Path) -> None:
    game = _game(tmp_path, "old-phaser", "3.55.2")
    assert shipped_phaser(game) == ("3.55.2", "lib/phaser.min.js carries Phaser 3.55.2")
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "index.html").write_text("<script type=module src=/src/main.js></script>")
    assert shipped_phaser(bare) is None
    (bare / "package.json").write_text('{"dependencies": {"phaser": "^3.70.0"}}')
    assert shipped_phaser(bare) == ("3.70.0", "package.json depends on phaser ^3.70.0")
    (bare / "package-lock.json").write_text('{"packages": {"node_modules/phaser": {"version": "3.80.1"}}}')
    assert shipped_phaser(bare) == ("3.80.1", "package-lock.json locks phaser 3.80.1")


def test_hostile_versions_are_never_passed_to_npm(tmp_path: Path) -> None:
    assert fetch_phaser_types("3.55.2 --registry=http://evil", tmp_path) is None
    assert fetch_phaser_types("latest", tmp_path) is None
    assert fetch_phaser_types("3.55.2", tmp_path, extra=("../../etc/passwd",)) is None
    assert not list(tmp_path.iterdir())


async def test_no_type_data_makes_the_version_unverified_never_a_failure(node_modules: Path, tmp_path: Path,
                                                                        monkeypatch) -> None:
    monkeypatch.setattr(engine_version_module, "npm_path", lambda: None)  # no npm: nothing to fetch
    game = _game(tmp_path, "old-phaser", "3.55.2")
    engine, _magic = await run_static_gates(game, ADAPTER, engines_dir=tmp_path / "engines")
    assert not engine.passed  # against the pinned 3.90.0, timeline is missing ...
    assert engine.evidence["shipped"] == {"version": "3.55.2", "evidence": "lib/phaser.min.js carries Phaser 3.55.2",
                                          "verified": False}
    assert any("'timeline'" in f.message for f in engine.findings)
    assert any(f.message.startswith("engine version 3.55.2 unverified") for f in engine.findings)
    assert all(f.rule == "l1.engine_calls.version_unverified" for f in engine.findings)
    assert apply_verdicts(engine, "generic", Policy()).passed  # ... which is a finding, not a verdict


async def test_an_undefined_constant_read_is_told_from_a_missing_call(node_modules: Path, tmp_path: Path) -> None:
    game = _game(tmp_path, "no-such-api", "3.90.0")  # the pinned version: nothing to fetch
    src = (game / "src" / "game.js").read_text()
    (game / "src" / "game.js").write_text("const K = Phaser.Input.Keyboard.KeyCodes.F13 || 124;\n" + src)
    engine, _ = await run_static_gates(game, ADAPTER, engines_dir=tmp_path / "engines")
    rules = {f.message.split("`")[1]: f.rule for f in engine.findings}
    assert rules == {"Phaser.Input.Keyboard.KeyCodes.F13": "l1.engine_calls.undefined_read",
                     "this.add.sparkleBurst": None}, rules
    generic = apply_verdicts(engine, "generic", Policy())
    assert not generic.passed and [f.rule for f in generic.findings if f.severity == "error"] == [None]
    assert not apply_verdicts(check_engine_calls({"src/a.js": "x"}, _api(node_modules)), "generic", Policy()).findings


def _api(node_modules: Path):
    return adapter_module("api").load_phaser_api(node_modules)
