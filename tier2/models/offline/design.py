"""The offline policy for the design studio: the leader and every designer, deterministically from the brief.

Like the writer policy it is a pure function of the conversation. A designer first looks at the project with one
read-only ``Glob`` (the same tools a model designer gets), then answers its role's JSON. The leader answers the
split (genre, title, one task per designer) and, given the designers' answers, the converged spec: the genre the
brief describes (`tier2.design.reader`: what it describes, not a keyword), honest scope against the pack's
behaviours, the genre's structural requirements (``origin: genre``) and one requirement per thing the brief asks
for (``origin: brief``, with its ``kind`` and ``span``; `content_requirements`). It cannot invent gameplay the pack
does not have, and never builds a default genre: a brief whose genre it cannot tell, that no pack genre builds, or
in a language it cannot read gets ``scope.buildable: false`` with the reason.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from tier2.design import ROLES, clauses, out_of_scope
from tier2.design.assets import asset_key
from tier2.design.goal import split_goal
from tier2.design.reader import ENTITY_KINDS, ContentItem, Reading, read_brief
from tier2.design.spec import SPEC_VERSION
from tier2.models.offline.follow_up import answer_follow_up, effective_tables, follow_up_requirements
from tier2.models.offline.history import Conversation
from tier2.models.offline.policy import Action
from tier2.packs import Genre, Pack, pack_by_ref

__all__ = ["DESIGN_MARKER", "MAX_CONTENT", "content_requirements", "decide_design", "is_design", "reading_of"]

#: the line every design-studio system prompt carries (``tier2/prompts/design/*.md``)
DESIGN_MARKER = re.compile(r"tier2 design studio — role: ([a-z_.]+)")
_PACK = re.compile(r"pack: ([^\s;]+)")
_ANSWER = re.compile(r"<designer-answer role=\"([a-z_]+)\">\s*(.*?)\s*</designer-answer>", re.S)
_NOTE = re.compile(r"<team-message from=\"([^\"]+)\">\s*(.*?)\s*</team-message>", re.S)
#: content requirements per spec at most (the schema allows 60 requirements in all)
MAX_CONTENT = 30
#: the designer role a content requirement belongs to (its plan node depends on that designer)
_CONTENT_ROLE = {"player": "assets", "enemy": "assets", "pickup": "assets", "goods": "assets", "customer": "assets",
                 "obstacle": "assets", "setting": "assets", "mechanic": "gameplay", "count": "level",
                 "win": "gameplay", "lose": "gameplay", "tone": "vfx"}


def is_design(conv: Conversation) -> bool:
    return DESIGN_MARKER.search(conv.system) is not None


def _role(conv: Conversation) -> str:
    m = DESIGN_MARKER.search(conv.system)
    return m.group(1) if m else ""


def _first_brief(conv: Conversation) -> str:
    """The goal's first version (the brief; a follow-up's goal carries every version: `tier2.design.goal`)."""
    return split_goal(conv.brief)[0] or conv.brief


def _clause(cl: list[str], *words: str) -> str | None:
    for c in cl:
        low = c.lower()
        if any(re.search(rf"\b{re.escape(w)}", low) for w in words):
            return c
    return None


def _req(what: str, source: str | None, fallback: str, **predicate: Any) -> dict[str, Any]:
    return {"text": what, "source": source or fallback, "predicate": predicate}


def _pack(conv: Conversation) -> Pack | None:
    m = _PACK.search(conv.system)
    return pack_by_ref(m.group(1)) if m else None


@functools.lru_cache(maxsize=64)
def _read(ref: str, brief: str) -> Reading | None:
    pack = pack_by_ref(ref)
    return read_brief(brief, pack.genre_cues(), pack.genres) if pack is not None else None


def reading_of(conv: Conversation) -> Reading | None:
    """The offline reader's reading of the goal (cached: every designer and the leader read the same brief)."""
    pack = _pack(conv)
    return _read(pack.ref, _first_brief(conv)) if pack is not None else None


def _genre(conv: Conversation, pack: Pack | None) -> tuple[str, Reading | None]:
    """The genre the brief describes (its id, or the unbuildable one it describes, or ``unknown``) — never a
    default genre."""
    reading = reading_of(conv) if pack is not None else None
    if reading is None:
        return "unknown", None
    return reading.genre or reading.described or "unknown", reading


