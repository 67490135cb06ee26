"""The things an English brief asks for: noun phrases, what each one is by the verb before it, mechanics, counts,
win and lose conditions and the tone."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tier2.design.reader.common import _DETERMINERS, _LIVING, _en_sets, _frames, _inside, _patterns
from tier2.design.reader.types import CONTENT_KINDS, ContentItem
from tier2.lexis import Token, category, lemma, number_value, understood_en
from tier2.lexis import en_words as _en_words


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
