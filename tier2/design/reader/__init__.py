"""The offline brief reader: what a brief (English or Chinese) describes — its genre and the things it asks for.

Deterministic and pure (no I/O but package data files: ``data/frames.yaml`` here, the word lists of `tier2.lexis`).
The genre comes from what the brief describes — the pack's cues (`tier2.packs.Pack.genre_cues`: each genre's
``reader:`` words in its ``lexicon.yaml``, verbs and objects such as "hop across", "casts fireballs at", "fill
orders") — not from the genre's name; the reader knows no genre itself. When the best genre scores under
`MIN_SCORE`, ties, or is one the pack cannot build, the reading's genre is None with the reason.

Content items: the player character, enemies, pickups, goods, customers, obstacles, the setting, named mechanics,
counts, win and lose conditions and the tone, each with the brief span it comes from. Only understood words (the
word lists, or a Chinese noun of jieba's dictionary) ever become a name; a clause that reads as a prompt injection
("ignore all previous instructions") is skipped whole. A brief in a language the reader cannot read (Spanish,
French...) gets language ``unreadable``, no genre and no items, with the reason.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml

from tier2.lexis import (
    Token,
    category,
    detect_language,
    en_tokens,
    injection_spans,
    lemma,
    number_value,
    understood_en,
    understood_zh,
    zh_tokens,
    zh_words,
)
from tier2.lexis import en_words as _en_words

__all__ = ["CONTENT_KINDS", "ENTITY_KINDS", "MAX_READ", "MIN_SCORE", "ContentItem", "GenreCues", "Reading",
           "read_brief"]

#: genre id -> {"en": {cue: weight}, "zh": {cue: weight}} (`tier2.packs.Pack.genre_cues`)
GenreCues = Mapping[str, Mapping[str, Mapping[str, float]]]
Kind = Literal["player", "enemy", "pickup", "goods", "customer", "obstacle", "setting", "mechanic", "count", "win",
               "lose", "tone"]
CONTENT_KINDS: tuple[str, ...] = ("player", "enemy", "pickup", "goods", "customer", "obstacle", "setting",
                                  "mechanic", "count", "win", "lose", "tone")
#: kinds that are things drawn on screen (an asset per item); setting is drawn as the backdrop
ENTITY_KINDS: tuple[str, ...] = ("player", "enemy", "pickup", "goods", "customer", "obstacle", "setting")
#: the least cue weight a genre needs before the reader names it
MIN_SCORE = 3.0
#: characters of a brief the reader reads (a brief says what it asks for up front; the rest is not read, so a
#: 100 000-character brief costs what a 4 000-character one does)
MAX_READ = 4000
_LIVING = ("creature", "person")
_DETERMINERS = frozenset({"a", "an", "the", "my", "your", "his", "her", "its", "their", "our", "this", "that", "some",
                          "every", "each", "no", "any"})


@dataclass(frozen=True)
class ContentItem:
    """One thing the brief asks for: its kind, its name as the brief says it, the key term (a lemma: what a label
    matches), the [start, end) span of the brief it comes from and, for a count, the number."""

    kind: str
    name: str
    term: str
    span: tuple[int, int]
    value: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "term": self.term, "span": list(self.span),
                **({"value": self.value} if self.value is not None else {})}


@dataclass(frozen=True)
class Reading:
    """What the reader made of a brief."""

    language: str  # en | zh | unreadable
    language_name: str
    genre: str | None  # a genre the pack builds, or None
    reason: str  # why this genre, or why none
    described: str | None = None  # the genre the brief describes, also when the pack cannot build it (None: unclear)
    scores: dict[str, float] = field(default_factory=dict)
    cues: dict[str, list[str]] = field(default_factory=dict)  # genre -> the brief's cue words that scored
    items: list[ContentItem] = field(default_factory=list)
    injections: list[tuple[int, int]] = field(default_factory=list)  # spans skipped as prompt injection
    names: list[str] = field(default_factory=list)  # understood nouns, in brief order: what a title may use

    @property
    def readable(self) -> bool:
        return self.language != "unreadable"

    def of(self, kind: str) -> list[ContentItem]:
        return [i for i in self.items if i.kind == kind]


@cache
def _frames() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("data", "frames.yaml").read_text(encoding="utf-8")
    return dict(yaml.safe_load(text))


@cache
def _en_sets() -> dict[str, frozenset[str]]:
    f = _frames()["en"]
    return {k: frozenset(lemma(str(w)) for w in v) for k, v in f.items() if isinstance(v, list)
            and k not in ("win", "lose", "injection")}


@cache
def _patterns(lang: str, key: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.I) for p in _frames()[lang][key])


def _norm(brief: str) -> str:
    """The brief NFKC-normalised character by character where that keeps every offset (full-width "：" → ":"), so a
    span of the reading indexes the brief itself; the brief unchanged otherwise."""
    chars = [unicodedata.normalize("NFKC", c) for c in brief]
    return "".join(c if len(c) == 1 else o for c, o in zip(chars, brief, strict=True))


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    return any(a <= at < b for a, b in spans)


# --- genre ------------------------------------------------------------------------------------------------------


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


# --- English content --------------------------------------------------------------------------------------------


@dataclass
class _Phrase:
    start_tok: int
    end_tok: int  # exclusive
    head: str  # lemma of the head noun
    cats: tuple[str, ...]


def _phrases(toks: list[Token], skip: frozenset[str]) -> list[_Phrase]:
    """Noun phrases: a run of describing words / known nouns ending in a known noun (the head). A word that is also
    a verb of the frames is a verb after a noun or pronoun ("I brew potions"), a noun after a verb, a determiner or
    a describing word ("catch flies", "a brew")."""
    sets = _en_sets()
    verbs = sets["mechanic"] | sets["hostile"] | sets["gather"] | sets["make"] | sets["launch"] | sets["tiles"]
    fw = frozenset(map(str, _en_words()["function_words"]))
    adjectives = frozenset(map(str, _en_words()["adjectives"])) | frozenset(map(str, _en_words()["tone"]))
    out: list[_Phrase] = []
    i = 0
    while i < len(toks):
        j = i
        last_noun = -1
        while j < len(toks):
            lem = toks[j].lemma
            low = toks[j].text.lower()
            if low in fw or lem in skip:
                break
            if j > i and toks[j].start - toks[j - 1].end > 1:  # punctuation between: another phrase
                break
            if lem in verbs and j == i:
                before = toks[j - 1] if j > 0 else None
                after_verb = before is not None and before.lemma in verbs | sets["reach"] and \
                    toks[j].start - before.end <= 1
                if not (before is not None and (before.text.lower() in _DETERMINERS or after_verb
                                                or before.text.isdigit() or number_value(before.text))):
                    break
            if lem in verbs and j > i and (not category(lem) or set(category(toks[j - 1].lemma)) & {
                    "creature", "person", "vehicle"}):
                break  # "a blacksmith forges swords": the verb after the noun
            if low.endswith("ing") and lem != low and low not in adjectives and not (
                    j > 0 and toks[j - 1].text.lower() in _DETERMINERS):
                break  # "knights storming": a verb, not a thing
            parts = lem.split("-")
            is_noun = bool(category(lem)) or (len(parts) > 1 and bool(category(lemma(parts[-1]))))
            is_adj = lem in adjectives or low in adjectives or (len(parts) > 1 and any(
                understood_en(lemma(p)) for p in parts))
            if is_noun:
                last_noun = j
            elif not is_adj:
                break
            j += 1
        if last_noun >= 0:
            head = toks[last_noun].lemma
            head_parts = head.split("-")
            cats = category(head) or category(lemma(head_parts[-1]))
            out.append(_Phrase(i, last_noun + 1, head if category(head) else lemma(head_parts[-1]), cats))
            i = last_noun + 1
        else:
            i = max(j, i + 1)
    return out


_BREAK_WORDS = r"\b(?:and|but|while|then|where|which|who|or|before|until|after|when|if|so|because|whilst)\b"


def _clause_breaks(text: str) -> list[int]:
    return [m.start() for m in re.finditer(r"[.;:!?\n,—–()]|" + _BREAK_WORDS, text, re.I)]


def _en_items(text: str, toks: list[Token], skip_spans: list[tuple[int, int]], descriptors: frozenset[str],
              cue_words: frozenset[str] = frozenset()) -> tuple[list[ContentItem], list[str]]:
    sets = _en_sets()
    f = _frames()["en"]
    toks = [t for t in toks if not _inside(skip_spans, t.start)]
    phrases = _phrases(toks, frozenset())
    items: list[ContentItem] = []
    names: list[str] = []
    breaks = _clause_breaks(text)
    fw = frozenset(map(str, _en_words()["function_words"]))
    foes = frozenset(map(str, _en_words()["foes"]))
    framed = sets["hostile"] | sets["gather"] | sets["make"] | sets["launch"] | sets["reach"] | sets["mechanic"] | \
        sets["tiles"]

    def clause_of(at: int) -> int:
        return sum(1 for b in breaks if b < at)

    def add(kind: str, a: int, b: int, term: str, value: int | None = None) -> bool:
        name = text[a:b].strip()
        if not name or any(i.kind == kind and i.term == term for i in items):
            return False
        items.append(ContentItem(kind, name, term, (a, b), value))
        return True

    def verb_before(p: _Phrase) -> tuple[str | None, int]:
        """The nearest verb of the frames before the phrase in its clause (and its token index)."""
        c = clause_of(toks[p.start_tok].start)
        k = p.start_tok - 1
        while k >= 0 and clause_of(toks[k].start) == c:
            if toks[k].lemma in framed and not any(toks[k].start >= toks[q.start_tok].start and
                                                   toks[k].end <= toks[q.end_tok - 1].end for q in phrases):
                return toks[k].lemma, k
            k -= 1
        return None, -1

    # "a vertical shmup where ...", "a cozy bakery tycoon: ...", "a sushi bar where you ...": what comes before
    # says what the game is, not who plays it (no player there; a place there is still the setting)
    prefix_end = 0
    sep = re.search(r"\s(?:where|in which|about)\s|[:—–]|\s-\s", text)
    if sep:
        before = {t.lemma for t in toks if t.end <= sep.start()}
        pronoun = re.match(r"\s*(?:i|you|we|players?|the player)\b", text[sep.end():], re.I)
        if before & (frozenset(descriptors) | cue_words) or pronoun:
            prefix_end = sep.end()
    player_done = False
    first_verb_at = next((t.start for t in toks if t.lemma in sets["mechanic"] | sets["hostile"] | sets["make"]
                          | sets["gather"] | sets["launch"] | sets["tiles"] and t.start >= prefix_end
                          and not any(toks[q.start_tok].start <= t.start < toks[q.end_tok - 1].end
                                      for q in phrases)), len(text))
    last: tuple[int, str] | None = None  # (end token of the last phrase given a kind by a verb, that kind)
    for p in phrases:
        a, b = toks[p.start_tok].start, toks[p.end_tok - 1].end
        if p.head in descriptors:
            continue
        names.extend(t.text for t in toks[p.start_tok:p.end_tok] if category(t.lemma))
        prev = toks[p.start_tok - 1].text.lower() if p.start_tok > 0 else ""
        prev2 = toks[p.start_tok - 2].lemma if p.start_tok > 1 else ""
        after = toks[p.end_tok].text.lower() if p.end_tok < len(toks) else ""
        verb, vat = verb_before(p)
        cats = p.cats
        living = any(c in _LIVING for c in cats)
        kind: str | None = None
        # coordination: "bake bread and cakes" — the second thing is what the first is
        if last is not None and prev in ("and", "or", "&") and last[0] == p.start_tok - 1 and \
                "place" not in cats:
            if add(last[1], a, b, p.head):
                last = (p.end_tok, last[1])
            continue
        # attach: "a wizard on a broom" — a non-place thing right after the player joins its name
        attach = prev in sets["attach"] or (prev in _DETERMINERS and prev2 in sets["attach"])
        if items and items[-1].kind == "player" and attach and "place" not in cats and a - items[-1].span[1] <= 12:
            player = items.pop()
            items.append(ContentItem("player", text[player.span[0]:b], player.term, (player.span[0], b)))
            continue
        for t in toks[p.start_tok:p.end_tok - 1]:  # "fill customer orders": the customer word inside a phrase
            if t.lemma in sets["customer"]:
                add("customer", t.start, t.end, t.lemma)
        if p.head in sets["customer"]:
            add("customer", a, b, p.head)
            continue
        window = toks[max(0, p.start_tok - 3):p.start_tok]
        located = prev in sets["locative"] or (prev == "of" and prev2 == "out") or any(
            u.text.lower() in sets["locative"] and all(v.lemma not in framed for v in window[n + 1:])
            for n, u in enumerate(window))
        reach = verb in sets["reach"] and vat == p.start_tok - 1 or (
            verb in sets["reach"] and prev in _DETERMINERS and vat == p.start_tok - 2) or prev == "to" and \
            prev2 in sets["reach"]
        if reach and "hazard" not in cats:
            add("win", a, b, p.head)
            continue
        if "place" in cats and (located or verb is None or a < prefix_end):
            add("setting", a, b, p.head)
            continue
        if a < prefix_end:
            continue
        if not player_done and a < first_verb_at and prev not in sets["locative"] and \
                (living or "vehicle" in cats or "thing" in cats):
            add("player", a, b, p.head)
            player_done = True
            continue
        if prev in ("as", "control", "controls", "controlling") and (living or "vehicle" in cats):
            add("player", a, b, p.head)
            player_done = True
            continue
        between = {u.text.lower() for u in toks[vat + 1:p.start_tok]} if vat >= 0 else set()
        is_target = "at" in between and verb in sets["launch"]
        if verb in sets["launch"] and after == "at":
            continue  # the projectile: part of the mechanic
        if verb in sets["hostile"] or is_target:
            if living or "vehicle" in cats:
                kind = "enemy"
            elif "hazard" in cats or "thing" in cats:
                kind = "obstacle" if "hazard" in cats or verb in ("dodge", "avoid", "evade") else "enemy"
        elif verb in sets["tiles"]:
            kind = "pickup" if not living else None
        elif verb in sets["make"]:
            if prev in ("to", "for") and living:
                kind = "customer"
            elif "place" not in cats and not living:
                kind = "goods"
        elif verb in sets["gather"]:
            kind = "obstacle" if "hazard" in cats and "thing" not in cats else "pickup"
        if kind is None and "place" in cats:
            kind = "setting"
        if kind is None and p.head in foes:
            kind = "enemy"
        if kind is None and "hazard" in cats and not living:
            kind = "obstacle"
        if kind is not None and add(kind, a, b, p.head):
            last = (p.end_tok, kind)
    # mechanics: the player's named actions (the verb is the term): the verb, its particle, a direct object
    heads = {toks[q.end_tok - 1].start for q in phrases}
    starts = {toks[q.start_tok].start: toks[q.end_tok - 1].end for q in phrases}
    for i, t in enumerate(toks):
        low = t.text.lower()
        if t.lemma not in sets["mechanic"] or low in fw or t.start in heads or t.lemma in descriptors or \
                "-" in low and t.lemma not in sets["mechanic"]:
            continue
        if t.start < prefix_end and any(t.lemma == d or low == d for d in descriptors | cue_words):
            continue
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if nxt is not None and nxt.lemma == "out" and t.lemma == "run":
            continue  # "before the moves run out": a limit, not running
        end = t.end
        if nxt is not None and nxt.lemma in ("down", "up", "over", "across", "around", "off", "out") and \
                nxt.start - end <= 1:
            end = nxt.end
            nxt = toks[i + 2] if i + 2 < len(toks) else None
        if nxt is not None and nxt.start in starts and nxt.start - end <= 1:
            end = starts[nxt.start]
        add("mechanic", t.start, end, t.lemma)
    # counts: "three lives", "5 waves"
    counted = {lemma(str(k)): str(v) for k, v in f["counted"].items()}
    for i, t in enumerate(toks[:-1]):
        value = number_value(t.text)
        if value is None:
            continue
        for u in toks[i + 1:i + 3]:
            if u.lemma in counted:
                add("count", t.start, u.end, counted[u.lemma], value)
                break
    low_text = text.lower()
    lose_spans: list[tuple[int, int]] = []
    for kind in ("lose", "win"):
        for pat in _patterns("en", kind):
            for m in pat.finditer(low_text):
                if _inside(skip_spans, m.start()):
                    continue
                if kind == "win" and any(a <= m.start() < b or m.start() <= a < m.end() for a, b in lose_spans):
                    continue
                term = m.groupdict().get("term") or m.group(0).split()[-1]
                if term in fw:
                    continue
                if add(kind, m.start(), m.end(), lemma(term)) and kind == "lose":
                    lose_spans.append((m.start(), m.end()))
    tone = frozenset(map(str, _en_words()["tone"]))
    for t in toks:
        if t.text.lower() in tone:
            add("tone", t.start, t.end, t.text.lower())
    loses = [i.span for i in items if i.kind == "lose"]
    items = [i for i in items if i.kind != "win" or not any(a < i.span[1] and i.span[0] < b for a, b in loses)]
    items.sort(key=lambda i: (i.span[0], CONTENT_KINDS.index(i.kind)))
    return items, names


# --- Chinese content --------------------------------------------------------------------------------------------


def _zh_items(text: str, toks: list[Token], skip_spans: list[tuple[int, int]], descriptors: frozenset[str],
              ) -> tuple[list[ContentItem], list[str]]:
    f = _frames()["zh"]
    zw = zh_words()
    toks = [t for t in toks if not _inside(skip_spans, t.start)]
    items: list[ContentItem] = []
    names: list[str] = []
    fw = set(map(str, zw["function_words"])) | set(descriptors)
    customers = set(map(str, f["customer"]))
    verbs = {k: set(map(str, f[k])) for k in ("hostile", "launch", "gather", "make", "mechanic", "reach", "tiles")}
    all_verbs = set().union(*verbs.values())

    def add(kind: str, a: int, b: int, term: str, value: int | None = None) -> bool:
        if any(i.kind == kind and i.term == term for i in items):
            return False
        items.append(ContentItem(kind, text[a:b], term, (a, b), value))
        return True

    def is_noun(t: Token) -> bool:
        return t.text not in fw and t.text not in all_verbs and understood_zh(t)

    # noun groups: consecutive understood nouns ("折纸" + "鸟" → 折纸鸟); a customer word stands alone
    groups: list[tuple[int, int]] = []
    i = 0
    while i < len(toks):
        if toks[i].text in customers:
            groups.append((i, i + 1))
            i += 1
            continue
        if is_noun(toks[i]) or (category(toks[i].text, "zh") and toks[i].text not in all_verbs):
            j = i
            while j + 1 < len(toks) and (is_noun(toks[j + 1]) or category(toks[j + 1].text, "zh")) and \
                    toks[j + 1].start == toks[j].end and toks[j + 1].text not in customers and \
                    toks[j + 1].text not in all_verbs:
                j += 1
            groups.append((i, j + 1))
            i = j + 1
        else:
            i += 1
    breaks = [m.start() for m in re.finditer(r"[，。,.;；:：!！?？、]", text)]

    def clause_of(at: int) -> int:
        return sum(1 for b in breaks if b < at)

    def verb_of(k: int) -> str | None:
        return next((v for v, ws in verbs.items() if toks[k].text in ws), None)

    first_verb = next((t.start for k, t in enumerate(toks) if verb_of(k)), len(text))
    player_done = False
    last: tuple[int, str] | None = None
    for s, e in groups:
        a, b = toks[s].start, toks[e - 1].end
        name = text[a:b]
        if name in fw or name in descriptors or any(name.endswith(d) for d in descriptors if len(d) >= 2):
            continue
        names.append(name)
        head = toks[e - 1].text
        cats = category(name, "zh") or category(head, "zh")
        living = any(c in _LIVING for c in cats) or not cats
        prev = toks[s - 1].text if s > 0 else ""
        nxt = toks[e].text if e < len(toks) else ""
        c = clause_of(a)
        verb = None
        k = s - 1
        while k >= 0 and clause_of(toks[k].start) == c:
            verb = verb_of(k)
            if verb:
                break
            k -= 1
        later = None  # "向蝙蝠发射火球": the verb after a target marked by 向/朝/对
        if prev in ("向", "朝", "对", "朝着"):
            later = next((verb_of(q) for q in range(e, len(toks)) if clause_of(toks[q].start) == c and verb_of(q)),
                         None)
        kind: str | None = None
        if last is not None and prev in ("和", "与", "及", "、", "或") and last[0] == s - 1 and "place" not in cats:
            if add(last[1], a, b, name):
                last = (e, last[1])
            continue
        if name in customers or head in customers:
            add("customer", a, b, name)
            continue
        if prev == "给" and living and verb in ("make", None, "mechanic"):
            add("customer", a, b, name)
            continue
        if verb == "reach" and k == s - 1 and name not in ("出口",):
            add("win", a, b, name)
            continue
        if later in ("launch", "hostile"):
            add("enemy", a, b, name)
            continue
        if "place" in cats and verb not in ("reach", "gather", "tiles"):
            add("setting", a, b, name)
            continue
        if not player_done and a < first_verb and prev not in ("用", "给", "把", "向", "对", "在") and \
                (living or "vehicle" in cats or "thing" in cats):
            add("player", a, b, name)
            player_done = True
            continue
        if prev == "用":
            if verb is None and "thing" in cats:
                kind = "goods"
            if kind and add(kind, a, b, name):
                last = (e, kind)
            continue
        if verb == "launch" and nxt in ("攻击", "打", "射"):
            continue
        if verb == "hostile":
            kind = "obstacle" if "hazard" in cats else "enemy"
        elif verb == "tiles":
            kind = "pickup"
        elif verb == "make":
            if "place" not in cats and not any(x in _LIVING for x in cats):
                kind = "goods"
        elif verb == "gather":
            kind = "obstacle" if "hazard" in cats else ("pickup" if "place" not in cats else "setting")
        elif "hazard" in cats:
            kind = "obstacle"
        if kind is not None and add(kind, a, b, name):
            last = (e, kind)
    # mechanics: the longest mechanic verb found at each place of the text (跳过 before 跳)
    mech = sorted(verbs["mechanic"], key=len, reverse=True)
    taken: list[tuple[int, int]] = []
    for v in mech:
        for m in re.finditer(re.escape(v), text):
            a, b = m.start(), m.end()
            inside_noun = any(toks[g0].start <= a and b <= toks[g1 - 1].end
                              and (toks[g0].start, toks[g1 - 1].end) != (a, b) for g0, g1 in groups)
            if _inside(skip_spans, a) or inside_noun or any(x < b and a < y for x, y in taken):
                continue
            taken.append((a, b))
            add("mechanic", a, b, v)
    numbers = "".join(map(str, zw["number_chars"]))
    measure = "|".join(sorted(map(re.escape, map(str, zw["measure_words"])), key=len, reverse=True))
    counted = {str(k): str(v) for k, v in zw["counted"].items()}
    count_pat = re.compile(rf"([\d{numbers}]+)\s*({measure})?\s*(命|生命|心|关卡|关|波|轮|秒|分钟|天|层|圈|回合|步|次)")
    for m in count_pat.finditer(text):
        if _inside(skip_spans, m.start()):
            continue
        raw = m.group(1)
        value = int(raw) if raw.isdigit() else _zh_number(raw, zw["number_chars"])
        what = counted.get(m.group(3)) or counted.get((m.group(2) or "") + m.group(3)) or m.group(3)
        add("count", m.start(), m.end(), what, value)
    for kind in ("win", "lose"):
        for pat in _patterns("zh", kind):
            for m in pat.finditer(text):
                if not _inside(skip_spans, m.start()):
                    add(kind, m.start(), m.end(), m.group("term"))
    for w in map(str, zw["tone"]):
        at = text.find(w)
        if at >= 0 and not _inside(skip_spans, at):
            add("tone", at, at + len(w), w)
    items.sort(key=lambda i: (i.span[0], CONTENT_KINDS.index(i.kind)))
    return items, names


def _zh_number(raw: str, chars: Mapping[str, int]) -> int | None:
    if raw == "十":
        return 10
    if raw.startswith("十"):
        return 10 + int(chars.get(raw[1:], 0))
    if "十" in raw:
        hi, _, lo = raw.partition("十")
        return int(chars.get(hi, 1)) * 10 + int(chars.get(lo, 0) if lo else 0)
    value = chars.get(raw)
    return int(value) if value is not None else None


# --- the reading ------------------------------------------------------------------------------------------------


def read_brief(brief: str, cues: GenreCues, buildable: Collection[str]) -> Reading:
    """Read ``brief`` against the pack's genre ``cues`` (`tier2.packs.Pack.genre_cues`); ``buildable``: the genres
    the pack has templates for (a best genre outside them is refused with the reason, never substituted)."""
    text = _norm(brief)[:MAX_READ]
    lang, name = detect_language(text)
    if lang == "unreadable":
        return Reading(language=lang, language_name=name, genre=None, reason=(
            f"the brief is written in {name}, which the offline reader cannot read (it reads English and Chinese); "
            f"a model route reads any language"))
    skip = injection_spans(text)
    kept = "".join(" " if _inside(skip, i) else ch for i, ch in enumerate(text))
    tokens = en_tokens(kept) if lang == "en" else zh_tokens(kept)
    scores, words = _score(tokens, kept, lang, cues)
    genre, reason = _decide(scores, words, buildable)
    described = genre or (max(scores, key=lambda g: scores[g]) if scores and "no genre of the pack builds" in reason
                          else None)
    descriptors = set(map(str, _frames()[lang]["descriptor"]))
    frame_verbs = {str(w) for k, v in _frames()[lang].items() if isinstance(v, list) and k not in
                   ("win", "lose", "injection", "descriptor") for w in v}
    for by_lang in cues.values():  # what names a genre is no thing of the game ("a vertical shmup where ...")
        descriptors |= {lemma(c) if lang == "en" else c for c, w in (by_lang.get(lang) or {}).items()
                        if w >= 5 and " " not in c and not category(lemma(c) if lang == "en" else c, lang)
                        and (lemma(c) if lang == "en" else c) not in frame_verbs}
    if lang == "en":
        cue_words = frozenset(lemma(c) for by_lang in cues.values() for c, w in (by_lang.get("en") or {}).items()
                              if w >= 4 and " " not in c)
        items, names = _en_items(text, tokens, skip, frozenset(descriptors), cue_words)
    else:
        items, names = _zh_items(text, tokens, skip, frozenset(descriptors))
    return Reading(language=lang, language_name=name, genre=genre, reason=reason, described=described,
                   scores=scores, cues=words,
                   items=items, injections=skip, names=list(dict.fromkeys(names)))
