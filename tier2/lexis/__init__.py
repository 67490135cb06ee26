"""Words tier2 understands offline: tokens with their offsets, lemmas, the language of a text, Chinese segmentation.

The shared bottom of the offline brief reader (`tier2.design.reader`) and the packs' offline title helpers
(`tier2.packs.offline`): both take a word as a name only when it is *understood* — listed in this package's word
lists (``data/en.yaml``, ``data/zh.yaml``) or, for Chinese, tagged a noun by jieba's dictionary. Pure: no I/O but
the package's own data files and jieba's dictionary (loaded once per process, only when a Chinese text is read).
No genre knowledge here (the pack owns it).
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

__all__ = ["Token", "category", "change_words", "detect_language", "en_tokens", "en_words", "injection_spans", "is_cjk",
           "lemma", "names_of", "number_value", "understood_en", "understood_zh", "without_injections", "zh_tokens",
           "zh_words"]

_LATIN = re.compile(r"[A-Za-z\u00C0-\u024F]+(?:['’-][A-Za-z\u00C0-\u024F]+)*|\d+")
_CJK = re.compile(r"[\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF]")


@dataclass(frozen=True)
class Token:
    """A word of the text: its surface form, lower-case lemma and [start, end) offsets into the text."""

    text: str
    lemma: str
    start: int
    end: int
    tag: str = ""  # jieba's part-of-speech flag for a Chinese segment ("n", "v", "x"...); "" for English


@cache
def _data(name: str) -> dict[str, Any]:
    text = resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    return dict(yaml.safe_load(text))


def en_words() -> dict[str, Any]:
    """The English word lists (``data/en.yaml``), parsed once."""
    return _data("en.yaml")


def change_words() -> dict[str, Any]:
    """The words a follow-up changes a built game with (``data/change.yaml``: comparatives, removal, difficulty,
    genre-change and theme cues, filler), by language, parsed once."""
    return _data("change.yaml")


def zh_words() -> dict[str, Any]:
    """The Chinese word lists (``data/zh.yaml``), parsed once."""
    return _data("zh.yaml")


@cache
def _categories(lang: str) -> dict[str, tuple[str, ...]]:
    """word -> the noun categories that list it (creature, person, vehicle, thing, hazard, place)."""
    out: dict[str, list[str]] = {}
    for cat, words in (en_words() if lang == "en" else zh_words())["nouns"].items():
        for w in words:
            out.setdefault(str(w), []).append(cat)
    return {w: tuple(c) for w, c in out.items()}


def category(word: str, lang: str = "en") -> tuple[str, ...]:
    """The noun categories of a lemma (English) or segment (Chinese); () when it is no noun tier2 knows."""
    return _categories(lang).get(word, ())


@cache
def _understood() -> frozenset[str]:
    w = en_words()
    return frozenset(_categories("en")) | frozenset(map(str, w["adjectives"])) | frozenset(map(str, w["tone"]))


def lemma(word: str) -> str:
    """The lower-case lemma of an English word: irregular forms from the word list, then plural/-ing/-ed rules."""
    w = word.lower().replace("’", "'")
    irregular = en_words()["irregular"]
    if w in irregular:
        return str(irregular[w])
    known = _understood()
    if w in known or len(w) <= 3:
        return w
    for suffix, repl in (("ies", "y"), ("ves", "f"), ("ches", "ch"), ("shes", "sh"), ("sses", "ss"), ("xes", "x"),
                         ("zzes", "zz"), ("ing", ""), ("ing", "e"), ("ied", "y"), ("ed", ""), ("ed", "e"), ("es", ""),
                         ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            base = w[: len(w) - len(suffix)] + repl
            if base in known:
                return base
            if suffix in ("ing", "ed") and len(base) >= 3 and base[-1] == base[-2]:  # hopping, hopped
                if base[:-1] in known:
                    return base[:-1]
    for suffix in ("ing", "ed"):  # an unknown verb form: the stem (stable, compared with the same rule)
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            base = w[: -len(suffix)]
            return base[:-1] if len(base) >= 3 and base[-1] == base[-2] and base[-1] not in "lsz" else base
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        return w[:-1]
    return w


def en_tokens(text: str) -> list[Token]:
    """The English (Latin-script) words and numbers of ``text`` with offsets; hyphenated words stay one token."""
    return [Token(m.group(0), lemma(m.group(0)), m.start(), m.end()) for m in _LATIN.finditer(text)]


def understood_en(lemma_: str) -> bool:
    """True when an English lemma is a word tier2's lists know (a noun, a describing word, a tone)."""
    return lemma_ in _understood()


def number_value(word: str) -> int | None:
    """"3" / "three" → 3 (None: not a number)."""
    if word.isdigit():
        return int(word)
    value = en_words()["number_words"].get(word.lower())
    return int(value) if value is not None else None


def is_cjk(ch: str) -> bool:
    return bool(_CJK.match(ch))


_JIEBA_LOCK = threading.Lock()


