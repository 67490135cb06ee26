"""Reading a follow-up in a thread ("same game, snowy theme", "give me 5 lives", "三条命", "remove the timer") into
typed changes of the built game, in English and Chinese.

The follow-up is cut into clauses (punctuation, "and"/"but"/"also", 和/但是/还有…); each clause is read for, in
order: an ask no pack builds ("online multiplayer": `tier2.design.genre.out_of_scope`), another genre ("make it a
… instead": the pack's genre cues, only after a genre-change word), difficulty ("harder"/"更难": every knob the genre
marks with ``difficulty:``), the genre's knobs (``adjust:`` in its genre.yaml: the knob's nouns, then a number — set
— or a comparative of the knob's sense — up/down, flipped for an ``inverse`` knob — or a removal word — off), and a
theme (theme words and markers, or the setting/tone the brief reader finds). A clause asking for something the
reader knows (a known noun or mechanic verb, another genre's cue) that none of that matched is *unbuildable*, with
the genre's options; a clause in which nothing was recognised is *uninterpreted* (never dropped); a clause of
filler only ("same game", "please", "继续") asks for nothing. Then contradictions: one knob moved both ways or set
to two values, "easier" with "harder", a value the genre cannot take — neither side is kept as a change.

Pure and deterministic: the words are `tier2.lexis` ``change.yaml``; what a word changes comes from the pack's
knobs. No genre knowledge here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tier2.design.genre import out_of_scope
from tier2.design.reader.chinese import _zh_items
from tier2.design.reader.common import MAX_READ, _en_sets, _frames, _norm
from tier2.design.reader.english import _en_items
from tier2.design.reader.followup_words import Dir, Hit, Num, directions, find, language, numbers, word_list
from tier2.design.reader.genre import _decide, _score
from tier2.design.reader.types import (
    Change,
    Contradiction,
    FollowUp,
    GenreLike,
    KnobLike,
    PackLike,
    Span,
    Unbuildable,
)
from tier2.lexis import Token, category, en_tokens, understood_zh, zh_tokens

__all__ = ["THEME_ROLES", "describe", "read_follow_up"]

#: the designers a new theme changes, and its table
THEME_ROLES = ("assets", "vfx", "ui", "audio")
THEME_TABLES = ("theme.json",)
ALL_ROLES = ("gameplay", "level", "economy", "ui", "audio", "vfx", "assets")
_EN_BREAK = re.compile(r"[.;!?\n,()—–]+|\s+(?:and|but|also|plus|then|while|however|as well as)\s+", re.I)
_ZH_BREAK = re.compile(r"[，。；！？、,.;!?\n：:（）()]+|和|还有|并且|而且|但是|但|然后|同时|另外|以及")


@dataclass
class _Acc:
    changes: list[Change]
    unbuildable: list[Unbuildable]
    contradictions: list[Contradiction]
    uninterpreted: list[Span]


def read_follow_up(text: str, genre: GenreLike, pack: PackLike) -> FollowUp:
    """What ``text``, a follow-up to a game of ``genre`` built with ``pack``, asks for (see the module doc)."""
    src = _norm(text)[:MAX_READ]
    lang = language(src, genre)
    options = _options(genre, lang)
    if lang == "unreadable":
        return FollowUp(text=src, language=lang, options=options,
                        uninterpreted=[Span(0, len(src), src)] if src.strip() else [])
    acc = _Acc([], [], [], [])
    for a, b in _clauses(src, lang):
        _read_clause(src, a, b, lang, genre, pack, options, acc)
    _settle(acc)
    return FollowUp(text=src, language=lang, changes=acc.changes, unbuildable=acc.unbuildable,
                    contradictions=acc.contradictions, uninterpreted=acc.uninterpreted, options=options)


def _options(genre: GenreLike, lang: str) -> tuple[str, ...]:
    if lang == "zh":
        return (*(k.what_zh for k in genre.adjust), "新的主题")
    return (*(k.what for k in genre.adjust), "a new theme")


def _clauses(src: str, lang: str) -> list[tuple[int, int]]:
    out, at = [], 0
    for m in (_ZH_BREAK if lang == "zh" else _EN_BREAK).finditer(src):
        out.append((at, m.start()))
        at = m.end()
    out.append((at, len(src)))
    spans = []
    for a, b in out:
        while a < b and src[a].isspace():
            a += 1
        while b > a and src[b - 1].isspace():
            b -= 1
        if b > a:
            spans.append((a, b))
    return spans


# --- one clause -----------------------------------------------------------------------------------------------------

def _read_clause(src: str, a: int, b: int, lang: str, genre: GenreLike, pack: PackLike, options: tuple[str, ...],
                 acc: _Acc) -> None:
    clause = src[a:b]
    toks = [Token(t.text, t.lemma, t.start + a, t.end + a, t.tag)
            for t in (zh_tokens(clause) if lang == "zh" else en_tokens(clause))]
    if _only_filler(clause, lang, toks) or _keeps(clause, lang):
        return
    span = (a, b)

    def unbuildable(reason: str) -> None:
        acc.unbuildable.append(Unbuildable(span, clause, reason, options))

    scope = out_of_scope(clause) if lang == "en" else []
    if scope:
        unbuildable(f"{scope[0][0]}: {scope[0][1]}")
        return
    if find(src, a, b, lang, toks, word_list(lang, "genre_change")):
        scores, words = _score([t for t in toks], clause, lang, pack.genre_cues())
        best, reason = _decide(scores, words, list(pack.genres))
        if best is not None and best != genre.id:
            tables = tuple(getattr(getattr(pack.genres[best], "spec", None), "data_tables", ()) or ())
            acc.changes.append(Change("genre", best, "set", None, span, clause, ALL_ROLES, tables))
            return
        if best is None and scores:
            unbuildable(reason)
            return
    recognised = False
    harder = find(src, a, b, lang, toks, word_list(lang, "harder"))
    easier = find(src, a, b, lang, toks, word_list(lang, "easier"))
    taken = [(h.start, h.end) for h in harder + easier]
    if harder or easier:
        recognised = True
        which = "harder" if harder and (not easier or harder[0].start < easier[0].start) else "easier"
        knobs = [k for k in genre.adjust if k.difficulty]
        if not knobs:
            unbuildable(f"the {genre.id} game marks none of its numbers as difficulty, so '{which}' cannot be built")
        for k in knobs:
            up = (k.difficulty == "up") == (which == "harder")
            acc.changes.append(_knob_change(k, "up" if up else "down", None, span, clause, via=which))
        if harder and easier:
            for k in knobs:
                up = (k.difficulty == "up") != (which == "harder")
                acc.changes.append(_knob_change(k, "up" if up else "down", None, span, clause,
                                                via="easier" if which == "harder" else "harder"))
    dirs = [d for d in directions(src, a, b, lang, toks) if not any(s <= d.hit.start < e for s, e in taken)]
    offs = find(src, a, b, lang, toks, word_list(lang, "off"))
    nums = numbers(src, a, b, lang, toks)
    by_one = find(src, a, b, lang, toks, word_list(lang, "by_one"))
    mentions = _mentions(src, a, b, lang, toks, genre.adjust)
    timed = [n for n in nums if n.unit_ms is not None]
    clocks = [k for k in genre.adjust if k.type == "ms" and k.sense == "duration"]
    if timed and len(clocks) == 1 and not any(k.type == "ms" for _h, ks in mentions for k in ks):
        mentions.append((timed[0].hit, clocks[0:1]))  # "90 seconds per level": the genre's one clock
    made = False
    rejected: list[str] = []
    for hit, knobs in mentions:
        knob, direction, value = _resolve(hit, knobs, dirs, offs, nums, by_one)
        if knob is None:
            if direction.startswith("rejected:"):
                rejected.append(f"{direction.partition(':')[2]} {src[hit.start:hit.end]}")
            continue
        recognised = made = True
        if direction == "off" and knob.off is None:
            what = knob.what_zh if lang == "zh" else knob.what
            unbuildable(f"the {genre.id} game cannot remove {src[hit.start:hit.end]}: its template always uses "
                        f"{what} (it can change it instead)")
            continue
        if direction == "set" and value is not None and knob.off is not None and value == knob.off:
            direction, value = "off", None
        change = _knob_change(knob, direction, value, span, clause)
        if direction == "set" and value is not None and value < knob.min:
            acc.contradictions.append(Contradiction(change, None, (
                f"{knob.what} cannot be {value:g} in a {genre.id} game: {knob.min:g} is the least it can be")))
            continue
        acc.changes.append(change)
    theme = _theme(src, a, b, lang, toks, made)
    if theme is not None:
        recognised = True
        acc.changes.append(Change("theme", theme, "set", None, span, clause, THEME_ROLES, THEME_TABLES))
    if recognised:
        return
    if rejected:  # "longer levels", "more enemies": a knob named, moved in a way none of its numbers moves
        unbuildable(f"the {genre.id} game has no number that makes {rejected[0]} (it can change: "
                    f"{', '.join(options)})")
        return
    if mentions:  # a knob named with no change of it ("lives?")
        acc.uninterpreted.append(Span(a, b, clause))
        return
    asks = find(src, a, b, lang, toks, word_list(lang, "ask")) or dirs or offs
    known = _known(src, a, b, lang, toks, genre, pack)
    if asks and known:
        unbuildable(f"the {genre.id} game has no behaviour or number for {known}: its template cannot do this "
                    f"(it can change: {', '.join(options)})")
        return
    acc.uninterpreted.append(Span(a, b, clause))


def _keeps(clause: str, lang: str) -> bool:
    """A clause that keeps something as it is ("keep the gameplay", "保持玩法不变") asks for no change."""
    text = clause.strip().lower()
    return any(text.startswith(w) for w in word_list(lang, "keep"))


def _only_filler(clause: str, lang: str, toks: Sequence[Token]) -> bool:
    filler = word_list(lang, "filler")
    if lang == "zh":
        rest = clause
        for w in sorted(filler, key=len, reverse=True):
            rest = rest.replace(w, "")
        return not re.sub(r"[\W_]+", "", rest)
    words = {w.lower() for w in filler}
    return all(t.text.lower() in words or t.lemma in words for t in toks)


def _mentions(src: str, a: int, b: int, lang: str, toks: Sequence[Token],
              knobs: Sequence[KnobLike]) -> list[tuple[Hit, list[KnobLike]]]:
    """The knob nouns of the clause, longest first, each with every knob it names."""
    by_noun: dict[str, list[KnobLike]] = {}
    for k in knobs:
        for noun in (k.nouns_zh if lang == "zh" else k.nouns):
            by_noun.setdefault(noun if lang == "zh" else noun.lower(), []).append(k)
    hits = find(src, a, b, lang, toks, by_noun)
    return [(h, by_noun[h.word if lang == "zh" else h.word.lower()]) for h in hits]


def _near(hit: Hit, items: Sequence[Num]) -> Num | None:
    if not items:
        return None
    return min(items, key=lambda n: min(abs(n.hit.end - hit.start), abs(hit.end - n.hit.start)))


def _resolve(hit: Hit, knobs: list[KnobLike], dirs: list[Dir], offs: list[Hit], nums: list[Num],
             by_one: list[Hit]) -> tuple[KnobLike | None, str, float | None]:
    """The knob a mention means and what happens to it: (knob, direction, value) — knob None: no change of it."""
    d = min(dirs, key=lambda x: abs(x.hit.start - hit.start)) if dirs else None
    explicit = " " in hit.word.strip() or any(w in hit.word for w in ("speed", "rate", "速"))
    if d is None:
        pick = [k for k in knobs if k.sense != "speed"] or knobs
    elif d.sense == "speed" or d.sense == "duration":  # "faster enemies", "longer levels": only a knob of that sense
        pick = [k for k in knobs if k.sense == d.sense]
    elif d.sense == "size":  # "a bigger level" is no count of levels
        pick = [k for k in knobs if k.sense != "speed" and not k.count_of]
    else:
        pick = [k for k in knobs if k.sense != "speed"] or ([*knobs] if explicit else [])
    if not pick:
        return None, f"rejected:{d.hit.word}" if d is not None else "", None
    knob = pick[0]
    if offs:
        return knob, "off", None
    num = _near(hit, [n for n in nums if knob.type == "ms" or n.unit_ms is None])
    if num is not None:
        value = num.value
        if knob.type == "ms":
            value *= num.unit_ms if num.unit_ms is not None else knob.unit_ms
        if num.ordinal or d is None or d.hit.start > num.hit.start and d.hit.word in ("add",):
            return knob, "set", value
        direction = _flip(knob, d.direction)
        return knob, direction, value if d.sense != "speed" else None
    if by_one and knob.type == "int":
        return knob, _flip(knob, "up"), 1.0
    if d is None:
        return None, "", None
    return knob, _flip(knob, d.direction), None


def _flip(knob: KnobLike, direction: str) -> str:
    if not knob.inverse:
        return direction
    return "down" if direction == "up" else "up"


def _knob_change(knob: KnobLike, direction: str, value: float | None, span: tuple[int, int], text: str,
                 via: str = "") -> Change:
    return Change("knob", knob.id, direction, value, span, text, (knob.role,), (knob.table,), via)  # type: ignore[arg-type]


def _theme(src: str, a: int, b: int, lang: str, toks: Sequence[Token], knob_made: bool) -> str | None:
    """The theme a clause names (its theme words, or the setting/tone the brief reader finds), None if none (a theme
    marker alone, "a new look", names none: the clause stays uninterpreted)."""
    words = find(src, a, b, lang, toks, word_list(lang, "theme_words"))
    markers = find(src, a, b, lang, toks, word_list(lang, "theme_markers"))
    clause = src[a:b]
    if lang == "zh":
        items, _ = _zh_items(clause, list(zh_tokens(clause)), [], frozenset())
    else:
        items, _ = _en_items(clause, list(en_tokens(clause)), [], frozenset())
    setting = [i for i in items if i.kind in ("setting", "tone")]
    if words:
        lo, hi = min(h.start for h in words), max(h.end for h in words)
        return src[lo:hi].strip()
    if setting and (markers or not knob_made):
        return setting[0].term if lang == "en" else setting[0].name
    return None


def _known(src: str, a: int, b: int, lang: str, toks: Sequence[Token], genre: GenreLike, pack: PackLike) -> str:
    """The thing of a clause the reader knows — another genre's cue or knob noun ("lives" in a game with none), a
    noun or mechanic verb of its word lists — as written; "" when none."""
    clause = src[a:b]
    cues = {g: c for g, c in pack.genre_cues().items() if g != genre.id}
    scores, words = _score(list(toks), clause, lang, cues)
    if scores:
        best = max(scores, key=lambda g: scores[g])
        return ", ".join(words[best][:3])
    others = {n for g, other in pack.genres.items() if g != genre.id for k in getattr(other, "adjust", ())
              for n in (k.nouns_zh if lang == "zh" else k.nouns)}
    hits = find(src, a, b, lang, toks, others)
    if hits:
        return ", ".join(h.word for h in hits)
    mech = set(map(str, _frames()["zh"]["mechanic"])) if lang == "zh" else _en_sets()["mechanic"]
    for t in toks:
        if (t.lemma in mech if lang == "en" else t.text in mech or understood_zh(t)) or \
                category(t.lemma if lang == "en" else t.text, lang):
            return src[t.start:b].strip()
    return ""


# --- across clauses ---------------------------------------------------------------------------------------------------

def _settle(acc: _Acc) -> None:
    """Contradictions across the follow-up, duplicates dropped, said-outright knob changes over difficulty ones."""
    changes = acc.changes
    vias = {c.via for c in changes if c.via}
    if {"harder", "easier"} <= vias:
        a = next(c for c in changes if c.via == "harder")
        b = next(c for c in changes if c.via == "easier")
        acc.contradictions.append(Contradiction(a, b, "the follow-up asks for the game to be both harder and easier"))
        changes = [c for c in changes if not c.via]
    said = {c.target for c in changes if c.kind == "knob" and not c.via}
    changes = [c for c in changes if not (c.via and c.target in said)]
    kept: list[Change] = []
    dropped: set[tuple[str, str]] = set()
    for c in changes:
        same = [k for k in kept if k.kind == c.kind and (c.kind != "knob" or k.target == c.target)]
        if c.kind == "knob":
            clash = next((k for k in same if _clash(k, c)), None)
            if clash is not None:
                why = (f"{c.target} is asked to go both {clash.direction} and {c.direction}"
                       if clash.direction != c.direction else
                       f"{c.target} is asked to be both {clash.value:g} and {c.value:g}")
                acc.contradictions.append(Contradiction(clash, c, why))
                dropped.add(("knob", c.target))
                continue
            if any(k.direction == c.direction and k.value == c.value for k in same):
                continue
        elif same and c.kind in ("theme", "genre"):
            if any(k.target == c.target for k in same):
                continue
            acc.contradictions.append(Contradiction(same[0], c, f"two different {c.kind}s asked: "
                                                                f"{same[0].target!r} and {c.target!r}"))
            dropped.add((c.kind, ""))
            continue
        kept.append(c)
    acc.changes = [c for c in kept if (c.kind, c.target if c.kind == "knob" else "") not in dropped]


def _clash(a: Change, b: Change) -> bool:
    if {a.direction, b.direction} == {"up", "down"}:
        return True
    if {a.direction, b.direction} <= {"set"}:
        return a.value != b.value
    if "off" in (a.direction, b.direction) and a.direction != b.direction:
        return True
    return False



def describe(change: Change, genre: GenreLike, lang: str = "en") -> str:
    """A change as a requirement's text, in the knob's own words (``what``/``what_zh``): "the number of lives: 5",
    "the enemies' speed: raised" (an ``inverse`` knob's lower number is raised speed), "a snowy theme"."""
    zh = lang == "zh"
    if change.kind == "theme":
        return (f"新的主题：{change.target}" if zh else f"a {change.target} theme") if change.target else \
            ("新的主题" if zh else "a new theme")
    if change.kind == "genre":
        return f"改成{change.target}游戏" if zh else f"the game becomes a {change.target} game"
    knob = next((k for k in genre.adjust if k.id == change.target), None)
    what = (knob.what_zh if zh else knob.what) if knob is not None else change.target
    if change.direction == "off":
        return f"{what}：去掉" if zh else f"{what}: removed"
    if change.direction == "set" and change.value is not None:
        value = f"{change.value / 1000:g} s" if knob is not None and knob.type == "ms" else f"{change.value:g}"
        return f"{what}：{value}" if zh else f"{what}: {value}"
    raised = (change.direction == "up") != bool(knob is not None and knob.inverse)
    if zh:
        return f"{what}：{'提高' if raised else '降低'}"
    return f"{what}: {'raised' if raised else 'lowered'}"
