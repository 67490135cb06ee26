"""Seeded game briefs in ordinary words, per genre, for property tests and evals of the offline builders.

`generated_briefs(genre, n, seed)` gives ``n`` different briefs for a pack genre from the templates and word lists
of its ``briefs.yaml`` (the pack owns what its genres' briefs talk about: who the player is, what they make,
shoot, collect or dodge) and the shared slots here: counts in words or digits ("three lives", "5 waves", "reach
10k coins"), difficulty and tone ("hard", "relaxing", "for kids"), customers, currencies, a little unicode or
noise. Same ``(genre, n, seed)``, same list; nothing here is random at import.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tier2.packs import Genre

__all__ = ["BRIEFS_FILE", "generated_briefs", "vocabulary"]

#: a genre's brief vocabulary, in its folder: ``templates`` (with ``{slot}`` names) and one word list per slot
BRIEFS_FILE = "briefs.yaml"

_COUNT_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
_TONES = ["", "", "", "hard", "relaxing", "cozy", "brutal", "easy", "challenging", "frantic", "gentle", "for kids",
          "spooky", "cute", "fast and intense", "calm", "difficult", "casual", "tough", "short"]
_NOISE = ["", "", "", "", "!", " :)", " — please", " 🌟", " (v2)", ", with a twist", "...", " ☕", " ñ"]
_PEOPLE = ["villagers", "adventurers", "knights", "pirates", "tourists", "students", "wizards", "farmers", "miners",
           "sailors", "robots", "aliens", "elves", "dwarves", "monks", "kids", "neighbours", "travellers", "nobles",
           "goblins", "astronauts", "detectives", "chefs", "grandmas", "ninjas"]
_CURRENCIES = ["gold", "coins", "silver", "gems", "credits", "dollars", "yen", "shells", "crowns", "stars",
               "tokens", "acorns", "bucks", "ducats", "pearls"]

def _count(rng: random.Random, lo: int, hi: int) -> str:
    n = rng.randint(lo, hi)
    return _COUNT_WORDS[n - 1] if rng.random() < 0.6 and n <= 10 else str(n)


@cache
def _load(path: Path) -> dict[str, list[str]]:
    data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not data.get("templates") or \
            not all(isinstance(v, list) and v and all(isinstance(w, str) for w in v) for v in data.values()):
        raise ValueError(f"{path}: want templates and word lists (non-empty lists of strings)")
    return {str(k): list(v) for k, v in data.items()}


def vocabulary(genre: Genre) -> dict[str, list[str]]:
    """The genre's ``briefs.yaml`` (parsed once per process)."""
    return _load(genre.root / BRIEFS_FILE)


def _fill(template: str, vocab: dict[str, list[str]], rng: random.Random) -> str:
    def pick(key: str) -> str:
        return rng.choice(vocab[key])

    values = {key: pick(key) for key in vocab if key != "templates"}
    for key in list(vocab):
        if key != "templates":
            values[f"{key}2"] = pick(key)
    values |= {
        "tone": rng.choice(_TONES), "people": rng.choice(_PEOPLE), "currency": rng.choice(_CURRENCIES),
        "num": str(rng.choice([50, 100, 250, 500, 1000, 2500, 5000, 10_000, 25_000, 100_000, 1_000_000])),
        "num_word": _count(rng, 2, 9), "lives": f"{_count(rng, 1, 9)} {rng.choice(['lives', 'hearts'])}",
        "waves": f"{_count(rng, 2, 9)} waves", "levels": f"{_count(rng, 1, 6)} levels",
        "moves": f"{_count(rng, 5, 40)} moves", "moves_n": str(rng.randint(8, 40)),
        "target": rng.choice(["a million", "10k coins", "500 points", "a billion", "1,000,000", "2500 gems",
                              "the moon", "a high score"]),
        "gem": rng.choice(vocab.get("gems", ["gem"])).rstrip("s"),
    }
    text = template
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return " ".join(text.replace(" ,", ",").split())


def generated_briefs(genre: Genre, n: int = 300, seed: int = 23) -> list[str]:
    """``n`` distinct briefs for ``genre`` from its `vocabulary`, seeded: the same arguments give the same list."""
    vocab = vocabulary(genre)
    rng = random.Random(f"{genre.id}:{seed}")
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        text = _fill(rng.choice(vocab["templates"]), vocab, rng) + rng.choice(_NOISE)
        if rng.random() < 0.15:
            text = text.upper() if rng.random() < 0.3 else text.capitalize()
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out
