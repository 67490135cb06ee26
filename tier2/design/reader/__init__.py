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

Modules: `types` (`Reading`, `ContentItem`, the kinds), `common` (the limits, the frames data, shared helpers),
`genre` (scoring the cues, the decision), `english` and `chinese` (each language's content items); this module
reads a brief with them (`read_brief`). `followup` (with `followup_words`) reads a follow-up in a thread into typed
changes of the built game (`read_follow_up`: `FollowUp`, `Change`, `Unbuildable`, `Contradiction`, `Span`).
"""

from __future__ import annotations

from collections.abc import Collection

from tier2.design.reader.chinese import _zh_items
from tier2.design.reader.common import MAX_READ, MIN_SCORE, _frames, _inside, _norm
from tier2.design.reader.english import _en_items
from tier2.design.reader.followup import read_follow_up
from tier2.design.reader.genre import _decide, _score
from tier2.design.reader.types import (
    CONTENT_KINDS,
    ENTITY_KINDS,
    Change,
    ContentItem,
    Contradiction,
    FollowUp,
    GenreCues,
    Reading,
    Span,
    Unbuildable,
)
from tier2.lexis import category, detect_language, en_tokens, injection_spans, lemma, zh_tokens

__all__ = ["CONTENT_KINDS", "ENTITY_KINDS", "MAX_READ", "MIN_SCORE", "Change", "ContentItem", "Contradiction",
           "FollowUp", "GenreCues", "Reading", "Span", "Unbuildable", "read_brief", "read_follow_up"]


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
