"""The offline leader's spec for every brief of the labelled set (bench/intent): a valid spec, the genre the brief
describes or not buildable with the reason — never the pack's default genre for a brief that asked for something
else — and content requirements whose spans are the brief's own text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tier2.design import validate_spec
from tier2.models.offline.design import decide_design
from tier2.models.offline.history import Conversation
from tier2.packs import Pack

SET = Path(__file__).resolve().parents[4] / "bench" / "intent" / "briefs.jsonl"


def _converge(pack: Pack, brief: str) -> dict[str, Any]:
    conv = Conversation(system=f"tier2 design studio — role: leader; pack: {pack.ref}", brief=brief, project=None,
                        steps=[], last_user="Converge the designers' answers.\n<designer-answer role=\"ui\">{}"
                                            "</designer-answer>", chars=0)
    out: dict[str, Any] = json.loads(decide_design(conv).text)
    return out


def test_every_labelled_brief_gets_an_honest_spec(pack: Pack) -> None:
    cases = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    default = pack.manifest.default_genre
    for case in cases:
        spec = _converge(pack, case["brief"])
        assert validate_spec(spec) == [], (case["id"], validate_spec(spec))
        scope = spec["scope"]
        if scope["buildable"]:
            assert spec["genre"] in pack.genres
            assert spec["genre"] != default or case["genre"] == default, case  # no default-genre delivery
        else:
            assert scope["unsupported"] and all(u["reason"] for u in scope["unsupported"]), case
        if case["genre"] is None:
            assert not scope["buildable"], case
        for r in spec["requirements"]:
            assert r["origin"] in ("genre", "brief")
            if r["origin"] == "brief":
                a, b = r["span"]
                assert spec["brief"][a:b] == r["source"], (case["id"], r)
                assert r["kind"] != "structural"
            else:
                assert r["kind"] == "structural"


def test_an_unreadable_brief_is_not_buildable_and_names_its_language(pack: Pack) -> None:
    spec = _converge(pack, "una tienda de pociones donde preparo pociones con hierbas y las vendo a los aldeanos")
    assert spec["scope"]["buildable"] is False and spec["genre"] not in pack.genres
    assert any("Spanish" in u["reason"] for u in spec["scope"]["unsupported"])
    assert "Juego" not in spec["title"] and not [r for r in spec["requirements"] if r.get("origin") == "brief"]