def _cue_words(reading: Reading | None, genre: str) -> list[str]:
    return list(reading.cues.get(genre, [])) if reading is not None else []


def _source(cl: list[str], words: list[str], first: str) -> str:
    return _clause(cl, *words) or first if words else first


def _title_from_names(reading: Reading | None) -> str:
    """A title for a design no genre builds: the brief's own understood nouns only (never an unknown word)."""
    names = reading.names if reading is not None else []
    if not names:
        return "Untitled"
    if not names[0].isascii():
        return "".join(names[:2])[:32]
    return " ".join(n.title() for n in names[:2])[:32]


def _designer(conv: Conversation, role: str) -> dict[str, Any]:
    """One designer's answer, from the brief and the pack genre's own data (requirements, tables, behaviours)."""
    brief, goal = _first_brief(conv), conv.brief
    cl = clauses(brief)
    first = cl[0] if cl else brief
    pack = _pack(conv)
    genre_id, reading = _genre(conv, pack)
    genre = pack.genres.get(genre_id) if pack else None
    words = _cue_words(reading, genre_id)
    # the goal so far: the brief's tables with every follow-up's theme and knob changes (`follow_up`)
    tables = effective_tables(pack, genre_id, goal) if genre and pack else {}
    look = tables.get("theme.json", {})
    theme = look or {"title": _title_from_names(reading), "palette": {}, "subtitle": brief[:60]}
    title = str(tables.get("theme.json", {}).get("title") or theme.get("title") or _title_from_names(reading))
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
    if role in ("economy", "level", "gameplay"):  # the numbers: every table (a follow-up's knobs move them)
        out_tables = dict(tables)
    elif role in ("assets", "vfx", "ui") and "theme.json" in tables:  # the look (a follow-up's theme)
        out_tables = {"theme.json": tables["theme.json"]}
    if role == "economy":
        numbers = {k: v for t in tables.values() if isinstance(t, dict) for k, v in t.items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)}
        decisions = ["Numbers: " + ", ".join(f"{k} {v}" for k, v in list(numbers.items())[:8]) + "."]
    elif role == "ui":
        decisions = ["Scenes: Menu → Play → GameOver; the HUD shows the score/goal and the controls."]
        reqs += [_req("a menu scene", None, first, kind="scene_exists", scene="Menu"),
                 _req("a game-over scene", None, first, kind="scene_exists", scene="GameOver"),
                 _req(f"the title “{title}” is shown", None, first, kind="ui_label", text=title)]
    elif role == "audio":
        decisions = ["Music: a loop matching the brief's mood; short cues for each action."]
    elif role == "vfx":
        pal = theme.get("palette", {})
        decisions = ["Feedback: a colour flash on each action, a pulse on a completed goal."] + (
            [f"Palette accent {pal['accent']} on background {pal['background']}."] if "accent" in pal else [])
    elif role == "assets":
        pal = theme.get("palette", {})
        decisions = [f"Shapes drawn in code (no image files): palette {', '.join(f'{k} {v}' for k, v in pal.items())}.",
                     f"Title “{theme.get('title')}”, subtitle “{theme.get('subtitle')}”."]
    if pack is not None and role in pack.manifest.texts.scope_notes:  # what the pack cannot do for this role
        notes = [pack.manifest.texts.scope_notes[role]]
    summary = f"{role} design for “{title}”, a {genre_id} game: " + (decisions[0] if decisions else "")
    return {"role": role, "summary": summary, "decisions": decisions, "requirements": reqs, "tables": out_tables,
            "notes": notes}


