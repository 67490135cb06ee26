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

from tier2.design import ROLES, classify_brief, clauses, out_of_scope, pack_genres
from tier2.design.spec import SPEC_VERSION
from tier2.models.offline.history import Conversation
from tier2.models.offline.policy import Action
from tier2.models.offline.theme import derive_game

__all__ = ["DESIGN_MARKER", "decide_design", "is_design"]

#: the line every design-studio system prompt carries (``tier2/prompts/design/*.md``)
DESIGN_MARKER = re.compile(r"tier2 design studio — role: ([a-z_.]+)")
_BEHAVIOURS = re.compile(r"pack behaviours: ([a-z_, ]+)")
_PACK = re.compile(r"pack: (\S+)")
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


def _genre(conv: Conversation) -> str:
    return classify_brief(conv.brief).genre or "shop"


def _designer(conv: Conversation, role: str) -> dict[str, Any]:
    brief, goal = _first_brief(conv), conv.brief
    cl = clauses(brief)
    first = cl[0] if cl else brief
    genre = _genre(conv)
    shop = genre == "shop"
    tables = derive_game(brief) if shop else {}
    theme = derive_game(goal)["theme.json"]  # the look follows every goal version (a follow-up re-themes)
    title = tables["theme.json"]["title"] if shop else theme["title"]
    reqs: list[dict[str, Any]] = []
    decisions: list[str] = []
    notes: list[str] = []
    out_tables: dict[str, Any] = {}
    if role == "gameplay":
        if shop:
            decisions = ["Core loop: buy raw goods (digits), craft products (Q, W, E...), deliver the current order "
                         "(Space/Enter) before the day ends.", "Escape abandons to the menu."]
            reqs = [_req("Space starts the game from the menu", None, first, kind="key_action", key="Space",
                         action="start"),
                    _req("pressing 1 buys the first raw good", _clause(cl, "buy", "brew", "bake", "craft", "sell",
                                                                       "make", "cook"), first,
                         kind="key_action", key="Digit1", action="buy"),
                    _req("products get crafted in play", _clause(cl, "brew", "bake", "craft", "make", "cook",
                                                                 "assemble", "forge"), first,
                         kind="play_event", counter="crafted")]
        elif genre == "shooter":
            decisions = ["Core loop: steer the ship with the arrow keys, fire with Space, avoid hazards.",
                         "Projectiles spawn on the fire input; hits destroy enemies."]
            reqs = [_req("Space fires a projectile", _clause(cl, "shoot", "fire", "blast"), first,
                         kind="key_action", key="Space", action="fire"),
                    _req("enemies are destroyed by shots", _clause(cl, "shoot", "alien", "enem"), first,
                         kind="play_event", counter="kills")]
            if (c := _clause(cl, "collect", "power")) is not None:
                reqs.append(_req("power-ups can be collected", c, first, kind="play_event", counter="collected"))
            if (c := _clause(cl, "dodge", "avoid")) is not None:
                reqs.append(_req("hazards hit the player unless dodged", c, first, kind="play_event",
                                 counter="hits_taken"))
        elif genre == "platformer":
            decisions = ["Core loop: run with the arrow keys, jump with Space or Up; gravity pulls the player down."]
            reqs = [_req("Space makes the player jump", _clause(cl, "jump"), first, kind="key_action", key="Space",
                         action="jump"),
                    _req("the player reaches the exit", _clause(cl, "exit", "goal", "reach", "flag"), first,
                         kind="play_outcome", outcome="won")]
        else:
            decisions = [f"Core loop of a {genre} game as the brief describes it."]
            reqs = [_req("Space starts the game from the menu", None, first, kind="key_action", key="Space",
                         action="start")]
    elif role == "level":
        if shop:
            decisions = ["One day per game; orders come in a fixed, cycling queue; the goal money wins."]
            reqs = [_req("at least 3 customer orders", _clause(cl, "order", "customer", "sell"), first,
                         kind="min_count", table="orders.json", field="orders", n=3),
                    _req("a planned play reaches the money goal", _clause(cl, "goal", "broke", "rich", "profit",
                                                                          "sell", "order"), first,
                         kind="play_outcome", outcome="won")]
        else:
            decisions = [f"Waves/levels of a {genre} game, rising in difficulty."]
            reqs = [_req("a scripted play completes the level", None, first, kind="play_outcome", outcome="won")]
    elif role == "economy":
        if shop:
            out_tables = tables
            econ = tables["economy.json"]
            decisions = [f"Start money {econ['start_money']}, goal {econ['goal_money']}, day "
                         f"{econ['day_length_ms'] // 1000} s; sell prices 1.7-2.5x the inputs' cost."]
            reqs = [_req("a profitable strategy and a losing path both exist", _clause(
                        cl, "broke", "money", "profit", "rich", "sell", "tycoon"), first,
                         kind="gate_passes", gate="l1.economy"),
                    _req(f"at least {min(2, len(tables['recipes.json']['recipes']))} recipes",
                         _clause(cl, "brew", "bake", "craft", "recipe", "potion", "cake", "bread"), first,
                         kind="min_count", table="recipes.json", field="recipes",
                         n=min(2, len(tables["recipes.json"]["recipes"])))]
        else:
            lives = _lives(brief)
            decisions = [f"Numbers of a {genre} game" + (f": {lives} lives" if lives else "") + "."]
            notes = ["The pack's data tables are the shop tables; no tables for this genre exist yet."]
            if lives:
                reqs = [_req(f"the player starts with {lives} lives", _clause(cl, "live", "heart"), first,
                             kind="state_value", key="lives", min=lives, max=lives)]
    elif role == "ui":
        decisions = ["Scenes: Menu → Play → GameOver; the HUD shows money/score, the current goal and the controls."]
        reqs = [_req("a menu scene", None, first, kind="scene_exists", scene="Menu"),
                _req("a game-over scene", None, first, kind="scene_exists", scene="GameOver"),
                _req(f"the title “{title}” is shown", None, first, kind="ui_label", text=title)]
        if genre == "shooter":
            reqs.append(_req("the HUD shows the lives left", _clause(cl, "live"), first, kind="ui_label",
                             text="Lives"))
    elif role == "audio":
        mood = "calm, cosy loop" if shop else "driving, energetic loop"
        decisions = [f"Music: a {mood}; short cues for each action."]
        notes = ["The Phaser pack ships no audio assets or audio behaviour: the game is silent (stated in scope "
                 "when the brief asks for sound)."]
    elif role == "vfx":
        decisions = ["Feedback: a colour flash on each action, a pulse on a completed goal.",
                     f"Palette accent {theme['palette']['accent']} on background {theme['palette']['background']}."]
    elif role == "assets":
        pal = theme["palette"]
        decisions = [f"Shapes drawn in code (no image files): palette {', '.join(f'{k} {v}' for k, v in pal.items())}.",
                     f"Title “{theme['title']}”, subtitle “{theme['subtitle']}”."]
        if genre == "shooter":
            decisions.append("Sprites: the player ship, asteroids, alien ships, power-ups, projectiles.")
    summary = f"{role} design for “{title}”, a {genre} game: " + (decisions[0] if decisions else "")
    return {"role": role, "summary": summary, "decisions": decisions, "requirements": reqs, "tables": out_tables,
            "notes": notes}


