"""The genre a brief asks for, from its words alone (deterministic: the genre gate's independent witness).

A model may declare any genre in its design; the genre gate (`tier2.validators.l2.genre`) cross-checks that
declaration against this classifier and against what the built game observably does. Keyword scores, ties broken
by the order of `GENRES`. Also the plain-words scope check: what no pack here can build ("multiplayer", "3D").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["GENRES", "GenreGuess", "classify_brief", "out_of_scope", "pack_genres", "clauses"]

#: genre -> brief words that point at it (lower case; a word matches a whole word or a prefix+"s"/"ing"/"ed")
GENRES: dict[str, tuple[str, ...]] = {
    "shooter": ("shooter", "shoot", "shooting", "shmup", "bullet", "bullets", "laser", "lasers", "blaster",
                "asteroid", "asteroids", "alien", "aliens", "invaders", "gun", "guns", "turret", "spaceship"),
    "platformer": ("platformer", "platform", "platforms", "jump", "jumping", "jumps", "ledge", "ledges", "spikes",
                   "double-jump", "wall-jump", "mario"),
    "puzzle": ("puzzle", "puzzles", "match-3", "match-three", "match", "tiles", "sokoban", "swap", "grid", "riddle"),
    "racing": ("race", "racing", "racer", "car", "cars", "kart", "lap", "laps", "track", "drift"),
    "tower_defense": ("tower", "towers", "defense", "defence", "waves", "creeps"),
    "rpg": ("rpg", "dungeon", "dungeons", "quest", "quests", "sword", "hero", "monsters", "loot"),
    "shop": ("shop", "shops", "tycoon", "store", "bakery", "bake", "brew", "brewing", "potion", "potions",
             "craft", "crafting", "sell", "selling", "customer", "customers", "order", "orders", "restaurant",
             "cafe", "café", "merchant", "market", "inventory", "recipes", "recipe", "manage", "business"),
}

#: behaviours a pack must list for it to build a genre (pack.yaml ``behaviours``)
_GENRE_BEHAVIOURS: dict[str, frozenset[str]] = {
    "shop": frozenset({"buy", "craft", "deliver"}),
    "shooter": frozenset({"fire", "spawn_enemies"}),
    "platformer": frozenset({"jump", "gravity"}),
    "puzzle": frozenset({"swap", "match"}),
    "racing": frozenset({"steer", "laps"}),
    "tower_defense": frozenset({"place_tower", "waves"}),
    "rpg": frozenset({"move", "fight"}),
}

#: asks no pack or offline model here can meet, with the plain reason the spec and the delivery state
_OUT_OF_SCOPE: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"\bmulti-?player\b|\bonline\b|\bpvp\b|\bco-?op\b|\bnetwork", re.I), "multiplayer",
     "tier2 games are single-player pages with no network (every non-loopback request is blocked)"),
    (re.compile(r"\b3d\b|\bthree-dimensional\b|\bfirst-person\b|\bfps\b", re.I), "3D",
     "the Phaser pack builds 2D games only"),
    (re.compile(r"\bvr\b|\bvirtual reality\b|\bar\b|\baugmented reality\b", re.I), "VR/AR",
     "no VR/AR support in the Phaser pack"),
    (re.compile(r"\bvoice\b|\bmicrophone\b|\bcamera\b", re.I), "device input",
     "games run headless in validation; microphone/camera input is not supported"),
)

_WORD = re.compile(r"[a-z0-9][a-z0-9\-']*")


@dataclass(frozen=True)
class GenreGuess:
    genre: str | None  # None: the brief names no genre
    scores: dict[str, int] = field(default_factory=dict)
    words: dict[str, list[str]] = field(default_factory=dict)  # genre -> the brief words that matched

    def explain(self) -> str:
        if self.genre is None:
            return "the brief names no genre"
        return f"{self.genre} (brief words: {', '.join(self.words.get(self.genre, []))})"


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def classify_brief(brief: str) -> GenreGuess:
    words = _words(brief)
    matched: dict[str, list[str]] = {}
    for genre, vocab in GENRES.items():
        hits = [w for w in words if w in vocab or w.rstrip("s") in vocab]
        if "tower defense" in brief.lower() or "tower defence" in brief.lower():
            hits += ["tower-defense"] * 3 if genre == "tower_defense" else []
        if hits:
            matched[genre] = hits
    scores = {g: len(h) for g, h in matched.items()}
    if not scores:
        return GenreGuess(None)
    order = list(GENRES)
    best = max(scores, key=lambda g: (scores[g], -order.index(g)))
    return GenreGuess(best, scores, matched)


def pack_genres(behaviours: Iterable[str]) -> list[str]:
    have = set(behaviours)
    return [g for g, need in _GENRE_BEHAVIOURS.items() if need <= have]


def out_of_scope(brief: str) -> list[tuple[str, str]]:
    """(what, why) for each ask in the brief that no pack here can build."""
    return [(what, why) for pattern, what, why in _OUT_OF_SCOPE if pattern.search(brief)]


def clauses(brief: str) -> list[str]:
    """The brief's sentences and list items: the sources requirements quote."""
    parts = re.split(r"[.;:!?\n]+|,\s+", brief)
    out = []
    for p in parts:
        p = p.strip(" -–—\t\"'")
        if len(p) >= 3 and p.lower() not in out:
            out.append(p)
    return out
