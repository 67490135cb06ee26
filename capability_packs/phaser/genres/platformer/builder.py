"""The platformer's offline builder: a one-line brief into theme.json, physics.json and levels.json.

No network, no model: the setting comes from keywords in ``lexicon.yaml``, every other choice from an RNG seeded with
the brief (same brief → byte-identical tables). Physics numbers are picked first; the levels are then laid out
left to right (ground runs, pits, step-ups, spike strips, floating platforms) with every gap and rise a fraction of
what a jump can do under those numbers (`routes` computes it with the game's own integrator); each level is
kept only when `checks.check_tables` passes on it, so the tables are solvable by construction and by check.
"""

from __future__ import annotations

import colorsys
import copy
import functools
import math
import random
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tier2.packs.offline import (
    brief_words,
    content_nouns,
    difficulty,
    hash_hue,
    hsl,
    normalise_brief,
    palette_for,
    seeded,
    subtitle_from,
)
from tier2.validators.builder_gates import genre_at, hold

from . import checks, routes, sim

__all__ = ["MIRROR", "TABLE_NAMES", "adjust_count", "build_tables", "hold_tables", "load_lexicon"]

TABLE_NAMES = ("theme.json", "levels.json", "physics.json")
HEIGHT = 600
FLAG = (32, 64)
READABLE = 4.6  # WCAG contrast of every text colour on the panel and the background (4.5 is AA)
# per difficulty: levels, width range, lives, fraction of the jump used by gaps and rises, obstacle mix
_DIFF: dict[str, dict[str, Any]] = {
    "easy": {"levels": (1, 2), "width": (1500, 1900), "lives": 5, "gap": (0.3, 0.5), "rise": 0.45,
             "mix": {"gap": 4, "spikes": 2, "step": 3, "floaters": 1}, "coyote": 120, "buffer": 130},
    "normal": {"levels": (2, 2), "width": (1800, 2300), "lives": 3, "gap": (0.4, 0.62), "rise": 0.55,
               "mix": {"gap": 4, "spikes": 3, "step": 3, "floaters": 2}, "coyote": 90, "buffer": 110},
    "hard": {"levels": (3, 3), "width": (2100, 2600), "lives": 3, "gap": (0.5, 0.72), "rise": 0.62,
             "mix": {"gap": 4, "spikes": 4, "step": 2, "floaters": 3}, "coyote": 60, "buffer": 90},
}


@cache
def load_lexicon() -> dict[str, Any]:
    """The word lists (parsed once per process)."""
    return dict(yaml.safe_load((Path(__file__).parent / "lexicon.yaml").read_text(encoding="utf-8")))


def _setting(words: set[str], lex: dict[str, Any]) -> str:
    score = {k: len(words & set(v["keywords"])) for k, v in lex["settings"].items()}
    best = max(score, key=score.__getitem__)
    return best if score[best] else "generic"


def _physics(rng: random.Random, diff: str, words: set[str]) -> dict[str, Any]:
    d = _DIFF[diff]
    gravity = 10 * rng.randint(170, 215)
    rise = rng.randint(112, 140)  # px of the highest jump
    return {
        "steps_per_second": 60, "gravity": gravity,
        "jump_velocity": 10 * math.ceil(math.sqrt(2 * gravity * rise) / 10),
        "run_speed": 5 * rng.randint(42, 50) + (10 if diff == "hard" else 0),
        "max_fall_speed": 10 * rng.randint(85, 100), "coyote_ms": d["coyote"], "jump_buffer_ms": d["buffer"],
        "respawn_ms": 50 * rng.randint(12, 18), "air_jumps": 1 if words & {"double", "doublejump"} else 0,
        "player": {"w": 2 * rng.randint(11, 14), "h": 2 * rng.randint(16, 20)},
    }


