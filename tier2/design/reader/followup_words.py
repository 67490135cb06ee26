"""The follow-up reader's words: where a clause says a phrase, a comparative, a number; the follow-up's language.

Used by `tier2.design.reader.followup`; the words are `tier2.lexis` ``change.yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from tier2.design.genre import out_of_scope
from tier2.design.reader.chinese import _zh_number
from tier2.design.reader.common import _en_sets
from tier2.design.reader.types import GenreLike
from tier2.lexis import Token, change_words, detect_language, en_tokens, en_words, lemma, number_value, understood_en
from tier2.lexis import zh_words as _zh_words

__all__ = ["Dir", "Hit", "Num", "directions", "find", "language", "numbers", "word_list", "words"]


@dataclass(frozen=True)
class Hit:
    start: int  # offsets into the follow-up
    end: int
    word: str


@dataclass(frozen=True)
class Dir:
    hit: Hit
    direction: str  # up | down
    sense: str  # amount | duration | speed


@dataclass(frozen=True)
class Num:
    hit: Hit
    value: float
    ordinal: bool
    unit_ms: int | None


def language(src: str, genre: GenreLike) -> str:
    """en | zh | unreadable. A follow-up is often too short for `tier2.lexis.detect_language` ("faster enemies"):
    Latin text it cannot place is English when most of its words are words the follow-up reader or the word lists
    know."""
    lang, _name = detect_language(src)
    if lang != "unreadable":
        return lang
    toks = en_tokens(src)
    if not toks or not src.isascii():
        return lang
    if out_of_scope(src):
        return "en"
    known = {w.lower() for key in ("filler", "ask", "off", "harder", "easier", "theme_words", "theme_markers",
                                   "genre_change", "by_one") for p in word_list("en", key) for w in p.split()}
    known |= {w.lower() for d in ("up", "down") for ws in words("en")[d].values()  # type: ignore[attr-defined]
              for p in ws for w in str(p).split()}
    known |= {w.lower() for k in genre.adjust for p in k.nouns for w in p.split()}
    known |= {str(k) for k in words("en")["units"]} | {str(k) for k in words("en")["ordinals"]}  # type: ignore[attr-defined]
    fw = {str(w) for w in en_words()["function_words"]}
    hits = sum(1 for t in toks if t.text.lower() in known or t.lemma in known or t.text.lower() in fw
               or understood_en(t.lemma) or t.lemma in _en_sets()["mechanic"] or number_value(t.text) is not None)
    return "en" if hits * 2 >= len(toks) else lang


@cache
def words(lang: str) -> dict[str, object]:
    return dict(change_words()[lang])


def word_list(lang: str, key: str) -> list[str]:
    return [str(w) for w in words(lang)[key]]  # type: ignore[attr-defined]


@cache
def _phrase(phrase: str) -> tuple[tuple[str, bool], ...]:
    """A phrase's lower-case words, each with whether it is its own lemma (then a token's lemma may match it: "time"
    matches "times"; "setting" never matches "set")."""
    return tuple((w, lemma(w) == w) for w in phrase.lower().split())


def find(src: str, a: int, b: int, lang: str, toks: Sequence[Token], phrases: Iterable[str]) -> list[Hit]:
    """Where ``phrases`` occur in the clause [a, b): English by whole words (each word as written or as its lemma),
    Chinese as substrings; the longest first, never overlapping."""
    found: list[Hit] = []
    clause = src[a:b]
    texts = [t.text.lower() for t in toks]
    lemmas = [t.lemma for t in toks]
    for phrase in sorted(set(phrases), key=len, reverse=True):
        if lang == "zh":
            if phrase in clause:
                found += [Hit(a + m.start(), a + m.end(), phrase) for m in re.finditer(re.escape(phrase), clause)]
            continue
        words = _phrase(phrase)
        n = len(words)
        for i in range(len(toks) - n + 1):
            if all(texts[i + k] == w or plain and lemmas[i + k] == w for k, (w, plain) in enumerate(words)):
                found.append(Hit(toks[i].start, toks[i + n - 1].end, phrase))
    kept: list[Hit] = []
    for h in sorted(found, key=lambda h: (-(h.end - h.start), h.start)):
        if not any(h.start < k.end and k.start < h.end for k in kept):
            kept.append(h)
    return sorted(kept, key=lambda h: h.start)


def directions(src: str, a: int, b: int, lang: str, toks: Sequence[Token]) -> list[Dir]:
    out = []
    for direction in ("up", "down"):
        for sense, said in words(lang)[direction].items():  # type: ignore[attr-defined]
            out += [Dir(h, direction, str(sense)) for h in find(src, a, b, lang, toks, map(str, said))]
    kept: list[Dir] = []
    for d in sorted(out, key=lambda d: (-(d.hit.end - d.hit.start), d.hit.start)):
        if not any(d.hit.start < k.hit.end and k.hit.start < d.hit.end for k in kept):
            kept.append(d)
    return sorted(kept, key=lambda d: d.hit.start)


def numbers(src: str, a: int, b: int, lang: str, toks: Sequence[Token]) -> list[Num]:
    out: list[Num] = []
    if lang == "zh":
        chars = "".join(map(str, _zh_words()["number_chars"]))
        units = {str(k): int(v) for k, v in words("zh")["units"].items()}  # type: ignore[attr-defined]
        unit_pat = "|".join(sorted(map(re.escape, units), key=len, reverse=True))
        skip = tuple(word_list("zh", "not_counts"))
        for m in re.finditer(rf"(第)?(\d+|[{chars}]+)\s*({unit_pat})?", src[a:b]):
            raw, after = m.group(2), src[a + m.end():a + m.end() + 1]
            if after.startswith(skip) and not m.group(3):
                continue
            value = int(raw) if raw.isdigit() else _zh_number(raw, _zh_words()["number_chars"])
            if value is not None:
                out.append(Num(Hit(a + m.start(), a + m.end(), m.group(0)), float(value), bool(m.group(1)),
                                units.get(m.group(3)) if m.group(3) else None))
        return out
    ordinals = {str(k): int(v) for k, v in words("en")["ordinals"].items()}  # type: ignore[attr-defined]
    units = {str(k): int(v) for k, v in words("en")["units"].items()}  # type: ignore[attr-defined]
    for i, t in enumerate(toks):
        low = t.text.lower()
        value = number_value(low)
        ordinal = low in ordinals
        if value is None and not ordinal:
            continue
        nxt = toks[i + 1].text.lower() if i + 1 < len(toks) else ""
        unit = units.get(nxt) if not ordinal else None
        if ordinal and low == "second" and i > 0 and number_value(toks[i - 1].text.lower()) is not None:
            continue  # "30 second": a unit, not "the second"
        end = toks[i + 1].end if unit else t.end
        out.append(Num(Hit(t.start, end, src[t.start:end]), float(ordinals[low] if ordinal else value or 0),
                        ordinal, unit))
    return out
