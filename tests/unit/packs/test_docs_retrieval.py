"""Engine-doc retrieval: the generator on the real phaser.d.ts, the guides, the index and its disk cache, and the
core's ignorance of any engine (the facet is the pack's data)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from tier2.packs import Pack
from tier2.packs.retrieval import api_mentions, load_docs_index, parse_dts, split_markdown
from tier2.packs.retrieval import index as index_mod
from tier2.packs.retrieval.facet import load_facet

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def real_sections(pack: Pack) -> dict:
    facet = load_facet(pack)
    return {s.id: s for s in parse_dts(facet.types_path.read_text(), "phaser.d.ts")}


def test_generator_on_the_real_type_file(real_sections: dict) -> None:
    kinds: dict[str, int] = {}
    for s in real_sections.values():
        kinds[s.kind] = kinds.get(s.kind, 0) + 1
    assert len(real_sections) > 13_000
    assert kinds["class"] >= 250 and kinds["method"] >= 5000 and kinds["property"] >= 5000
    assert kinds["namespace"] >= 150 and kinds["function"] >= 400 and kinds["type"] >= 300
    sprite = real_sections["Phaser.Physics.Arcade.Sprite#setVelocityX"]
    assert (sprite.kind, sprite.signature, sprite.type) == ("method", "setVelocityX(x: number): this", "this")
    assert "horizontal component of the body's velocity" in sprite.doc
    assert real_sections["Phaser.Scene#add"].type == "Phaser.GameObjects.GameObjectFactory"
    factory = real_sections["Phaser.GameObjects.GameObjectFactory#sprite"]
    assert factory.signature.startswith("sprite(x: number, y: number, texture: string | Phaser.Textures.Texture")
    assert factory.type == "Phaser.GameObjects.Sprite" and any(p.startswith("texture — ") for p in factory.params)
    cls = real_sections["Phaser.Physics.Arcade.Sprite"]
    assert cls.kind == "class" and cls.extends == "Phaser.GameObjects.Sprite" and "implements" not in cls.signature
    assert "new Phaser.Physics.Arcade.Sprite(scene: Phaser.Scene" in cls.signature
    assert real_sections["Phaser.Math.Between"].kind == "function"
    assert real_sections["Phaser.Scale.FIT"].kind == "constant"
    assert real_sections["Phaser.BlendModes.ADD"].kind == "constant"  # an enum member
    assert real_sections["Phaser.Types.Core.GameConfig.physics"].type == "Phaser.Types.Core.PhysicsConfig"
    # deprecations are flagged (the type file marks exactly one: Arcade's Size component's setSize)
    deprecated = sorted(i for i, s in real_sections.items() if s.deprecated)
    assert deprecated == ["Phaser.Physics.Arcade.Components.Size#setSize"]
    assert not real_sections["Phaser.Physics.Arcade.Body#setSize"].deprecated


def test_parse_dts_shapes_and_overloads() -> None:
    text = """declare namespace Eng {
    namespace Things {
        /**
         * A widget.
         * @param name Its name.
         */
        class Widget extends Eng.Base implements Eng.Mixin {
            constructor(name: string);
            /**
             * Spin it.
             * @param turns How many.
             */
            spin(turns: number): this;
            spin(turns: number, fast: boolean): this;
            static create(): Eng.Things.Widget;
            readonly size?: number;
        }
        type Config = {
            /**
             * Speed. @deprecated use pace
             */
            speed?: number;
        };
        enum Mode {
            FAST,
            SLOW = 2,
        }
        function make<T>(x: T): Eng.Things.Widget;
        const LIMIT: number;
    }
}
"""
    secs = {s.id: s for s in parse_dts(text, "e.d.ts")}
    assert sorted(secs) == ["Eng", "Eng.Things", "Eng.Things.Config", "Eng.Things.Config.speed", "Eng.Things.LIMIT",
                            "Eng.Things.Mode", "Eng.Things.Mode.FAST", "Eng.Things.Mode.SLOW", "Eng.Things.Widget",
                            "Eng.Things.Widget#size", "Eng.Things.Widget#spin", "Eng.Things.Widget.create",
                            "Eng.Things.make"]
    assert secs["Eng.Things.Widget#spin"].signature == ("spin(turns: number): this\n"
                                                        "spin(turns: number, fast: boolean): this")
    assert secs["Eng.Things.Widget#spin"].params == ("turns — How many.",)
    assert secs["Eng.Things.Widget"].extends == "Eng.Base" and secs["Eng.Things.Widget"].doc == "A widget."
    assert secs["Eng.Things.Widget.create"].type == "Eng.Things.Widget"
    assert secs["Eng.Things.make"].type == "Eng.Things.Widget" and secs["Eng.Things.LIMIT"].type == "number"
    assert secs["Eng.Things.Config.speed"].deprecated and not secs["Eng.Things.Widget#spin"].deprecated
    assert secs["Eng.Things.Widget#size"].source == "e.d.ts:16"
    assert parse_dts(text, "e.d.ts") == parse_dts(text, "e.d.ts")  # deterministic


def test_guides_split_at_headings_not_in_code() -> None:
    text = ("---\nname: x\ndescription: Short.\n---\n\n# Title\nintro\n\n## Build\n- a\n```\n# not a heading\n```\n"
            "## Build\nb\n")
    secs = split_markdown(text, "skills/x/SKILL.md")
    assert [s.id for s in secs] == ["skills/x/SKILL.md#section", "skills/x/SKILL.md#title",
                                    "skills/x/SKILL.md#build", "skills/x/SKILL.md#build-4"]
    assert secs[0].doc == "Short." and "# not a heading" in secs[2].doc


def test_index_records_the_type_file_and_answers(pack: Pack, tmp_path: Path) -> None:
    index = load_docs_index(pack, tmp_path)
    facet = load_facet(pack)
    assert index.meta["types_sha256"] == hashlib.sha256(facet.types_path.read_bytes()).hexdigest()
    assert index.meta["engine_version"] == "3.90.0" == pack.manifest.engine.version
    assert index.meta["deprecated"] == ["Phaser.Physics.Arcade.Components.Size#setSize"]
    assert any(s.kind == "guide" and s.source == "skills/phaser-debugging/SKILL.md" for s in index.sections)
    top = [h.section.id for h in index.search("this.physics.add.sprit is not a function", 3)]
    assert top[0] == "Phaser.Physics.Arcade.Factory#sprite"
    top = [h.section.id for h in index.search("t.add.text(...).setOrign is not a function", 3)]  # minified
    assert top[0] == "Phaser.GameObjects.Text#setOrigin"
    assert index.search("how does the camera follow a sprite", 5)[0].section.id.startswith(
        "Phaser.Cameras.Scene2D.Camera")


def test_hostile_and_empty_queries(pack: Pack, tmp_path: Path) -> None:
    index = load_docs_index(pack, tmp_path)
    assert index.search("", 3) == [] and index.search("   \n", 3) == []
    assert index.search("zzqxv wvvkq", 3) == []  # nothing indexed is near: no guess
    huge = "this.add.sprit is not a function " + "x" * 1_000_000
    assert len(index.search(huge, 3)) <= 3  # cut to max_query_chars, answered
    assert len(index.search("sprite", 10_000)) == 20 and len(index.search("sprite", -5)) == 1
    assert api_mentions("(" * 50_000 + "a.b is not a function") is not None  # no catastrophic backtracking


def _mini_pack(pack: Pack, root: Path, types: str) -> Pack:
    (root / "docs").mkdir(parents=True)
    shutil.copy(pack.root / "docs" / "retrieval.yaml", root / "docs" / "retrieval.yaml")
    (root / "node_modules/phaser/types").mkdir(parents=True)
    (root / "node_modules/phaser/types/phaser.d.ts").write_text(types)
    (root / "node_modules/phaser/package.json").write_text(json.dumps({"version": "3.90.0"}))
    return dataclasses.replace(pack, root=root, genres={})  # no guides at all: genre notes are guides too


def test_cache_is_keyed_by_the_type_file_and_rebuilt_when_stale(pack: Pack, tmp_path: Path) -> None:
    mini = _mini_pack(pack, tmp_path / "pack", "declare namespace Eng {\n    function one(): void;\n}\n")
    cache = tmp_path / "cache"
    first = load_docs_index(mini, cache)
    assert first.meta["cache"] == "built" and [s.id for s in first.sections] == ["Eng", "Eng.one"]
    assert load_docs_index(mini, cache) is first  # the process memo
    index_mod._MEMO.clear()
    again = load_docs_index(mini, cache)
    assert again.meta["cache"] == "hit" and [s.id for s in again.sections] == ["Eng", "Eng.one"]
    [old_file] = list(cache.glob("*.json"))
    (tmp_path / "pack/node_modules/phaser/types/phaser.d.ts").write_text(
        "declare namespace Eng {\n    function two(): void;\n}\n")
    fresh = load_docs_index(mini, cache)  # a new type file: a new key, rebuilt, the stale file removed
    assert fresh.meta["cache"] == "built" and [s.id for s in fresh.sections] == ["Eng", "Eng.two"]
    [new_file] = list(cache.glob("*.json"))
    assert new_file != old_file and fresh.meta["types_sha256"] != first.meta["types_sha256"]
    index_mod._MEMO.clear()
    new_file.write_text("{not json")  # a broken cache file is rebuilt, never trusted
    assert load_docs_index(mini, cache).meta["cache"] == "built"


def test_the_core_knows_no_engine() -> None:
    """Engine names live in the pack's facet: the retrieval code, the tool, the hint layer and the run glue name
    none (the engine-call validator is the one core part that is engine-specific by design)."""
    files = [*sorted((ROOT / "tier2/packs/retrieval").glob("*.py")), ROOT / "tier2/tools/docs.py",
             ROOT / "tier2/learning/docs_hints.py", ROOT / "tier2/runs/loop/addons/docs_hints.py"]
    found = [f"{p.relative_to(ROOT)}:{n}" for p in files
             for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"phaser", line, re.I)]
    assert not found, found
