"""The puzzle genre's offline builder: a one-line brief into theme.json, board.json and goals.json.

No network, no model: the tile set comes from keywords in ``lexicon.yaml``, every other choice from a
``random.Random`` seeded with sha256 of the normalised brief (same brief → byte-identical tables). Difficulty
("easy" / "normal" / "hard" from the brief's words) sets the board size, the number of tile kinds and the moves;
the target is then calibrated by playing the dealt board with the genre probe on the Python port of the rules
(``probe.reference_play``): a fraction of what that play scores with every move, and never more than it scores
within the probe's action budget — so the validator's win play reaches it and checks.py passes.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tier2.packs.offline import (
    brief_words,
    content_nouns,
    difficulty,
    hash_hue,
    hsl,
    normalise_brief,
    palette_for,
    seeded,
    slug,
    subtitle_from,
)
from tier2.validators.builder_gates import genre_at, hold

from . import probe, rules

__all__ = ["DIFFICULTY", "MAX_TARGET_STEPS", "MIRROR", "TABLE_NAMES", "WIN_ACTION_BUDGET", "build_tables",
           "hold_tables", "load_lexicon", "pick_set"]

TABLE_NAMES = ("theme.json", "board.json", "goals.json")
SHAPES = ("circle", "diamond", "square", "triangle", "hexagon", "star", "ring", "cross")
#: per difficulty: board sizes, tile kinds, moves range, the target as a fraction of the reference play's score
DIFFICULTY: dict[str, dict[str, Any]] = {
    "easy": {"sizes": (7,), "kinds": (5,), "moves": (24, 30), "factor": 0.5},
    "normal": {"sizes": (7, 8), "kinds": (5, 6), "moves": (18, 24), "factor": 0.7},
    "hard": {"sizes": (8, 9), "kinds": (6, 7), "moves": (14, 18), "factor": 0.85},
}
POINTS_PER_TILE = (5, 10, 15, 20, 25)
CASCADE_BONUS_TILES = (2, 6)  # the cascade bonus, in tiles' worth of points
WIN_ACTION_BUDGET = 300  # the target is reached within this many probe actions (genre.yaml allows 400)
_SKIP = frozenset({"puzzle", "puzzles", "match", "matching", "swap", "swapping", "grid", "three", "tile", "tiles",
                   "easy", "hard", "relaxing", "relaxed", "casual", "challenging", "difficult", "normal", "level",
                   "levels", "score", "board", "please", "want", "using", "about"})


@cache
def load_lexicon() -> dict[str, Any]:
    """The tile sets (parsed once per process)."""
    return dict(yaml.safe_load((Path(__file__).parent / "lexicon.yaml").read_text(encoding="utf-8")))


def pick_set(brief: str) -> str:
    """The tile set with most keywords in the brief (the first listed wins a tie); "blocks" when none matches."""
    words = brief_words(brief)
    sets = load_lexicon()["sets"]
    score = {name: len(words & set(s["keywords"])) for name, s in sets.items()}
    best = max(score, key=score.__getitem__)
    return best if score[best] else "blocks"


def _kinds(tiles: list[list[Any]], n: int, rng: Any) -> list[dict[str, str]]:
    """``n`` tiles of the set, each with its own shape and a colour near its hue (distinct, bright on dark)."""
    chosen = tiles[:n]
    shapes = list(SHAPES)
    rng.shuffle(shapes)
    out: list[dict[str, str]] = []
    for (name, hue), shape in zip(chosen, shapes, strict=False):
        colour = hsl(hue + rng.randint(-6, 6), rng.uniform(0.68, 0.8), rng.uniform(0.56, 0.62))
        out.append({"id": slug(str(name)) or f"tile_{len(out)}", "name": str(name), "color": colour, "shape": shape})
    return out


def _theme(brief: str, tile_set: dict[str, Any], rng: Any) -> dict[str, Any]:
    noun = str(tile_set["noun"])
    nouns = content_nouns(brief, _SKIP)
    head = (rng.choice(nouns) if nouns else noun).title()
    suffix = rng.choice([s for s in tile_set["suffixes"] if s.lower()[:4] != head.lower()[:4]])
    title = f"{head} {suffix}"[:32]
    return {
        "title": title,
        "subtitle": subtitle_from(brief, f"Swap {noun}, line up three of a kind, reach the target"),
        "palette": palette_for(hash_hue(normalise_brief(brief)), rng),
        "texts": {
            "win": rng.choice(["Target reached: {score} points with {moves} moves to spare!",
                               "{score} points! The board is yours with {moves} moves left."]),
            "lose": rng.choice(["Out of moves at {score} of {target} points.",
                                "So close: {score} of {target} points when the moves ran out."]),
            "no_match": f"No line: the {noun} slide back (a move is spent)",
            "cascade": str(tile_set["cascade"]),
        },
    }


def _target(tables: dict[str, Any], factor: float) -> int:
    """A fraction of what the reference play scores with every move, capped by its score within the action
    budget, rounded down to whole tiles' worth of points (at least one line)."""
    ppt = int(tables["goals.json"]["points_per_tile"])
    play = probe.reference_play(tables, target=10**9)
    scores = play["score_at_action"] or [0]
    cap = int(scores[min(WIN_ACTION_BUDGET, len(scores)) - 1])
    target = min(int(play["score"] * factor), cap)
    return max(3 * ppt, target // ppt * ppt)


def build_tables(brief: str) -> dict[str, Any]:
    """The genre kit's builder entry (see the pack's docs/genre-kit.md): {table file: table}."""
    rng = seeded(brief, "puzzle")
    set_name = pick_set(brief)
    tile_set = load_lexicon()["sets"][set_name]
    level = DIFFICULTY[difficulty(brief)]
    size = int(rng.choice(level["sizes"]))
    kinds = _kinds(list(tile_set["tiles"]), int(rng.choice(level["kinds"])), rng)
    ppt = int(rng.choice(POINTS_PER_TILE))
    goals = {"target_score": 1, "moves": rng.randint(*level["moves"]), "points_per_tile": ppt,
             "cascade_bonus": ppt * rng.randint(*CASCADE_BONUS_TILES)}
    board = {"size": size, "seed": rng.getrandbits(32), "kinds": kinds}
    tables: dict[str, Any] = {"theme.json": _theme(brief, tile_set, rng), "board.json": board, "goals.json": goals}
    goals["target_score"] = _target(tables, float(level["factor"]))
    return hold(genre_at(Path(__file__).parent), _candidates(tables), MIRROR)


#: the match-3 rules in Python, on which `hold` plays the latch split (docs/genre-kit.md, "builder.py")
MIRROR = rules.Play
#: how many lower targets are tried when the fitted one fails a gate (each 10 % below the last)
MAX_TARGET_STEPS = 6


def _candidates(tables: dict[str, Any]) -> Any:
    """The fitted tables, then the same board with a target 10 %, 20 % … lower: a bounded, deterministic series for
    `hold` (the data gates and the latch split played on `rules.Play` by the genre probe)."""
    yield tables
    goals = tables["goals.json"]
    for k in range(1, MAX_TARGET_STEPS + 1):
        target = int(goals["target_score"] * (1 - 0.1 * k))
        if target >= 1:
            yield {**tables, "goals.json": {**goals, "target_score": target}}


def hold_tables(tables: dict[str, Any]) -> dict[str, Any]:
    """``tables`` as they are (a follow-up's changed numbers: no other candidate is tried, so nothing the change asked
    for is undone) if they pass the gates `build_tables` holds; `GatesNotHeld` otherwise (`tier2.packs.knobs`)."""
    return dict(hold(genre_at(Path(__file__).parent), [tables], MIRROR))
