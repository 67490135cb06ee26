"""The genre a brief asks for, from its words alone (deterministic: the genre gate's independent witness).

A model may declare any genre in its design; the genre gate (`tier2.validators.l2.genre`) cross-checks that
declaration against this classifier and against what the built game observably does. The vocabulary is the pack's
(`tier2.packs.Pack.genre_vocab`: its genres' brief words and the genres it knows it cannot build) — core knows no
genre. Keyword scores, ties broken by the vocabulary's order. Also the plain-words scope check: what no pack here
can build ("multiplayer", "3D").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["GenreGuess", "Vocab", "classify_brief", "out_of_scope", "clauses"]

#: asks no pack or offline model here can meet, with the plain reason the spec and the delivery state
_OUT_OF_SCOPE: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"\bmulti-?player\b|\bonline\b|\bpvp\b|\bco-?op\b|\bnetwork", re.I), "multiplayer",
     "tier2 games are single-player pages with no network (every request but the game's own files is blocked)"),
    (re.compile(r"\b3d\b|\bthree-dimensional\b|\bfirst-person\b|\bfps\b", re.I), "3D",
     "the capability packs here build 2D games only"),
    (re.compile(r"\bvr\b|\bvirtual reality\b|\bar\b|\baugmented reality\b", re.I), "VR/AR",
     "no VR/AR support in the capability packs"),
    (re.compile(r"\bvoice\b|\bmicrophone\b|\bcamera\b", re.I), "device input",
     "games run headless in validation; microphone/camera input is not supported"),
)

#: genre id -> the brief words that point at it, in tie-break order
Vocab = Mapping[str, Sequence[str]]

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


def classify_brief(brief: str, vocab: Vocab) -> GenreGuess:
    words = _words(brief)
    low = brief.lower()
    matched: dict[str, list[str]] = {}
    for genre, words_of in vocab.items():
        single = {w for w in words_of if " " not in w}
        hits = [w for w in words if w in single or w.rstrip("s") in single]
        hits += [w for w in words_of if " " in w and w in low] * 2  # a two-word phrase counts double
        if hits:
            matched[genre] = hits
    scores = {g: len(h) for g, h in matched.items()}
    if not scores:
        return GenreGuess(None)
    order = list(vocab)
    best = max(scores, key=lambda g: (scores[g], -order.index(g)))
    return GenreGuess(best, scores, matched)


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