class _Layout:
    """One level laid out left to right: ground runs, pits, steps, spikes, floating platforms and coins."""

    def __init__(self, rng: random.Random, diff: str, phys: dict[str, Any], routes: Any) -> None:
        self.rng, self.d, self.phys = rng, _DIFF[diff], phys
        ph = routes.sim.phys_from(phys)
        self.up, self.across = routes._reach(ph)
        self.routes, self.ph = routes, ph
        self.w, self.h = phys["player"]["w"], phys["player"]["h"]
        self.platforms: list[dict[str, int]] = []
        self.hazards: list[dict[str, int]] = []
        self.coins: list[tuple[float, float]] = []
        self.x = 0
        self.top = 16 * rng.randint(28, 32)

    def ground(self, length: int, top: int, coins: bool = True) -> None:
        self.platforms.append({"x": self.x, "y": top, "w": length, "h": HEIGHT - top})
        if coins:
            self.coin_row(self.x + 40, self.x + length - 40, top - self.h // 2, sure=not self.coins)
        self.x += length
        self.top = top

    def coin_row(self, x0: int, x1: int, y: int, sure: bool = False) -> None:
        n = min(3, max(0, (x1 - x0) // 60))
        if n and (self.rng.random() < 0.7 or sure):
            mid = (x0 + x1) // 2
            self.coins += [(mid + (i - (n - 1) / 2) * 34, y) for i in range(n)]

    def next_top(self) -> int:
        rise = int(self.up * self.d["rise"])
        return max(300, min(528, self.top + self.rng.choice((-1, 1)) * self.rng.randint(0, rise) // 8 * 8))

    def gap_for(self, rise: int) -> int:
        lo, hi = self.d["gap"]
        across = float(self.routes._max_across(self.ph, rise))
        return max(40, int(across * self.rng.uniform(lo, hi)) // 8 * 8)

    def arc_coin(self, x0: int, gap: int, top: int) -> None:
        if self.rng.random() < 0.8:
            self.coins.append((x0 + gap // 2, top - self.h - self.up * 0.35))

    def piece(self, kind: str) -> None:
        rng = self.rng
        if kind == "gap":
            top = self.next_top()
            gap = self.gap_for(self.top - top)
            self.arc_coin(self.x, gap, min(top, self.top))
            self.x += gap
            self.ground(rng.randint(22, 46) * 8, top)
        elif kind == "step":
            top = self.top - rng.randint(3, max(4, int(self.up * self.d["rise"]) // 8)) * 8 * rng.choice((1, 1, -1))
            self.ground(rng.randint(20, 40) * 8, max(300, min(528, top)))
        elif kind == "spikes":
            run, width = 96 + rng.randint(0, 6) * 8, 16 * rng.randint(2, max(2, int(self.across * 0.45) // 16))
            self.hazards.append({"x": self.x + run, "y": self.top - 16, "w": width, "h": 16})
            self.coins.append((self.x + run + width // 2, self.top - self.h - self.up * 0.45))
            self.ground(2 * run + width, self.top, coins=False)
        else:  # floaters: a wide pit bridged by one or two floating platforms
            for _ in range(rng.randint(1, 2)):
                top = max(300, self.top - rng.randint(0, int(self.up * self.d["rise"]) // 8) * 8)
                gap = self.gap_for(self.top - top)
                self.x += gap
                length = rng.randint(12, 18) * 8
                self.platforms.append({"x": self.x, "y": top, "w": length, "h": 20})
                self.coin_row(self.x + 16, self.x + length - 16, top - self.h // 2)
                self.x += length
                self.top = top
            top = self.next_top()
            self.x += self.gap_for(self.top - top)
            self.ground(rng.randint(22, 40) * 8, top)

    def build(self, width: int, index: int, name: str, time_per_px: float) -> dict[str, Any]:
        rng = self.rng
        self.ground(rng.randint(30, 42) * 8, self.top)
        start = {"x": 48, "y": self.platforms[0]["y"]}
        kinds = list(self.d["mix"])
        done: list[str] = []
        while self.x < width - 400:
            kind = rng.choice(("gap", "spikes")) if not done else rng.choices(kinds, list(self.d["mix"].values()))[0]
            if "gap" not in done and "floaters" not in done and self.x > width - 900:
                kind = "gap"  # every level has at least one pit
            self.piece(kind)
            done.append(kind)
        self.ground(rng.randint(40, 50) * 8, self.next_top())
        fx = self.x - 120
        exit_ = {"x": fx, "y": self.top - FLAG[1], "w": FLAG[0], "h": FLAG[1]}
        seconds = math.ceil((self.x * time_per_px * 3 + 15) / 5) * 5
        return {"id": f"level_{index + 1}", "name": name, "width": self.x, "height": HEIGHT,
                "time_limit_ms": max(30, seconds) * 1000, "start": start, "exit": exit_,
                "platforms": self.platforms, "hazards": self.hazards,
                "coins": [{"x": int(x), "y": int(y)} for x, y in self.coins]}


def _levels(rng: random.Random, diff: str, phys: dict[str, Any], names: list[str]) -> dict[str, Any]:
    d = _DIFF[diff]
    n = rng.randint(*d["levels"])
    rules = {"lives": d["lives"], "coin_score": rng.choice((5, 10, 10, 25, 50)),
             "exit_score": 50 * rng.randint(2, 10), "time_bonus_per_s": rng.randint(1, 5), "coin_radius": 10}
    levels = [_level(rng, diff, phys, rules, i, names[i]) for i in range(n)]
    return {**rules, "levels": levels}


def _level(rng: random.Random, diff: str, phys: dict[str, Any], rules: dict[str, Any], i: int,
           name: str) -> dict[str, Any]:
    """Level ``i`` (0-based) laid out under ``phys``: the first of 30 layouts that passes `checks.check_tables`."""
    width = rng.randint(*_DIFF[diff]["width"]) + 150 * i
    for _attempt in range(30):
        lv = _Layout(rng, diff, phys, routes).build(width, i, name, 1 / phys["run_speed"])
        trial = {**rules, "levels": [lv]}
        if all(r["passed"] for r in checks.check_tables({"levels.json": trial, "physics.json": phys})):
            return lv
    raise ValueError(f"no solvable layout for level {i + 1} under these physics")


def _names(lex: dict[str, Any], setting: dict[str, Any], rng: random.Random, n: int) -> list[str]:
    places, parts = list(setting["places"]), list(setting["parts"])
    rng.shuffle(places)
    rng.shuffle(parts)
    return [f"{places[i % len(places)]} {parts[i % len(parts)]}" for i in range(n)]


def _luminance(hex_colour: str) -> float:
    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _readable(colour: str, behind: list[str]) -> str:
    """``colour`` lightened (hue and saturation kept) until it reads at 4.6:1 on every colour of ``behind``."""
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, light, s = colorsys.rgb_to_hls(r, g, b)
    out = colour
    while min(contrast(out, c) for c in behind) < READABLE and light < 0.97:
        light = min(0.97, light + 0.02)
        out = hsl(h * 360, s, light)
    return out


def _theme(brief: str, rng: random.Random, lex: dict[str, Any], key: str, words: set[str]) -> dict[str, Any]:
    s = lex["settings"][key]
    hue = (s["hue"] if s["hue"] is not None else hash_hue(normalise_brief(brief))) + rng.randint(-15, 15)
    pal = palette_for(hue, rng)
    gh, gs = s["ground"]
    pal |= {"ground": hsl(gh + rng.randint(-8, 8), gs, rng.uniform(0.26, 0.32)),
            "ground_top": hsl(s["ground_top"] + rng.randint(-10, 10), 0.5, rng.uniform(0.42, 0.5)),
            "hazard": hsl(s["hazard_hue"] + rng.randint(-6, 6), 0.55, 0.68),
            "coin": hsl(rng.randint(42, 54), 0.9, 0.56), "player": hsl(hue + 180 + rng.randint(-30, 30), 0.7, 0.6),
            "flag": hsl(rng.randint(100, 140), 0.6, 0.55), "far": hsl(hue, 0.3, rng.uniform(0.17, 0.21))}
    for name in ("text", "accent", "good", "bad"):  # text colours: every one of them is set on the panel somewhere
        pal[name] = _readable(pal[name], [pal["panel"], pal["background"]])
    skip = frozenset(lex["settings"][key]["keywords"]) | frozenset(lex["skip_words"])
    nouns = content_nouns(brief, skip)
    head = rng.choice(nouns).title() if nouns else rng.choice(s["places"])
    hero_word = next((w for w in sorted(words) if w in set(lex["hero_words"])), None)
    hero = hero_word.title() if hero_word else rng.choice(s["heroes"])
    title = f"{head} {rng.choice(s['suffixes'])}"[:32]
    return {"title": title, "subtitle": subtitle_from(brief, f"Run, jump and reach the flag in {title}"),
            "hero": hero, "coin_name": rng.choice(s["coins"]), "palette": pal,
            "texts": {"win_title": rng.choice(lex["win_titles"]), "win": s["win"],
                      "lose_title": rng.choice(lex["lose_titles"]), "lose": s["lose"]}}


@functools.lru_cache(maxsize=32)
def _held(brief: str) -> dict[str, Any]:
    """The held tables of ``brief`` (cached: holding plays the latch split on the mirror, ~0.5 s)."""
    lex = load_lexicon()
    rng = seeded(brief, "platformer")
    words = brief_words(brief)
    key = _setting(words, lex)
    diff = difficulty(brief)
    phys = _physics(rng, diff, words | {w.replace("-", "") for w in normalise_brief(brief).split()})
    theme = _theme(brief, rng, lex, key, words)
    levels = _levels(rng, diff, phys, _names(lex, lex["settings"][key], rng, 3))
    tables = {"theme.json": theme, "levels.json": levels, "physics.json": phys}
    # every level was searched against checks.py already; `hold` adds the latch split played on the mirror
    return hold(genre_at(Path(__file__).parent), [tables], MIRROR)


def build_tables(brief: str) -> dict[str, Any]:
    """``{"theme.json": ..., "levels.json": ..., "physics.json": ...}`` for ``brief``; deterministic (a copy: callers
    may change what they get)."""
    return copy.deepcopy(_held(brief))


#: the platformer's rules in Python, on which `hold` plays the latch split (docs/genre-kit.md, "builder.py")
MIRROR = sim.Play


def hold_tables(tables: dict[str, Any]) -> dict[str, Any]:
    """``tables`` as they are (a follow-up's changed numbers: no other candidate is tried, so nothing the change asked
    for is undone) if they pass the gates `build_tables` holds; `GatesNotHeld` otherwise (`tier2.packs.knobs`)."""
    return dict(hold(genre_at(Path(__file__).parent), [tables], MIRROR))


def adjust_count(tables: dict[str, Any], knob_id: str, n: int, brief: str) -> dict[str, Any]:
    """The ``levels`` knob (genre.yaml ``adjust:``): the first ``n`` levels kept, or new ones laid out after them the
    way `build_tables` lays one out (the brief's setting and difficulty, the tables' physics and rules; an RNG seeded
    with the brief and the level's index: deterministic). The caller re-holds the result (`hold_tables`)."""
    if knob_id != "levels":
        raise ValueError(f"the platformer builder has no count knob {knob_id!r}")
    out = copy.deepcopy(tables)
    lv_table = out["levels.json"]
    levels = lv_table["levels"]
    if n <= len(levels):
        lv_table["levels"] = levels[:n]
        return out
    lex = load_lexicon()
    setting = lex["settings"][_setting(brief_words(brief), lex)]
    rules = {k: v for k, v in lv_table.items() if k != "levels"}
    taken = {lv["name"] for lv in levels}
    for i in range(len(levels), n):
        rng = seeded(brief, f"platformer level {i + 1}")
        name = next((x for x in _names(lex, setting, rng, 9) if x not in taken), f"Level {i + 1}")
        taken.add(name)
        levels.append(_level(rng, difficulty(brief), out["physics.json"], rules, i, name))
    return out

