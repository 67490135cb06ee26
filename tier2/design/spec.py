"""``design/spec.json``: the checkable design — genre, honest scope, and requirements with acceptance predicates.

The JSON Schema (`SPEC_SCHEMA`, also shipped as ``tier2/design/spec.schema.json``) is validated by tier2 code
before the writer starts (`validate_spec`); a spec that does not validate never reaches the writer. Each
requirement names the brief sentence it comes from and one machine-checkable predicate, evaluated by the L2
conformance gates (`tier2.validators.l2`) on the built game.

Predicate kinds (``predicate.kind``):

* ``scene_exists`` ``{scene}`` — the game has (and shows or declares) that scene;
* ``ui_label`` ``{text}`` — a UI text with this label is part of the game (its data or sources);
* ``key_action`` ``{key, action}`` — pressing ``key`` (a KeyboardEvent code) in play changes the game state;
* ``play_outcome`` ``{outcome}`` — the scripted play reaches ``won`` (or ``lost``);
* ``play_event`` ``{counter}`` — a counter in the game's state (``ordersDone``, ``kills``...) goes up in play;
* ``state_value`` ``{key, min?, max?}`` — the game's state at the start of play has ``key`` within bounds;
* ``min_count`` ``{table, field, n}`` — ``data/<table>`` lists at least ``n`` entries under ``field``;
* ``gate_passes`` ``{gate}`` — another gate (``l1.economy``, ``l2.genre``...) passed on the same build;
* ``asset_role`` ``{role, asset}`` — in play, a display object the game reports for ``role`` (player, enemy,
  pickup, goods, customer, obstacle, backdrop) uses the registered asset ``asset`` (a `tier2.design.assets.asset_key`).

Optional fields of a requirement: ``kind`` (``structural`` for the genre's own structure, else what the brief asks
for: one of `REQUIREMENT_KINDS`), ``origin`` (``brief``: from the brief's own words; ``genre``: the genre's
structure), ``span`` ([start, end) character offsets into the spec's ``brief`` the requirement comes from) and
``mode`` (``enforce`` | ``observe``: overrides the hot policy's default for it, `tier2.validators.runner`).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from tier2.design.assets import ASSET_KEY

__all__ = ["PREDICATE_KINDS", "REQUIREMENT_KINDS", "SPEC_SCHEMA", "SPEC_VERSION", "spec_sha256", "validate_spec"]

SPEC_VERSION = 1

_PRED: dict[str, tuple[list[str], dict[str, Any]]] = {
    "scene_exists": (["scene"], {"scene": {"type": "string", "minLength": 1, "maxLength": 64}}),
    "ui_label": (["text"], {"text": {"type": "string", "minLength": 1, "maxLength": 120}}),
    "key_action": (["key", "action"], {"key": {"type": "string", "pattern": "^[A-Za-z0-9]{1,20}$"},
                                       "action": {"type": "string", "minLength": 1, "maxLength": 40}}),
    "play_outcome": (["outcome"], {"outcome": {"enum": ["won", "lost"]}}),
    "play_event": (["counter"], {"counter": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,39}$"}}),
    "state_value": (["key"], {"key": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,39}$"},
                              "min": {"type": "number"}, "max": {"type": "number"}}),
    "min_count": (["table", "field", "n"], {"table": {"type": "string", "pattern": "^[a-z_]+\\.json$"},
                                            "field": {"type": "string", "minLength": 1, "maxLength": 40},
                                            "n": {"type": "integer", "minimum": 1, "maximum": 1000}}),
    "gate_passes": (["gate"], {"gate": {"type": "string", "pattern": "^l[12]\\.[a-z0-9_.]+$"}}),
    "table_value": (["table", "path"], {"table": {"type": "string", "pattern": "^[a-z_]+\\.json$"},
                                        "path": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_.\\[\\]*]{0,119}$"},
                                        "min": {"type": "number"}, "max": {"type": "number"},
                                        "equals": {"type": ["number", "string", "boolean"]}}),
    "asset_role": (["role", "asset"], {"role": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,31}$"},
                                       "asset": {"type": "string", "pattern": ASSET_KEY.pattern}}),
}
PREDICATE_KINDS = tuple(_PRED)
#: a requirement's ``kind``: the genre's structure, or what the brief asks for (`tier2.design.reader`)
REQUIREMENT_KINDS = ("structural", "player", "enemy", "pickup", "goods", "customer", "obstacle", "setting", "mechanic",
                     "count", "win", "lose", "tone")


def _predicate_schema() -> dict[str, Any]:
    variants = []
    for kind, (required, props) in _PRED.items():
        variants.append({"type": "object", "required": ["kind", *required], "additionalProperties": False,
                         "properties": {"kind": {"const": kind}, **props}})
    return {"oneOf": variants}


SPEC_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://tier2.local/schemas/design-spec-v1.json",
    "title": "tier2 design spec",
    "type": "object",
    "required": ["spec_version", "title", "genre", "brief", "scope", "requirements"],
    "additionalProperties": False,
    "properties": {
        "spec_version": {"const": SPEC_VERSION},
        "title": {"type": "string", "minLength": 1, "maxLength": 120},
        "genre": {"type": "string", "pattern": "^[a-z_]{2,32}$"},
        "brief": {"type": "string", "minLength": 1},
        "goal_version": {"type": "integer", "minimum": 1},
        "pitch": {"type": "string", "maxLength": 2000},
        "scope": {
            "type": "object", "required": ["buildable", "unsupported"], "additionalProperties": False,
            "properties": {
                "buildable": {"type": "boolean"},
                "pack": {"type": "string"},
                "pack_genres": {"type": "array", "items": {"type": "string"}},
                "unsupported": {"type": "array", "items": {
                    "type": "object", "required": ["what", "reason"], "additionalProperties": False,
                    "properties": {"what": {"type": "string", "minLength": 1},
                                   "reason": {"type": "string", "minLength": 1}}}},
            },
        },
        "tables": {"type": "array", "items": {"type": "string", "pattern": "^[a-z_]+\\.json$"}},
        "requirements": {
            "type": "array", "minItems": 1, "maxItems": 60,
            "items": {
                "type": "object", "required": ["id", "text", "source", "role", "predicate"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "string", "pattern": "^R[0-9]{1,3}$"},
                    "text": {"type": "string", "minLength": 1, "maxLength": 300},
                    "source": {"type": "string", "minLength": 1, "maxLength": 500},
                    "role": {"type": "string", "pattern": "^[a-z_]{2,32}$"},
                    "predicate": _predicate_schema(),
                    "kind": {"enum": list(REQUIREMENT_KINDS)},
                    "origin": {"enum": ["brief", "genre"]},
                    "span": {"type": "array", "minItems": 2, "maxItems": 2,
                             "items": {"type": "integer", "minimum": 0}},
                    "mode": {"enum": ["enforce", "observe"]},
                    #: the goal version whose follow-up asked for it (absent: the first brief)
                    "goal_version": {"type": "integer", "minimum": 1},
                },
            },
        },
    },
}


@cache
def _validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(SPEC_SCHEMA)
    return jsonschema.Draft202012Validator(SPEC_SCHEMA)


def validate_spec(spec: object) -> list[str]:
    """Every schema violation of ``spec`` (empty: valid), plus duplicate requirement ids."""
    errors = []
    for err in sorted(_validator().iter_errors(spec), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        msg = err.message if len(err.message) < 300 else err.message[:300] + "…"
        if err.validator == "oneOf" and isinstance(err.instance, dict):
            msg = f"predicate {json.dumps(err.instance)[:200]} matches no predicate kind ({', '.join(PREDICATE_KINDS)})"
        errors.append(f"{where}: {msg}")
    if isinstance(spec, dict) and isinstance(spec.get("requirements"), list):
        ids = [r.get("id") for r in spec["requirements"] if isinstance(r, dict)]
        dup = sorted({i for i in ids if ids.count(i) > 1 and isinstance(i, str)})
        if dup:
            errors.append(f"requirements: duplicate ids {', '.join(dup)}")
    return errors


def spec_sha256(spec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def schema_file_text() -> str:
    """The schema as shipped (``spec.schema.json``); a test pins it equal to `SPEC_SCHEMA`."""
    return resources.files(__package__).joinpath("spec.schema.json").read_text()