def _split(conv: Conversation) -> dict[str, Any]:
    brief = _first_brief(conv)
    pack = _pack(conv)
    genre_id, reading = _genre(conv, pack)
    genre = pack.genres.get(genre_id) if pack else None
    title = str((genre.build_tables(brief).get("theme.json", {}).get("title") if genre else None)
                or _title_from_names(reading))
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
    genre, reading = _genre(conv, pack)
    genres = list(pack.genres) if pack else []
    ref = pack.ref if pack else "?"
    first = _first_brief(conv)  # the follow-ups' asks are the leader's reading of each (`answer_follow_up`)
    unsupported = [{"what": what, "reason": why} for what, why in out_of_scope(first)]
    readable = reading is not None and reading.readable
    if reading is not None and not reading.readable:
        unsupported.insert(0, {"what": "the brief's language", "reason": reading.reason})
    elif genre not in genres:
        what = f"{genre} gameplay" if genre != "unknown" else "the brief's genre"
        unsupported.insert(0, {"what": what, "reason": (reading.reason if reading is not None else
                                                        f"pack {ref} is not loaded")
                               + f". Not built as another genre: a person or a model can take the design over "
                                 f"(pack {ref} builds {', '.join(genres) or 'nothing'})."})
    if re.search(r"\b(sound|music|audio|sfx)\b", first, re.I):
        unsupported.append({"what": "sound and music", "reason": "the pack has no audio assets or behaviour"})
    cl = clauses(brief)
    words = [w.lower() for w in _cue_words(reading, genre)]
    genre_source = next((c for c in cl if any(w in c.lower() for w in words)), cl[0] if cl else brief)
    reqs: list[dict[str, Any]] = [{"text": f"the game is a {genre} game" if genre != "unknown" else
                                   "the brief's genre is one the pack builds", "source": genre_source,
                                   "role": "leader", "predicate": {"kind": "gate_passes", "gate": "l2.genre"},
                                   "kind": "structural", "origin": "genre"}]
    for role in ROLES:
        for r in answers.get(role, {}).get("requirements", []):
            reqs.append({"text": r["text"], "source": r["source"], "role": role, "predicate": r["predicate"],
                         "kind": "structural", "origin": "genre"})
    if reading is not None and readable:
        reqs += content_requirements(reading, first, pack.genres.get(genre) if pack else None)
    if pack is not None and genre in pack.genres:
        reqs += follow_up_requirements(pack, genre, conv.brief, len(reqs) + 1)
    for i, r in enumerate(reqs):
        r["id"] = f"R{i + 1}"
    notes = _NOTE.findall(text)
    pitch = next((a.get("summary", "") for a in answers.values() if a.get("role") == "gameplay"), "")
    if notes:
        pitch += " Team notes: " + "; ".join(f"{who}: {what}" for who, what in notes)
    title = (answers.get("ui", {}).get("summary", "").split("“")[1].split("”")[0]
             if "“" in answers.get("ui", {}).get("summary", "") else _title_from_names(reading))
    keys = ("id", "text", "source", "role", "predicate", "kind", "origin", "span", "mode", "goal_version")
    return {"spec_version": SPEC_VERSION, "title": title, "genre": genre, "brief": conv.brief, "pitch": pitch[:2000],
            "scope": {"buildable": readable and genre in genres and not out_of_scope(first),
                      "pack": ref, "pack_genres": genres, "unsupported": unsupported},
            "tables": sorted(answers.get("economy", {}).get("tables", {})),
            "requirements": [{k: r[k] for k in keys if k in r} for r in reqs]}


def _entity_text(item: ContentItem) -> str:
    name = _bare(item.name)
    return {"player": f"the player is {_article(name)}", "enemy": f"enemies: {name}", "pickup": f"pickups: {name}",
            "goods": f"goods: {name}", "customer": f"customers: {name}", "obstacle": f"obstacles: {name}",
            "setting": f"{name} backdrop"}[item.kind]


def _bare(name: str) -> str:
    return re.sub(r"^(?:a|an|the|some|my|your|its|their)\s+", "", name.strip(), flags=re.I)


def _article(name: str) -> str:
    if not name.isascii():
        return name
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def _count_predicate(item: ContentItem, genre: Genre | None) -> tuple[dict[str, Any], bool]:
    """(predicate, checks the count truly): the genre state's own number for it at the start of play, else a
    state key that the game would need (which fails honestly when it has none)."""
    term, n = item.term, item.value or 0
    state = genre.spec.state if genre is not None else {}
    for key in (term, f"{term}_left", f"{term}_total"):
        if key in state:
            return {"kind": "state_value", "key": key, "min": n, "max": n}, True
    if term in ("seconds", "minutes") and "time_left_ms" in state:
        ms = n * (60_000 if term == "minutes" else 1000)
        return {"kind": "state_value", "key": "time_left_ms", "min": max(0, ms - 5000), "max": ms}, True
    key = re.sub(r"[^A-Za-z0-9_]", "_", term if term.isascii() else "count")[:40] or "count"
    return {"kind": "state_value", "key": key if key[0].isalpha() else f"n_{key}"[:40], "min": n, "max": n}, False


