"""A follow-up as goal version n+1 (seed 002 §2.1, §4.3, §5.1): the leader's reading of it, the nodes it
invalidates, the requirements nothing may drop, the plan diff, and the end it forces when it cannot be built.

Pure functions over the plan and the spec; the design phase calls them and writes the results.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tier2.design import ROLES
from tier2.design.roles import FollowUpAnswer
from tier2.plan import Plan, requirement_diff

__all__ = ["follow_up_requirements", "goal_diff", "invalidations", "person_edit", "stop_for"]

#: the reason of a requirement made from a part of a follow-up the offline leader could not read
UNINTERPRETED = "the offline model cannot interpret this change"


def invalidations(answer: FollowUpAnswer, version: int) -> dict[str, str]:
    """node -> why, for every designer a change touches (a genre change: the whole design)."""
    out: dict[str, str] = {}
    for ch in answer.changes:
        why = f"goal v{version}: {ch.kind} — {ch.text[:160]}"
        if ch.kind == "genre":
            out.update({n: why for n in ("design.brief", *(f"design.{r}" for r in ROLES))})
            continue
        for role in ch.roles:
            if role in ROLES:
                out.setdefault(f"design.{role}", why)
    return out


def follow_up_requirements(answer: FollowUpAnswer, version: int, first_id: int) -> list[dict[str, Any]]:
    """One enforce-mode requirement per part of the follow-up that cannot become a change (nothing the user wrote
    is dropped): its predicate names a gate no build runs, so it stays unverified with its reason."""
    out: list[dict[str, Any]] = []
    parts = ([("unbuildable", p, p.reason or "the pack cannot build this change") for p in answer.unbuildable]
             + [("contradiction", p, p.reason or "the follow-up contradicts itself") for p in answer.contradictions]
             + [("uninterpreted", p, UNINTERPRETED) for p in answer.uninterpreted])
    for i, (what, part, reason) in enumerate(parts):
        out.append({"id": f"R{first_id + i}", "text": f"unverified: {reason}: “{part.text[:200]}”"[:300],
                    "source": part.text[:500] or "(the follow-up)", "role": "leader", "kind": "mechanic",
                    "origin": "brief", "mode": "enforce",
                    "predicate": {"kind": "gate_passes", "gate": f"l2.follow_up.{what}"},
                    "goal_version": version})
    return out


def stop_for(answer: FollowUpAnswer) -> tuple[str, list[str]] | None:
    """(the reason, the options) of a follow-up the run cannot deliver: blocked when the pack cannot build a
    change or the follow-up contradicts itself (seed 002 §5.1: a safe block, not a failure); not delivered when a
    part could not be read. None: every part is a change the design can make."""
    if answer.unbuildable:
        options = list(dict.fromkeys(o for p in answer.unbuildable for o in p.options))
        said = "; ".join(f"“{p.text[:120]}”: {p.reason[:200]}" for p in answer.unbuildable[:4])
        return f"blocked: the pack cannot build {said}", options
    if answer.contradictions:
        said = "; ".join(f"“{p.text[:120]}”: {p.reason[:200]}" for p in answer.contradictions[:4])
        return (f"blocked: the follow-up contradicts itself ({said}); say which you want",
                [p.text for p in answer.contradictions])
    if answer.uninterpreted:
        said = "; ".join(f"“{p.text[:160]}”" for p in answer.uninterpreted[:4])
        return f"not delivered: {UNINTERPRETED}: {said}", []
    return None


def goal_diff(old_spec: Mapping[str, Any] | None, spec: Mapping[str, Any], invalidated: Mapping[str, str],
              plan: Plan, executed: Iterable[str]) -> dict[str, Any]:
    """The plan diff of a goal version: requirements added / changed / removed, nodes invalidated (and why), and
    the nodes reused (verified and not executed this run)."""
    ran = set(executed)
    return {"requirements": requirement_diff(old_spec, spec), "invalidated": dict(invalidated),
            "reused": sorted(n for n, node in plan.nodes.items() if node.status == "verified" and n not in ran)}


def person_edit(recorded_sha: str | None, on_disk_sha: str | None) -> bool:
    """A person edited the design files: the spec on disk is not the one tier2 wrote last."""
    return bool(recorded_sha and on_disk_sha and recorded_sha != on_disk_sha)
