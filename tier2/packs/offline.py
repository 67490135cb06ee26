"""Genre-agnostic helpers for a pack's offline table builders (``genres/<id>/builder.py``).

Reading a brief's words, a seeded RNG (same brief → same choices), titles, subtitles, palettes and a difficulty.
No genre knowledge here: each genre's builder owns its tables. Titles and names use only words tier2 understands
(`tier2.lexis`: its word lists, or a Chinese noun of jieba's dictionary for a Chinese brief); a word it does not
know ("juego") or a prompt-injection clause ("ignore all previous instructions") never becomes a title.
"""

from __future__ import annotations

import colorsys
import hashlib
import random
import re
import unicodedata

from tier2 import lexis

__all__ = ["MIN_TEXT_CONTRAST", "ascii_fold", "brief_tokens", "brief_words", "content_nouns", "contrast",
           "difficulty", "hash_hue", "hsl", "lives_from", "normalise_brief", "palette_for", "seeded", "singular",
           "slug", "subtitle_from", "title_from"]

_STOP = frozenset(
    "the and for with from that this where which while when then them they their there into your you our are "
    "was were has have had not but can will game games make made makes play player players simple small tiny "
    "little big fun short very some each every about over under what who how its it's like need needs".split())
_EASY = frozenset({"easy", "relaxing", "relaxed", "cozy", "cosy", "gentle", "casual", "calm", "kids", "simple"})
_HARD = frozenset({"hard", "difficult", "challenging", "brutal", "hardcore", "tough", "intense", "fast", "frantic"})


def normalise_brief(brief: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", str(brief)).split()).lower()


def ascii_fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def brief_tokens(brief: str) -> list[str]:
    return re.findall(r"[a-z]+", ascii_fold(brief).lower())


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


def brief_words(brief: str) -> set[str]:
    """The brief's words and their singulars (lower-case ascii)."""
    tokens = brief_tokens(normalise_brief(brief))
    return set(tokens) | {singular(t) for t in tokens}


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", ascii_fold(text).lower()).strip("_")


def hsl(hue: float, sat: float, light: float) -> str:
    r, g, b = colorsys.hls_to_rgb((hue % 360) / 360, light, sat)
    return "#" + "".join(f"{round(c * 255):02x}" for c in (r, g, b))


def hash_hue(text: str) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:6], 16) % 360


def seeded(brief: str, salt: str = "") -> random.Random:
    """A `random.Random` seeded by sha256 of the normalised brief (and ``salt``): same brief, same choices."""
    norm = normalise_brief(brief) + ("\x00" + salt if salt else "")
    return random.Random(int.from_bytes(hashlib.sha256(norm.encode("utf-8")).digest(), "big"))


def content_nouns(brief: str, skip: frozenset[str] = frozenset(), limit: int = 4) -> list[str]:
    """Content words of the brief that tier2 understands: English — singular, ascii, 4-12 letters, not stop words
    or ``skip``, and a noun of `tier2.lexis`'s word lists; a Chinese brief — its understood Chinese nouns. Words of
    a prompt-injection clause are never among them."""
    clean = lexis.without_injections(unicodedata.normalize("NFKC", str(brief)[:4000]))
    if lexis.detect_language(clean)[0] == "zh":
        return [n for n in lexis.names_of(clean) if n not in skip][:limit]
    out: list[str] = []
    for tok in brief_tokens(normalise_brief(clean)):
        word = singular(tok)
        if 4 <= len(word) <= 12 and re.search(r"[aeiouy]", word) and not {tok, word} & (_STOP | skip) \
                and word not in out and lexis.category(lexis.lemma(tok)):
            out.append(word)
    return out[:limit]


def title_from(brief: str, suffixes: list[str], rng: random.Random, skip: frozenset[str] = frozenset(),
               fallback: str = "Tiny") -> str:
    """"<Brief noun> <suffix>" (≤ 32 chars), e.g. "Asteroid Blitz" — different briefs, different titles. A Chinese
    brief gets a Chinese title from its own nouns ("纸飞机物语")."""
    nouns = content_nouns(brief, skip)
    if nouns and not nouns[0].isascii():
        head = rng.choice(nouns)
        return f"{head}{rng.choice(lexis.zh_words()['title_suffixes'])}"[:32]
    head = (rng.choice(nouns) if nouns else fallback).title()
    return f"{head} {rng.choice(suffixes)}"[:32]


def subtitle_from(brief: str, fallback: str, limit: int = 72) -> str:
    """The brief, tidied into a one-line subtitle (articles dropped, cut at a word under ``limit``)."""
    text = " ".join("".join(c for c in unicodedata.normalize("NFKC", brief) if c.isprintable()).split())
    for sep in (":", " where ", " in which ", " — ", " - ", "; "):
        at = text.lower().find(sep)
        if at >= 0 and len(text[at + len(sep):].split()) >= 3:
            text = text[at + len(sep):].strip()
            break
    text = re.sub(r"^(?:i|we|you)\s+", "", re.sub(r"^(?:a|an|the)\s+", "", text, flags=re.I), flags=re.I)
    text = re.sub(r"\bI\b", "you", re.sub(r"\bmy\b", "your", text))
    if len(text) > limit:
        text = text[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:-—") + "…"
    if len(text) < 3 or not any(c.isalpha() for c in text):
        return fallback
    return text[0].upper() + text[1:]


#: WCAG 2 contrast every palette colour drawn as text keeps against the background and the panel (``l1.legible``)
MIN_TEXT_CONTRAST = 4.6


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours (1..21)."""
    def lum(colour: str) -> float:
        c = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        c = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    dark, light = sorted((lum(a), lum(b)))
    return (light + 0.05) / (dark + 0.05)


def palette_for(hue: int, rng: random.Random) -> dict[str, str]:
    """Dark background and panel in ``hue``, near-white text, a complementary accent, green good, red bad. Text
    colours too dark to read on the background (and the accent, which titles panels, on the panel) are lightened
    until they reach `MIN_TEXT_CONTRAST`."""
    bg = (hue, rng.uniform(0.3, 0.45), rng.uniform(0.09, 0.13))
    panel = (hue, rng.uniform(0.25, 0.4), rng.uniform(0.2, 0.25))
    inks = {"accent": (hue + rng.randint(140, 220), rng.uniform(0.65, 0.8), rng.uniform(0.58, 0.66)),
            "text": (hue, rng.uniform(0.3, 0.45), rng.uniform(0.92, 0.95)),
            "good": (rng.randint(105, 135), 0.5, 0.6), "bad": (rng.randint(-8, 8), 0.65, 0.62)}
    pal = {"background": hsl(*bg), "panel": hsl(*panel)}
    for key, (h, sat, light) in inks.items():
        under = ("background", "panel") if key == "accent" else ("background",)
        while light < 0.96 and min(contrast(hsl(h, sat, light), pal[k]) for k in under) < MIN_TEXT_CONTRAST:
            light += 0.02
        pal[key] = hsl(h, sat, light)
    return pal


_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10}
_LIVES = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:lives|hearts|hit points)\b", re.I)


def lives_from(brief: str) -> int | None:
    """The number of lives the brief asks for ("three lives", "5 hearts"), None when it names none."""
    m = _LIVES.search(brief)
    if not m:
        return None
    word = m.group(1).lower()
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def difficulty(brief: str) -> str:
    """"easy", "normal" or "hard" from the brief's words."""
    words = brief_words(brief)
    if words & _HARD and not words & _EASY:
        return "hard"
    if words & _EASY and not words & _HARD:
        return "easy"
    return "normal"