def _mechanic_predicate(item: ContentItem, genre: Genre | None) -> tuple[dict[str, Any], bool]:
    """A key_action / play_event the genre's play really shows for this verb, else a play_event on the verb itself
    (a counter no pack game keeps: it fails honestly, in observe mode)."""
    if genre is not None:
        mech = genre.reader_mechanics
        for action, verbs in mech["key_action"].items():
            if item.term in verbs:
                key = next((r.predicate.get("key") for r in genre.spec.requirements
                            if r.predicate.get("kind") == "key_action" and r.predicate.get("action") == action), None)
                if key:
                    return {"kind": "key_action", "key": key, "action": action}, True
        for counter, verbs in mech["play_event"].items():
            if item.term in verbs:
                return {"kind": "play_event", "counter": counter}, True
    slug = re.sub(r"[^A-Za-z0-9_]", "_", item.term)[:40] if item.term.isascii() else ""
    return {"kind": "play_event", "counter": slug if slug[:1].isalpha() else "mechanic"}, False


def content_requirements(reading: Reading, brief: str, genre: Genre | None) -> list[dict[str, Any]]:
    """One requirement per content item of the reading (``origin: brief``, its ``kind`` and ``span``, ``source`` =
    the span's text), each with a deterministic predicate: entities ``asset_role`` (the setting as the
    ``backdrop``), counts ``state_value``, win/lose ``play_outcome``, mechanics ``key_action``/``play_event`` when
    the genre's play shows them. A requirement no built game here can show yet (a mechanic the genre has no input
    for, a count the game keeps no number of, the tone) is written ``mode: observe`` with a predicate that fails
    honestly."""
    out: list[dict[str, Any]] = []
    for item in reading.items[:MAX_CONTENT]:
        a, b = item.span
        source = brief[a:b] if brief[a:b] else item.name
        mode: str | None = None
        if item.kind in ENTITY_KINDS:
            role = "backdrop" if item.kind == "setting" else item.kind
            text = _entity_text(item)
            pred: dict[str, Any] = {"kind": "asset_role", "role": role, "asset": asset_key(role, _bare(item.name))}
        elif item.kind == "count":
            text = f"{item.name}" if item.name.isascii() else f"{item.name} ({item.term} = {item.value})"
            pred, real = _count_predicate(item, genre)
            mode = None if real else "observe"
        elif item.kind in ("win", "lose"):
            text = f"the player can {'win' if item.kind == 'win' else 'lose'}: {item.name}"
            pred = {"kind": "play_outcome", "outcome": "won" if item.kind == "win" else "lost"}
        elif item.kind == "mechanic":
            text = f"the player can {item.term} ({item.name})" if item.name.isascii() else f"玩家可以{item.name}"
            pred, real = _mechanic_predicate(item, genre)
            mode = None if real else "observe"
        else:  # tone: no gate judges it (L3 only looks): stated, observed, never verified by a guess
            text = f"the tone is {item.name}"
            pred = {"kind": "gate_passes", "gate": "l2.tone"}
            mode = "observe"
        req = {"text": text[:300], "source": source[:500], "role": _CONTENT_ROLE[item.kind], "predicate": pred,
               "kind": item.kind, "origin": "brief", "span": [a, b]}
        if mode:
            req["mode"] = mode
        out.append(req)
    return out


def decide_design(conv: Conversation) -> Action:
    role = _role(conv)
    if role == "leader":
        if "<follow-up" in conv.last_user and "<designer-answer" not in conv.last_user:
            return Action("final", text=json.dumps(answer_follow_up(_pack(conv), conv.last_user), ensure_ascii=False))
        if "<designer-answer" in conv.last_user:
            return Action("final", text=json.dumps(_converge(conv), ensure_ascii=False))
        return Action("final", text=json.dumps(_split(conv), ensure_ascii=False))
    area = role.split(".", 1)[1] if "." in role else role
    if conv.last("Glob") is None and conv.project:
        return Action("tools", [("Glob", {"pattern": "docs/design/*.md", "path": conv.project})])
    return Action("final", text=json.dumps(_designer(conv, area), ensure_ascii=False))
