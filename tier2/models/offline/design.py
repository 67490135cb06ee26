"""The offline policy for the design studio: the leader and every designer, deterministically from the brief.

Like the writer policy it is a pure function of the conversation. A designer first looks at the project with one
read-only ``Glob`` (the same tools a model designer gets), then answers its role's JSON. The leader answers the
split (genre, title, one task per designer) and, given the designers' answers, the converged spec: the genre
the brief's words name, honest scope against the pack's behaviours, and requirements whose predicates differ by
brief. It cannot invent gameplay the pack does not have; the spec says so instead of substituting.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tier2.design import ROLES, GenreGuess, classify_brief, clauses, out_of_scope
from tier2.design.spec import SPEC_VERSION
from tier2.models.offline.history import Conversation
from tier2.models.offline.policy import Action
from tier2.packs import Pack, pack_by_ref

__all__ = ["DESIGN_MARKER", "decide_design", "is_design"]

#: the line every design-studio system prompt carries (``tier2/prompts/design/*.md``)
DESIGN_MARKER = re.compile(r"tier2 design studio — role: ([a-z_.]+)")
_PACK = re.compile(r"pack: ([^\s;]+)")
_ANSWER = re.compile(r"<designer-answer role=\"([a-z_]+)\">\s*(.*?)\s*</designer-answer>", re.S)
_NOTE = re.compile(r"<team-message from=\"([^\"]+)\">\s*(.*?)\s*</team-message>", re.S)
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10}


def is_design(conv: Conversation) -> bool:
    return DESIGN_MARKER.search(conv.system) is not None


def _role(conv: Conversation) -> str:
    m = DESIGN_MARKER.search(conv.system)
    return m.group(1) if m else ""


def _goal_lines(conv: Conversation) -> list[str]:
    return [line for line in conv.brief.splitlines() if line.strip()]


def _first_brief(conv: Conversation) -> str:
    lines = _goal_lines(conv)
    return lines[0] if lines else conv.brief


def _clause(cl: list[str], *words: str) -> str | None:
    for c in cl:
        low = c.lower()
        if any(re.search(rf"\b{re.escape(w)}", low) for w in words):
            return c
    return None


def _lives(brief: str) -> int | None:
    m = re.search(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:lives|hearts|hit points)\b",
                  brief.lower())
    if not m:
        return None
    return int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]


def _req(what: str, source: str | None, fallback: str, **predicate: Any) -> dict[str, Any]:
    return {"text": what, "source": source or fallback, "predicate": predicate}


def _pack(conv: Conversation) -> Pack | None:
    m = _PACK.search(conv.system)
    return pack_by_ref(m.group(1)) if m else None


def _genre(conv: Conversation, pack: Pack | None) -> tuple[str, GenreGuess]:
    """The genre the brief's words name (the pack's vocabulary), else the pack's default genre."""
    guess = classify_brief(conv.brief, pack.genre_vocab() if pack else {})
    return guess.genre or (pack.manifest.default_genre if pack else "unknown"), guess


def _source(cl: list[str], words: list[str], first: str) -> str:
    return _clause(cl, *words) or first if words else first


def _designer(conv: Conversation, role: str) -> dict[str, Any]:
    """One designer's answer, from the brief and the pack genre's own data (requirements, tables, behaviours)."""
    brief, goal = _first_brief(conv), conv.brief
    cl = clauses(brief)
    first = cl[0] if cl else brief
    pack = _pack(conv)
    genre_id, guess = _genre(conv, pack)
    genre = pack.genres.get(genre_id) if pack else None
    words = guess.words.get(genre_id, [])
    tables = genre.build_tables(brief) if genre else {}
    look = genre.build_tables(goal).get("theme.json", {}) if genre else {}  # a follow-up re-themes the look
    theme = look or {"title": "Game", "palette": {}, "subtitle": brief[:60]}
    title = str(tables.get("theme.json", {}).get("title") or theme.get("title") or "Game")
    reqs: list[dict[str, Any]] = []
    decisions: list[str] = []
    notes: list[str] = []
    out_tables: dict[str, Any] = {}
    if genre is None:
        notes = [f"The pack has no {genre_id} template: this design states the brief, not a buildable plan."]
    mine = [r for r in (genre.spec.requirements if genre else []) if r.role == role]
    for r in mine:
        reqs.append(_req(r.text, _source(cl, words, first), first, **r.predicate))
    if role == "gameplay":
        decisions = [f"Core loop ({genre.spec.title if genre else genre_id}): "
                     f"{genre.spec.summary if genre else 'as the brief describes it.'}", "Escape abandons to the menu."]
        reqs.insert(0, _req("Space starts the game from the menu", None, first, kind="key_action", key="Space",
                            action="start"))
    elif role == "level":
        decisions = [f"Levels/waves of a {genre_id} game, rising in difficulty."]
    elif role == "economy":
        out_tables = {k: v for k, v in tables.items() if k != "theme.json"} | (
            {"theme.json": tables["theme.json"]} if "theme.json" in tables else {})
        numbers = {k: v for t in tables.values() if isinstance(t, dict) for k, v in t.items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)}
        decisions = ["Numbers: " + ", ".join(f"{k} {v}" for k, v in list(numbers.items())[:8]) + "."]
        lives = _lives(brief)
        if lives and genre is not None and "lives" in genre.spec.state:
            reqs.append(_req(f"the player starts with {lives} lives", _clause(cl, "live", "heart"), first,
                             kind="state_value", key="lives", min=lives, max=lives))
    elif role == "ui":
        decisions = ["Scenes: Menu → Play → GameOver; the HUD shows the score/goal and the controls."]
        reqs += [_req("a menu scene", None, first, kind="scene_exists", scene="Menu"),
                 _req("a game-over scene", None, first, kind="scene_exists", scene="GameOver"),
                 _req(f"the title “{title}” is shown", None, first, kind="ui_label", text=title)]
    elif role == "audio":
        decisions = ["Music: a loop matching the brief's mood; short cues for each action."]
        notes = ["The Phaser pack ships no audio assets or audio behaviour: the game is silent (stated in scope "
                 "when the brief asks for sound)."]
    elif role == "vfx":
        pal = theme.get("palette", {})
        decisions = ["Feedback: a colour flash on each action, a pulse on a completed goal."] + (
            [f"Palette accent {pal['accent']} on background {pal['background']}."] if "accent" in pal else [])
    elif role == "assets":
        pal = theme.get("palette", {})
        decisions = [f"Shapes drawn in code (no image files): palette {', '.join(f'{k} {v}' for k, v in pal.items())}.",
                     f"Title “{theme.get('title')}”, subtitle “{theme.get('subtitle')}”."]
    summary = f"{role} design for “{title}”, a {genre_id} game: " + (decisions[0] if decisions else "")
    return {"role": role, "summary": summary, "decisions": decisions, "requirements": reqs, "tables": out_tables,
            "notes": notes}


