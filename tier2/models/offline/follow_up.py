"""The offline design studio on a follow-up: the leader's reading of it, and the game every goal version makes.

* `answer_follow_up` — the leader's third job (``<follow-up>`` in its message): the brief reader's reading
  (`tier2.design.reader.read_follow_up`) as the `tier2.design.roles.FollowUpAnswer` JSON. A knob change the genre's
  own gate-holding refuses (`tier2.packs.Genre.apply_changes`) is unbuildable, with the reason and the options; so
  is another genre (another game: a new thread) — nothing is substituted.
* `effective_tables` — the tables of the goal so far: the first brief's, then each follow-up's themes and knob
  changes replayed in order (deterministic, cached). The economy designer hands them over; the UI, VFX and assets
  designers read their theme.
* `follow_up_requirements` — one enforce-mode requirement per change a follow-up made (a ``table_value`` on the
  number the knob moved, the theme's background), with the goal version that asked for it.
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

from tier2.design.goal import split_goal
from tier2.design.reader import read_follow_up
from tier2.design.reader.types import Change, FollowUp
from tier2.packs import Genre, Pack, pack_by_ref
from tier2.packs.knobs import KnobChange

__all__ = ["answer_follow_up", "effective_tables", "follow_up_requirements"]

_FOLLOW = re.compile(r"<follow-up>\s*(.*?)\s*</follow-up>", re.S)
_GENRE = re.compile(r"<design-genre>([a-z_]*)</design-genre>")
UNINTERPRETED = "the offline model cannot interpret this change"


def _pack(ref: str) -> Pack:
    pack = pack_by_ref(ref)
    if pack is None:
        raise KeyError(f"pack {ref} is not loaded")
    return pack


@functools.lru_cache(maxsize=256)
def _reading(ref: str, genre_id: str, text: str) -> FollowUp:
    pack = _pack(ref)
    return read_follow_up(text, pack.genres[genre_id], pack)


def _retheme(genre: Genre, first: str, tables: dict[str, Any], target: str) -> dict[str, Any]:
    """theme.json made for the first brief set in ``target``, the game's title kept (the same game, a new look)."""
    themed = copy.deepcopy(genre.build_tables(f"{first} — {target}").get("theme.json") or {})
    if not themed or "theme.json" not in tables:
        return tables
    if "title" in tables["theme.json"]:
        themed["title"] = tables["theme.json"]["title"]
    return {**tables, "theme.json": themed}


@functools.lru_cache(maxsize=64)
def _effective(ref: str, genre_id: str, lines: tuple[str, ...]) -> tuple[dict[str, Any], tuple[tuple[int, str,
                                                                                                         Any], ...]]:
    genre = _pack(ref).genres[genre_id]
    tables = genre.build_tables(lines[0])
    made: list[tuple[int, str, Any]] = []  # (goal version, what, detail) of every change applied
    for version, line in enumerate(lines[1:], start=2):
        reading = _reading(ref, genre_id, line)
        for ch in reading.changes:
            if ch.kind == "theme":
                tables = _retheme(genre, lines[0], tables, ch.target)
                made.append((version, "theme", ch.target))
        knobs: list[KnobChange] = [c for c in reading.changes if c.kind == "knob"]
        if knobs:
            applied = genre.apply_changes(tables, knobs, brief=lines[0])
            if applied.ok:
                tables = applied.tables
                made += [(version, "knob", e.as_dict()) for e in applied.edits]
    return tables, tuple(made)


def effective_tables(pack: Pack, genre_id: str, goal: str) -> dict[str, Any]:
    """The tables of the goal so far (a copy)."""
    lines = split_goal(goal)
    if not lines[0] or genre_id not in pack.genres:
        return {}
    return copy.deepcopy(_effective(pack.ref, genre_id, tuple(lines))[0])


