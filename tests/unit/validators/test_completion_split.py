"""Honest completion: the completion map counts the genre's structural requirements and the brief's content
requirements apart and says which content is unverified and why; content requirements take the hot policy's
design.content_mode (observe: reported, never blocking)."""

from __future__ import annotations

from tier2.settings.policy import DesignPolicy, Policy
from tier2.validators.base import ValidationResult
from tier2.validators.l2 import completion_map
from tier2.validators.runner import apply_policy

SPEC = {"genre": "shooter", "scope": {"buildable": True, "unsupported": []}, "requirements": [
    {"id": "R1", "text": "the player shoots", "source": "s", "role": "gameplay", "kind": "structural",
     "origin": "genre", "predicate": {"kind": "key_action", "key": "Space", "action": "fire"}},
    {"id": "R2", "text": "a menu scene", "source": "s", "role": "ui", "predicate": {"kind": "scene_exists",
                                                                                      "scene": "Menu"}},
    {"id": "R3", "text": "the player is a paper airplane", "source": "paper airplane", "role": "assets",
     "kind": "player", "origin": "brief", "span": [25, 39],
     "predicate": {"kind": "asset_role", "role": "player", "asset": "player.paper_airplane"}},
    {"id": "R4", "text": "city backdrop", "source": "city", "role": "assets", "kind": "setting", "origin": "brief",
     "span": [79, 83], "predicate": {"kind": "asset_role", "role": "backdrop", "asset": "backdrop.city"}},
    {"id": "R5", "text": "the player can shoot (shoots down)", "source": "shoots down", "role": "gameplay",
     "kind": "mechanic", "origin": "brief", "span": [40, 51],
     "predicate": {"kind": "key_action", "key": "Space", "action": "fire"}},
]}


def _gate(rid: str, passed: bool, summary: str) -> ValidationResult:
    return ValidationResult(id=f"l2.req.{rid}", layer="L2", passed=passed, summary=summary)


def test_structural_and_content_are_counted_apart_with_the_reasons() -> None:
    gates = [_gate("R1", True, "ok"), _gate("R2", True, "ok"), _gate("R3", True, "ok"),
             _gate("R4", False, "city backdrop: offline draws the pack's default background"),
             _gate("R5", True, "ok")]
    done = completion_map(SPEC, gates)
    assert (done["verified"], done["total"]) == (4, 5)
    assert done["structural"] == {"verified": 2, "total": 2}  # R2 has no kind: structural, as older specs
    assert done["content"] == {"verified": 2, "total": 3}
    assert done["content_summary"] == ("content: 2 of 3 verified (unverified: 'city backdrop' — offline draws the "
                                       "pack's default background)")
    assert done["summary"].startswith("4 of 5 requirements verified — content: 2 of 3 verified")
    rows = {r["id"]: r for r in done["requirements"]}
    assert rows["R4"]["kind"] == "setting" and rows["R4"]["origin"] == "brief" and rows["R4"]["span"] == [79, 83]
    assert rows["R2"]["kind"] == "structural" and rows["R2"]["origin"] == "genre"


def test_a_spec_without_content_keeps_its_summary() -> None:
    spec = {"requirements": SPEC["requirements"][:2]}
    done = completion_map(spec, None, "stopped before the build")
    assert done["summary"] == "0 of 2 requirements verified" and done["content_summary"] == ""
    assert done["content"] == {"verified": 0, "total": 0} and done["structural"] == {"verified": 0, "total": 2}


def _req_gate(origin: str | None, mode: str | None = None, passed: bool = False) -> ValidationResult:
    evidence = {"requirement": "R9", **({"origin": origin} if origin else {}), **({"mode": mode} if mode else {})}
    return ValidationResult(id="l2.req.R9", layer="L2", passed=passed, summary="s", evidence=evidence)


def test_content_requirements_take_the_hot_content_mode() -> None:
    observe = Policy()
    enforce = Policy(design=DesignPolicy(content_mode="enforce"))
    assert observe.design.content_mode == "observe"
    assert not apply_policy(_req_gate("brief"), observe).blocking  # reported, never blocks
    assert apply_policy(_req_gate("brief"), enforce).blocking
    # the requirement's own mode (the spec) wins over the policy default; a gates: entry for its id wins over both
    assert not apply_policy(_req_gate("brief", "observe"), enforce).blocking
    assert apply_policy(_req_gate("brief", "enforce"), observe).blocking
    pinned = Policy(design=DesignPolicy(content_mode="enforce"), gates={"l2.req.R9": "observe"})
    assert not apply_policy(_req_gate("brief", "enforce"), pinned).blocking
    # structural requirements keep the gates: family and the defaults, whatever the content mode
    assert not apply_policy(_req_gate("genre"), enforce).blocking
    assert apply_policy(_req_gate("genre"), Policy(gates={"l2.req": "enforce"})).blocking
    assert not apply_policy(_req_gate("brief"), Policy(gates={"l2.req": "enforce"})).blocking
