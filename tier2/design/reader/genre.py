"""The genre a brief describes: the pack's cue words found in the brief, scored, and the decision (or why none)."""

from __future__ import annotations

import re
from collections.abc import Collection

from tier2.design.reader.common import MIN_SCORE
from tier2.design.reader.types import GenreCues
from tier2.lexis import Token, lemma


def _score(tokens: list[Token], text: str, lang: str, cues: GenreCues) -> tuple[dict[str, float], dict[str, list[str]]]:
    lemmas = [t.lemma for t in tokens]
    joined = " " + " ".join(lemmas) + " "
    low = text.lower()
    scores: dict[str, float] = {}
    words: dict[str, list[str]] = {}
    for genre, by_lang in cues.items():
        total, hit = 0.0, []
        counted: dict[str, float] = {}  # one weight per lemma ("potion" and "potions" are one cue)
        for cue, weight in (by_lang.get(lang) or {}).items():
            if weight <= 0:
                continue
            if lang == "zh":
                found = cue in text
            elif "*" in cue:  # "cast * at": the words with up to three words between them
                left, _, right = cue.lower().partition("*")
                lw = " ".join(re.escape(lemma(p)) for p in left.split())
                rw = " ".join(re.escape(lemma(p)) for p in right.split())
                found = re.search(rf" {lw}(?: \S+){{0,3}}? {rw} ", joined) is not None
            else:
                parts = [lemma(p) for p in re.findall(r"[\w'’-]+", cue.lower())]
                found = (f" {' '.join(parts)} " in joined) if len(parts) > 1 else (
                    bool(parts) and (parts[0] in lemmas or (("-" in parts[0]) and parts[0] in low)))
            key = cue if lang == "zh" else " ".join(lemma(p) for p in cue.lower().split())
            if found and weight > counted.get(key, 0):
                total += weight - counted.get(key, 0)
                if key not in counted:
                    hit.append(cue)
                counted[key] = weight
        if total:
            scores[genre] = total
            words[genre] = hit
    return scores, words


def _decide(scores: dict[str, float], words: dict[str, list[str]], buildable: Collection[str]) -> tuple[str | None,
                                                                                                         str]:
    if not scores:
        return None, "the brief describes nothing the reader recognises as a genre of the pack"
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    best, top = ranked[0]
    if top < MIN_SCORE:
        return None, (f"the brief says too little to tell its genre (best: {best}, {top:g} from "
                      f"{', '.join(words[best])})")
    if len(ranked) > 1 and ranked[1][1] == top:
        return None, (f"the brief reads equally as a {best} and a {ranked[1][0]} "
                      f"({', '.join(words[best])} / {', '.join(words[ranked[1][0]])})")
    if best not in buildable:
        return None, (f"the brief describes a {best} game ({', '.join(words[best])}); no genre of the pack builds "
                      f"one (it builds: {', '.join(sorted(buildable))})")
    return best, f"{best}: the brief describes {', '.join(words[best][:6])}"
