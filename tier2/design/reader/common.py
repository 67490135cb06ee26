"""The reader's shared ground: its limits, the frames data (``data/frames.yaml``) and the helpers every language's
extraction uses."""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from importlib import resources
from typing import Any

import yaml

from tier2.lexis import lemma

#: the least cue weight a genre needs before the reader names it
MIN_SCORE = 3.0
#: characters of a brief the reader reads (a brief says what it asks for up front; the rest is not read, so a
#: 100 000-character brief costs what a 4 000-character one does)
MAX_READ = 4000
_LIVING = ("creature", "person")
_DETERMINERS = frozenset({"a", "an", "the", "my", "your", "his", "her", "its", "their", "our", "this", "that", "some",
                          "every", "each", "no", "any"})


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