def _split(conv: Conversation) -> dict[str, Any]:
    brief = _first_brief(conv)
    guess = classify_brief(conv.brief)
    genre = guess.genre or "shop"
    title = derive_game(brief)["theme.json"]["title"] if genre == "shop" else derive_game(conv.brief)["theme.json"][
        "title"]
    tasks = {role: f"Design the {role} of this {genre} game from the brief; answer your role's JSON." for role in ROLES}
    return {"title": title, "genre": genre, "pitch": f"{title}: a {genre} game — {brief}", "tasks": tasks}


def _converge(conv: Conversation) -> dict[str, Any]:
    brief = _first_brief(conv)
    text = conv.last_user
    answers: dict[str, dict[str, Any]] = {}
    for role, body in _ANSWER.findall(text):
        try:
            answers[role] = json.loads(body)
        except json.JSONDecodeError:
            continue
    guess = classify_brief(conv.brief)
    genre = guess.genre or "shop"
    found = _BEHAVIOURS.search(conv.system)
    behaviours = [b.strip() for b in (found.group(1) if found else "").split(",") if b.strip()]
    genres = pack_genres(behaviours)
    pack_m = _PACK.search(conv.system)
    pack = pack_m.group(1) if pack_m else "?"
    unsupported = [{"what": what, "reason": why} for what, why in out_of_scope(conv.brief)]
    if genre not in genres:
        unsupported.insert(0, {"what": f"{genre} gameplay", "reason": (
            f"pack {pack} can build {', '.join(genres) or 'no'} games (its behaviours: {', '.join(behaviours)}); "
            f"the offline writer has only the shop template. The brief asks for a {genre}: the build will be "
            f"judged as a {genre} by the genre gate and not delivered as something else.")})
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
                      "pack": pack, "pack_genres": genres, "unsupported": unsupported},
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
