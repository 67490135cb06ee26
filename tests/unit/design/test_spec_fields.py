"""The spec's optional requirement fields (kind, origin, span, mode) and the asset_role predicate: in the schema the
code checks and in the shipped spec.schema.json alike."""

from __future__ import annotations

import copy
import json

from tier2.design import validate_spec
from tier2.design.spec import REQUIREMENT_KINDS, SPEC_SCHEMA, schema_file_text

GOOD = {"spec_version": 1, "title": "T", "genre": "shooter", "brief": "a paper airplane over a city",
        "scope": {"buildable": True, "unsupported": []},
        "requirements": [
            {"id": "R1", "text": "the player is a paper airplane", "source": "paper airplane", "role": "assets",
             "predicate": {"kind": "asset_role", "role": "player", "asset": "player.paper_airplane"},
             "kind": "player", "origin": "brief", "span": [2, 16], "mode": "observe"},
            {"id": "R2", "text": "a menu scene", "source": "a paper airplane", "role": "ui",
             "predicate": {"kind": "scene_exists", "scene": "Menu"}, "kind": "structural", "origin": "genre"}]}


def test_the_shipped_schema_is_the_checked_one_and_has_the_fields() -> None:
    assert json.loads(schema_file_text()) == SPEC_SCHEMA
    props = SPEC_SCHEMA["properties"]["requirements"]["items"]["properties"]
    assert {"kind", "origin", "span", "mode"} <= set(props)
    assert props["kind"]["enum"] == list(REQUIREMENT_KINDS) and "structural" in REQUIREMENT_KINDS
    assert set(props["origin"]["enum"]) == {"brief", "genre"} and set(props["mode"]["enum"]) == {"enforce", "observe"}
    required = SPEC_SCHEMA["properties"]["requirements"]["items"]["required"]
    assert not {"kind", "origin", "span", "mode"} & set(required)  # optional: older specs stay valid


def test_the_new_fields_validate_and_bad_values_do_not() -> None:
    assert validate_spec(GOOD) == []
    old = copy.deepcopy(GOOD)
    for r in old["requirements"]:
        for k in ("kind", "origin", "span", "mode"):
            r.pop(k, None)
    old["requirements"][0]["predicate"] = {"kind": "scene_exists", "scene": "Play"}
    assert validate_spec(old) == []
    for field, bad in (("kind", "vibe"), ("origin", "model"), ("span", [3]), ("span", [-1, 2]), ("mode", "warn"),
                       ("span", ["a", "b"])):
        spec = copy.deepcopy(GOOD)
        spec["requirements"][0][field] = bad
        assert validate_spec(spec), (field, bad)


def test_the_asset_role_predicate_has_its_exact_shape() -> None:
    for pred in ({"kind": "asset_role", "role": "player"}, {"kind": "asset_role", "asset": "player.x"},
                 {"kind": "asset_role", "role": "player", "asset": "Player Plane"},
                 {"kind": "asset_role", "role": "player", "asset": "player.x", "colour": "red"}):
        spec = copy.deepcopy(GOOD)
        spec["requirements"][0]["predicate"] = pred
        assert any("matches no predicate kind" in e for e in validate_spec(spec)), pred