def _split(conv: Conversation) -> dict[str, Any]:
    brief = _first_brief(conv)
    pack = _pack(conv)
    genre_id, _ = _genre(conv, pack)
    genre = pack.genres.get(genre_id) if pack else None
    title = str((genre.build_tables(brief).get("theme.json", {}).get("title") if genre else None) or "Game")
    tasks = {role: f"Design the {role} of this {genre_id} game from the brief; answer your role's JSON."
             for role in ROLES}
    return {"title": title, "genre": genre_id, "pitch": f"{title}: a {genre_id} game — {brief}", "tasks": tasks}


def _converge(conv: Conversation) -> dict[str, Any]:
    brief = _first_brief(conv)
    text = conv.last_user
    answers: dict[str, dict[str, Any]] = {}
    for role, body in _ANSWER.findall(text):
        try:
            answers[role] = json.loads(body)
        except json.JSONDecodeError:
            continue
    pack = _pack(conv)
    genre, guess = _genre(conv, pack)
    genres = list(pack.genres) if pack else []
    ref = pack.ref if pack else "?"
    unsupported = [{"what": what, "reason": why} for what, why in out_of_scope(conv.brief)]
    if genre not in genres:
        unsupported.insert(0, {"what": f"{genre} gameplay", "reason": (
            f"pack {ref} has templates for {', '.join(genres) or 'no'} games and none for a {genre}. The brief asks "
            f"for a {genre}: the build will be judged as a {genre} by the genre gate and not delivered as "
            f"something else.")})
    if guess.genre is None and pack is not None:
        default = pack.default_genre
        unsupported.append({"what": "the brief's genre", "reason": (
            f"the brief names no genre pack {ref} knows ({', '.join(genres)}); it is built as the pack's default, "
            f"a {default.id} game ({default.spec.title})")})
    if re.search(r"\b(sound|music|audio|sfx)\b", conv.brief, re.I):
        unsupported.append({"what": "sound and music", "reason": "the pack has no audio assets or behaviour"})
    cl = clauses(brief)
    genre_source = next((c for c in cl if any(w in c.lower() for w in guess.words.get(genre, []))), cl[0] if cl
                        else brief)
    reqs: list[dict[str, Any]] = [{"text": f"the game is a {genre} game", "source": genre_source, "role": "leader",
                                   "predicate": {"kind": "gate_passes", "gate": "l2.genre"}}]
    for role in ROLES:
        for r in answers.get(role, {}).get("requirements", []):
            reqs.append({"text": r["text"], "source": r["source"], "role": role, "predicate": r["predicate"]})
    for i, r in enumerate(reqs):
        r["id"] = f"R{i + 1}"
    notes = _NOTE.findall(text)
    pitch = next((a.get("summary", "") for a in answers.values() if a.get("role") == "gameplay"), "")
    if notes:
        pitch += " Team notes: " + "; ".join(f"{who}: {what}" for who, what in notes)
    title = (answers.get("ui", {}).get("summary", "").split("“")[1].split("”")[0]
             if "“" in answers.get("ui", {}).get("summary", "") else "Game")
    return {"spec_version": SPEC_VERSION, "title": title, "genre": genre, "brief": conv.brief, "pitch": pitch[:2000],
            "scope": {"buildable": genre in genres and not out_of_scope(conv.brief),
                      "pack": ref, "pack_genres": genres, "unsupported": unsupported},
            "tables": sorted(answers.get("economy", {}).get("tables", {})),
            "requirements": [{k: r[k] for k in ("id", "text", "source", "role", "predicate")} for r in reqs]}


def decide_design(conv: Conversation) -> Action:
    role = _role(conv)
    if role == "leader":
        if "<designer-answer" in conv.last_user:
            return Action("final", text=json.dumps(_converge(conv), ensure_ascii=False))
        return Action("final", text=json.dumps(_split(conv), ensure_ascii=False))
    area = role.split(".", 1)[1] if "." in role else role
    if conv.last("Glob") is None and conv.project:
        return Action("tools", [("Glob", {"pattern": "docs/design/*.md", "path": conv.project})])
    return Action("final", text=json.dumps(_designer(conv, area), ensure_ascii=False))