@cache
def _posseg() -> Any:
    """jieba's part-of-speech segmenter, its dictionary loaded once (imported lazily: English never pays for it)."""
    with _JIEBA_LOCK:
        import jieba
        import jieba.posseg

        jieba.setLogLevel(logging.WARNING)
        tok = jieba.posseg.POSTokenizer(jieba.Tokenizer())
        words = zh_words()
        for cat in words["nouns"].values():
            for w in cat:
                tok.tokenizer.add_word(str(w), freq=200000, tag="n")
        for w in words["function_words"]:
            tok.tokenizer.add_word(str(w), freq=200000, tag="u")
        for w in words["not_words"]:
            tok.tokenizer.del_word(str(w))
        tok.tokenizer.initialize()
        return tok


def zh_tokens(text: str) -> list[Token]:
    """jieba's segments of ``text`` with offsets and part-of-speech flags (whitespace dropped)."""
    out: list[Token] = []
    at = 0
    for pair in _posseg().cut(text):
        word, flag = pair.word, pair.flag
        start = text.find(word, at)
        if start < 0:
            start = at
        at = start + len(word)
        if word.strip():
            out.append(Token(word, word.lower() if word.isascii() else word, start, at, flag))
    return out


def understood_zh(token: Token) -> bool:
    """A Chinese segment tier2 may take as a name: listed in ``data/zh.yaml`` or a noun in jieba's dictionary."""
    if token.text in zh_words()["function_words"]:
        return False
    return bool(_categories("zh").get(token.text)) or (token.tag.startswith("n") and len(token.text) >= 2
                                                       and all(is_cjk(c) for c in token.text))


@cache
def _foreign() -> dict[str, frozenset[str]]:
    langs = _data("languages.yaml")["languages"]
    english = _understood() | frozenset(map(str, en_words()["function_words"]))
    return {name: frozenset(str(w) for w in words) - english for name, words in langs.items()}


def detect_language(text: str) -> tuple[str, str]:
    """``("en"|"zh"|"unreadable", name)``: Chinese when CJK characters dominate, English when its words are mostly
    English ones, else unreadable with the language (or script) named when one is recognised."""
    norm = unicodedata.normalize("NFKC", text)
    letters = [c for c in norm if c.isalpha()]
    if not letters:
        return "unreadable", "no words"
    cjk = sum(1 for c in letters if is_cjk(c))
    if cjk / len(letters) >= 0.3:
        return "zh", "Chinese"
    scripts = _data("languages.yaml")["scripts"]
    for name, (lo, hi) in scripts.items():
        if sum(1 for c in letters if lo <= ord(c) <= hi) / len(letters) >= 0.3:
            return "unreadable", str(name)
    words = [m.group(0).lower() for m in _LATIN.finditer(norm) if not m.group(0).isdigit()]
    if not words:
        return "unreadable", "no words"
    english = frozenset(map(str, en_words()["function_words"])) | frozenset(map(str, en_words()["verbs"])) | \
        frozenset(map(str, en_words()["number_words"]))
    en = sum(1 for w in words if w in english or understood_en(lemma(w)) or w.split("-")[0] in english)
    foreign = {name: sum(1 for w in words if w in vocab) for name, vocab in _foreign().items()}
    best = max(foreign, key=lambda k: foreign[k])
    if foreign[best] >= 2 and foreign[best] * 1.0 >= en * 0.5:
        return "unreadable", best
    if en / len(words) >= (0.35 if foreign[best] else 0.2):  # no other language's words: English names count less
        return "en", "English"
    return "unreadable", best if foreign[best] else "an unknown language"


@cache
def _injection_patterns() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.I) for p in _data("refuse.yaml")["injection"])


_CLAUSE_END = ".;!?\n。；！？，,"


def injection_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) of every clause of ``text`` that reads as prompt injection ("ignore all previous instructions",
    "reveal your system prompt"): from the clause's start to its end (a comma, a full stop, or "then ...")."""
    spans = []
    for pat in _injection_patterns():
        for m in pat.finditer(text):
            start = max(text.rfind(c, 0, m.start()) for c in _CLAUSE_END) + 1
            ends = [i for i in (text.find(c, m.end()) for c in _CLAUSE_END) if i >= 0]
            then = re.search(r"\b(?:then|and then|after that|also)\b|然后|再", text[m.end():])
            if then:
                ends.append(m.end() + then.start())
            spans.append((start, min(ends) if ends else len(text)))
    return sorted(spans)


def without_injections(text: str) -> str:
    """``text`` with its prompt-injection clauses blanked (same length: offsets stay valid)."""
    spans = injection_spans(text)
    return "".join(" " if any(a <= i < b for a, b in spans) else ch for i, ch in enumerate(text))


def names_of(text: str) -> list[str]:
    """The understood nouns of ``text`` in order, once each — what a title or a name may be made of: English
    lemmas tier2's word lists know as nouns; Chinese segments listed in ``zh.yaml`` or nouns in jieba's dictionary.
    Words of a prompt-injection clause and words tier2 does not know are never among them."""
    clean = without_injections(unicodedata.normalize("NFKC", text[:4000]))  # a title comes from the brief's start
    lang, _ = detect_language(clean)
    out: list[str] = []
    if lang == "zh":
        fw = set(map(str, zh_words()["function_words"]))
        for t in zh_tokens(clean):
            if t.text not in fw and understood_zh(t) and t.text not in out:
                out.append(t.text)
    elif lang == "en":
        for t in en_tokens(clean):
            if category(t.lemma) and t.lemma not in out:
                out.append(t.lemma)
    return out