def follow_up_requirements(pack: Pack, genre_id: str, goal: str, first_id: int) -> list[dict[str, Any]]:
    """One enforce-mode requirement per change the goal's follow-ups made, checked on the built tables."""
    lines = split_goal(goal)
    if len(lines) < 2 or genre_id not in pack.genres:
        return []
    genre = pack.genres[genre_id]
    tables, made = _effective(pack.ref, genre_id, tuple(lines))
    knobs = {k.id: k for k in genre.spec.adjust}
    out: list[dict[str, Any]] = []
    last: dict[tuple[str, str], int] = {}
    for version, what, detail in made:
        if what == "knob":
            key = (detail["table"], detail["path"])
            if key in last:  # a later version moved the same number again: its requirement replaces this one
                out[last[key]] = {}
            knob = knobs.get(detail["knob"])
            last[key] = len(out)
            out.append({"text": f"{knob.what if knob else detail['knob']}: {detail['new']} (was {detail['old']})",
                        "source": lines[version - 1][:500], "role": knob.role if knob else "economy",
                        "predicate": {"kind": "table_value", "table": detail["table"], "path": detail["path"],
                                      "equals": detail["new"]},
                        "kind": "count", "origin": "brief", "mode": "enforce", "goal_version": version})
        elif what == "theme":
            bg = ((tables.get("theme.json") or {}).get("palette") or {}).get("background")
            if bg is None:
                continue
            out = [r for r in out if not (r and r["predicate"].get("path") == "palette.background")]
            out.append({"text": f"the look follows “{detail}”", "source": lines[version - 1][:500],
                        "role": "vfx", "predicate": {"kind": "table_value", "table": "theme.json",
                                                     "path": "palette.background", "equals": bg},
                        "kind": "setting", "origin": "brief", "mode": "enforce", "goal_version": version})
    rows = [r for r in out if r]
    for i, r in enumerate(rows):
        r["id"] = f"R{first_id + i}"
    return rows


def _change(ch: Change) -> dict[str, Any]:
    return {"text": ch.text, "kind": ch.kind, "roles": list(ch.roles), "target": ch.target,
            "direction": ch.direction, "value": ch.value}


def answer_follow_up(pack: Pack | None, text: str) -> dict[str, Any]:
    """The leader's FollowUpAnswer for the ``<follow-up>`` in ``text`` (its message)."""
    m, g = _FOLLOW.search(text), _GENRE.search(text)
    follow = m.group(1) if m else ""
    genre_id = g.group(1) if g else ""
    if pack is None or genre_id not in pack.genres:
        return {"uninterpreted": [{"text": follow[:500] or "(empty)",
                                   "reason": "the design has no genre of this pack to change"}]}
    reading = _reading(pack.ref, genre_id, follow)
    goal = re.search(r"<brief>\s*(.*?)\s*</brief>", text, re.S)
    so_far = effective_tables(pack, genre_id, goal.group(1) if goal else "")
    unbuildable = [{"text": u.text, "reason": u.reason, "options": list(u.options)} for u in reading.unbuildable]
    changes = []
    for ch in reading.changes:
        if ch.kind == "genre":  # another genre is another game: never rebuilt over this one
            unbuildable.append({"text": ch.text, "reason": f"a {ch.target} game is another game, not a change of "
                                f"this {genre_id} game: start a new thread with a brief for it",
                                "options": list(reading.options)})
        else:
            changes.append(ch)
    knobs: list[KnobChange] = [c for c in changes if c.kind == "knob"]
    if knobs and so_far:
        first = split_goal(goal.group(1) if goal else "")[0]
        applied = pack.genres[genre_id].apply_changes(so_far, knobs, brief=first or follow)
        if not applied.ok:
            unbuildable.append({"text": "; ".join(c.text for c in changes if c.kind == "knob")[:500],
                                "reason": str(applied.refused)[:900], "options": list(reading.options)})
            changes = [c for c in changes if c.kind != "knob"]
    return {"changes": [_change(c) for c in changes], "unbuildable": unbuildable,
            "contradictions": [{"text": c.a.text + (f" / {c.b.text}" if c.b else ""), "reason": c.why}
                               for c in reading.contradictions],
            "uninterpreted": [{"text": s.text, "reason": UNINTERPRETED} for s in reading.uninterpreted]}
