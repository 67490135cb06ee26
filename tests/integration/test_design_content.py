"""The offline design studio reads the brief's own content: the paper-airplane brief of issue #23 gets, besides the
shooter's structural requirements, one requirement per thing it asks for, each with its kind, the brief span it
comes from and a predicate; a brief no pack genre builds is designed, not built as the default genre — real Redis
and files, a real design phase; only the leader's model is scripted (the offline policy itself)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.design_helpers import run_design
from tier2.design import validate_spec

pytestmark = [pytest.mark.redis]

AIRPLANE = "a vertical shmup where a paper airplane shoots down angry origami birds over a city"


async def test_the_paper_airplane_spec_has_its_content_requirements_with_spans(runtime, tmp_path: Path) -> None:
    outcome, _ = await run_design(runtime, tmp_path, brief=AIRPLANE)
    spec = outcome.spec
    assert validate_spec(spec) == [] and spec["genre"] == "shooter" and spec["scope"]["buildable"]
    on_disk = json.loads((tmp_path / "game" / "design" / "spec.json").read_text())
    assert on_disk["requirements"] == spec["requirements"]
    structural = [r for r in spec["requirements"] if r.get("origin") == "genre"]
    content = [r for r in spec["requirements"] if r.get("origin") == "brief"]
    assert structural and all(r["kind"] == "structural" for r in structural)
    by_kind = {r["kind"]: r for r in content}
    assert set(by_kind) >= {"player", "enemy", "setting", "mechanic"}
    for r in content:  # every content requirement quotes the brief span it comes from
        a, b = r["span"]
        assert spec["brief"][a:b] == r["source"] and 0 <= a < b <= len(spec["brief"])
    assert by_kind["player"]["source"] == "paper airplane"
    assert by_kind["player"]["predicate"] == {"kind": "asset_role", "role": "player",
                                              "asset": "player.paper_airplane"}
    assert by_kind["enemy"]["source"] == "angry origami birds"
    assert by_kind["enemy"]["predicate"]["role"] == "enemy" and "origami" in by_kind["enemy"]["predicate"]["asset"]
    assert by_kind["setting"]["source"] == "city" and by_kind["setting"]["text"] == "city backdrop"
    assert by_kind["setting"]["predicate"] == {"kind": "asset_role", "role": "backdrop", "asset": "backdrop.city"}
    assert by_kind["mechanic"]["predicate"] == {"kind": "key_action", "key": "Space", "action": "fire"}
    done = outcome.completion(None, "paused after design")
    assert done["content"] == {"verified": 0, "total": len(content)}
    assert done["structural"] == {"verified": 0, "total": len(structural)}
    assert done["content_summary"].startswith(f"content: 0 of {len(content)} verified (unverified: ")


async def test_a_brief_no_pack_genre_builds_is_designed_not_built_as_the_default(runtime, tmp_path: Path) -> None:
    outcome, _ = await run_design(runtime, tmp_path, brief="a racing game with karts and three laps",
                                  ends=("failed", "not buildable: "))  # the design stays; nothing is built
    spec = outcome.spec
    assert validate_spec(spec) == []
    assert spec["genre"] == "racing" and spec["scope"]["buildable"] is False
    reasons = " ".join(u["reason"] for u in spec["scope"]["unsupported"])
    assert "no genre of the pack builds" in reasons and "racing" in reasons
    assert spec["genre"] not in spec["scope"]["pack_genres"]
    count = next(r for r in spec["requirements"] if r.get("kind") == "count")
    assert count["source"] == "three laps" and count["mode"] == "observe"  # no game here keeps a lap count


async def test_a_brief_naming_another_packs_engine_is_not_built_with_this_one(runtime, tmp_path: Path) -> None:
    """The run's pack is phaser; the brief asks for PixiJS: the design says which pack suits it and nothing is built
    with this run's engine (the design stays for a person or a model)."""
    assert runtime.pack.id == "phaser"
    brief = "an idle clicker game about baking cookies, made with PixiJS"
    outcome, _ = await run_design(runtime, tmp_path, brief=brief,
                                  ends=("failed", "not buildable: the brief asks for PixiJS"))
    assert outcome.spec["genre"] == "clicker"  # this pack could build the genre: the engine is what it cannot
    assert not (tmp_path / "game" / "dist").exists()
