"""The data-tables skill is generated from the genres' JSON Schemas (single source) and is never stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from tier2.errors import PackError
from tier2.packs import Pack, load_pack
from tier2.packs.docs import BEGIN, END, shape, sync_skill
from tier2.testing.packs import copy_pack


def test_the_committed_skill_matches_the_schemas(pack: Pack) -> None:
    assert not sync_skill(pack, check=True), "run `tier2 packs docs phaser`"
    text = (pack.skills_root / pack.manifest.texts.tables_skill / "SKILL.md").read_text()
    for genre in pack.genres.values():
        assert f"### {genre.id} — " in text
        for table in genre.spec.data_tables:
            assert f"| {table} |" in text


def test_a_schema_change_makes_the_skill_stale_and_docs_rewrites_it(pack: Pack, tmp_path: Path) -> None:
    root = copy_pack(pack, tmp_path / "packs")
    schema = root / "genres" / "shop" / "schemas" / "economy.schema.json"
    schema.write_text(schema.read_text().replace('"goal_money"', '"target_money"'))
    copy = load_pack(tmp_path / "packs", "phaser")
    assert sync_skill(copy, check=True)
    assert sync_skill(copy) and not sync_skill(copy, check=True)
    assert "target_money" in (copy.skills_root / copy.manifest.texts.tables_skill / "SKILL.md").read_text()


def test_missing_markers_are_an_error(pack: Pack, tmp_path: Path) -> None:
    root = copy_pack(pack, tmp_path / "packs")
    skill = root / "skills" / pack.manifest.texts.tables_skill / "SKILL.md"
    skill.write_text(skill.read_text().replace(BEGIN, "").replace(END, ""))
    with pytest.raises(PackError, match="markers"):
        sync_skill(load_pack(tmp_path / "packs", "phaser"))


def test_shapes() -> None:
    s = {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string"}, "b": {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 0}},
        "c": {"type": "string", "pattern": "^#[0-9a-fA-F]{6}$"}, "d": {"enum": ["x", "y"]}}}
    assert shape(s) == '{a, b?: [int ≥0] (≥1), c?: #rrggbb, d?: "x"|"y"}'
    s["properties"]["e"] = {"type": "integer", "deprecated": True}  # accepted from old data, never documented
    s["properties"]["f"] = {"type": "object", "properties": {"g": {"type": "string", "deprecated": True},
                                                            "h": {"type": "boolean", "deprecated": False}}}
    assert shape(s) == '{a, b?: [int ≥0] (≥1), c?: #rrggbb, d?: "x"|"y", f?: {h?: bool}}'


def test_the_skill_never_shows_a_deprecated_field(pack: Pack) -> None:
    text = (pack.skills_root / pack.manifest.texts.tables_skill / "SKILL.md").read_text()
    shop = text.split("### shop — ", 1)[1].split("\n### ", 1)[0]
    for legacy in ("controls_hint", "sell?", "max_orders_missed"):
        assert legacy not in shop, legacy
