"""The clicker genre's offline builder: a one-line brief into theme.json, upgrades.json and economy.json.

No network, no model: the domain (cookies, mining, space…) comes from the brief's words and `lexicon.yaml`, every
other choice from a `random.Random` seeded with the brief (same brief → byte-identical tables). Upgrades get
payback times that grow with their tier; the goal is then fitted by simulation (checks.simulate) so that a player
at the human click rate, playing the probe's rule, reaches it at a difficulty-dependent share of the time limit —
easy ≈ 50 %, normal ≈ 60 %, hard ≈ 72 % — while idling never does.
"""

from __future__ import annotations

import colorsys
import math
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tier2.packs.offline import (
    ascii_fold,
    brief_words,
    content_nouns,
    difficulty,
    hash_hue,
    palette_for,
    seeded,
    singular,
    slug,
    subtitle_from,
)
from tier2.validators.builder_gates import genre_at, hold

from . import checks, probe, sim

__all__ = ["MAX_GOAL_STEPS", "MIRROR", "TABLE_NAMES", "brief_target", "build_tables", "contrast", "hold_tables",
           "legible_palette", "load_lexicon", "nice", "nice_floor"]

TABLE_NAMES = ("theme.json", "upgrades.json", "economy.json")
BASE_COSTS = (10, 30, 80, 200, 450, 1000)
_SKIP = frozenset({"clicker", "click", "clicking", "idle", "incremental", "tap", "tapping", "upgrade", "prestige",
                   "game", "goal", "time", "limit", "button", "earn", "buy", "easy", "hard", "relaxing", "relaxed",
                   "cozy", "cosy", "gentle", "casual", "calm", "difficult", "challenging", "brutal", "hardcore",
                   "tough", "intense", "fast", "frantic", "reach", "reaching", "million", "billion", "thousand",
                   "three", "minute", "second", "live", "lives", "clicks", "about", "make", "become"})
_FALLBACK_HEADS = ("Turbo", "Mega", "Pocket", "Tiny", "Super", "Button")
_PLAN = {  # difficulty → (upgrade count range, time limit range s, goal at this share of the limit, cost growth)
    "easy": ((4, 5), (70, 80), 0.5, (1.12, 1.15)),
    "normal": ((4, 6), (55, 65), 0.6, (1.15, 1.2)),
    "hard": ((5, 6), (45, 50), 0.72, (1.2, 1.25)),
}


@cache
def load_lexicon() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((Path(__file__).parent / "lexicon.yaml").read_text(encoding="utf-8"))
    return data


def nice(x: float) -> int:
    """``x`` rounded to two significant digits (at least 1): 1234 → 1200, 87.6 → 88."""
    if x < 1:
        return 1
    mag: int = 10 ** max(0, int(math.floor(math.log10(x))) - 1)
    return max(1, int(round(x / mag)) * mag)


def nice_floor(x: float) -> int:
    """``x`` rounded down to two significant digits (at least 1): 1299 → 1200."""
    if x < 10:
        return max(1, int(x))
    mag: int = 10 ** max(0, int(math.floor(math.log10(x))) - 1)
    return int(x // mag) * mag


def _luminance(hex_colour: str) -> float:
    def lin(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else float(((v + 0.055) / 1.055) ** 2.4)
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two #rrggbb colours."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def legible_palette(pal: dict[str, str], minimum: float = 4.5) -> dict[str, str]:
    """Lightens accent/good/bad until each reads at ``minimum``:1 on the panel and the background (text on
    both is already far above it)."""
    out = dict(pal)
    for key in ("accent", "good", "bad", "text"):
        r, g, b = (int(out[key][i:i + 2], 16) / 255 for i in (1, 3, 5))
        h, light, sat = colorsys.rgb_to_hls(r, g, b)
        while min(contrast(out[key], pal["panel"]), contrast(out[key], pal["background"])) < minimum and light < 0.97:
            light = min(0.97, light + 0.02)
            out[key] = "#" + "".join(f"{round(c * 255):02x}" for c in colorsys.hls_to_rgb(h, light, sat))
    return out


def _title(brief: str, dom: dict[str, Any], rng: Any, fallback: str) -> str:
    """"<Brief noun> <suffix>": the noun as the brief spells it (cookies → Cookie, not Cooky)."""
    known = {singular(k + "s"): k for d in load_lexicon()["domains"].values() for k in d["keywords"]}
    nouns = [known.get(n, n) for n in content_nouns(brief, _SKIP)]
    nouns = [n for n in nouns if n in dom["keywords"]] or nouns  # the setting's own word first ("Cookie …")
    head = (rng.choice(nouns) if nouns else fallback).title()
    return f"{head} {rng.choice(dom['suffixes'])}"[:32]


def _domain(brief: str, lex: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    words = brief_words(brief)
    scores = {name: len(words & set(d["keywords"])) for name, d in lex["domains"].items()}
    best = max(scores, key=scores.__getitem__)
    name = best if scores[best] else "generic"
    return name, lex["domains"][name]


def _upgrades(dom: dict[str, Any], count: int, scale: int, growth: tuple[float, float], rng: Any,
              probe_rate: float) -> list[dict[str, Any]]:
    kinds = ["tap", "auto"] + [rng.choice(["tap", "auto", "auto"]) for _ in range(count - 2)]
    names = {"tap": rng.sample(dom["tap"], kinds.count("tap")), "auto": rng.sample(dom["auto"], kinds.count("auto"))}
    out: list[dict[str, Any]] = []
    for k, kind in enumerate(kinds):
        cost = nice(scale * BASE_COSTS[k] * rng.uniform(0.85, 1.15))
        payback = (3.0 + 1.3 * k) * rng.uniform(0.9, 1.15)
        gain = cost / payback
        name = names[kind].pop()
        per_click = max(scale, nice(gain / probe_rate)) if kind == "tap" else 0
        per_second = 0 if kind == "tap" else (nice(gain) if gain >= 10 else max(0.5, round(gain * 2) / 2))
        out.append({"id": slug(name) or f"upgrade_{k + 1}", "name": name, "cost": cost,
                    "cost_growth": round(rng.uniform(*growth), 2), "per_click": per_click, "per_second": per_second})
    return out


def _fit_goal(tables: dict[str, Any], share: float) -> int:
    """The largest two-digit goal the human-rate probe player reaches by ``share`` of the time limit."""
    eco = tables["economy.json"]
    deadline = share * eco["time_limit_ms"]

    def reached(goal: int) -> bool:
        eco["goal"] = goal
        run = checks.simulate(tables, checks.HUMAN_CLICKS_PER_S)
        return bool(run.won and run.time_ms <= deadline)

    eco["goal"] = 10**12
    lo, hi = int(eco["start_currency"]) + 1, int(checks.simulate(tables, checks.HUMAN_CLICKS_PER_S).earned) + 2
    while hi - lo > 1:  # largest reachable goal (reaching it is monotone in the goal but for rounding)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if reached(mid) else (lo, mid)
    goal = nice_floor(lo)
    while goal > eco["start_currency"] + 1 and not reached(goal):
        goal = nice_floor(goal - 1)
    eco["goal"] = goal
    return goal


_NUMBER = re.compile(r"\b(\d[\d,]*(?:\.\d+)?)\s*(k|m|b|thousand|million|billion)?\b"
                     r"|\b(?:a|one)\s+(thousand|million|billion)\b", re.I)
_MULT = {"k": 10**3, "thousand": 10**3, "m": 10**6, "million": 10**6, "b": 10**9, "billion": 10**9}


def brief_target(brief: str) -> int | None:
    """The goal a brief names ("reach a million", "500 cookies", "10k coins"), if any (100 ≤ n ≤ 10^12)."""
    for m in _NUMBER.finditer(ascii_fold(brief)):
        if m.group(3):
            value = float(_MULT[m.group(3).lower()])
        else:
            try:
                value = float(m.group(1).replace(",", "")) * _MULT.get((m.group(2) or "").lower(), 1)
            except ValueError:
                continue
        if 100 <= value <= 10**12:
            return nice_floor(value)
    return None


def _rescale(tables: dict[str, Any], factor: float) -> None:
    """Every amount of the economy times ``factor`` (rounded to two digits): the same game in bigger numbers."""
    eco = tables["economy.json"]
    eco["click_value"] = nice(eco["click_value"] * factor)
    eco["start_currency"] = nice(eco["start_currency"] * factor) if eco["start_currency"] else 0
    for u in tables["upgrades.json"]["upgrades"]:
        u["cost"] = nice(u["cost"] * factor)
        u["per_click"] = nice(u["per_click"] * factor) if u["per_click"] else 0
        u["per_second"] = nice(u["per_second"] * factor) if u["per_second"] else 0
    cheapest = min(u["cost"] for u in tables["upgrades.json"]["upgrades"])
    eco["start_currency"] = min(eco["start_currency"], cheapest - 1)


def build_tables(brief: str) -> dict[str, Any]:
    """The genre kit's builder entry (see the pack's docs/genre-kit.md)."""
    lex = load_lexicon()
    rng = seeded(brief, "clicker")
    name, dom = _domain(brief, lex)
    level = difficulty(brief)
    counts, limits, share, growth = _PLAN[level]
    scale = rng.choice([1, 1, 2, 5, 10])
    upgrades = _upgrades(dom, rng.randint(*counts), scale, growth, rng, probe.PROBE_CLICKS_PER_S)
    cheapest = min(u["cost"] for u in upgrades)
    economy: dict[str, Any] = {
        "start_currency": rng.choice([0, 0, min(cheapest - 1, scale * rng.randint(1, 5))]),
        "goal": 0, "time_limit_ms": 1000 * rng.randint(*limits), "click_value": scale,
        "seed": rng.randint(1, 2**31 - 1),
    }
    tables: dict[str, Any] = {"upgrades.json": {"upgrades": upgrades}, "economy.json": economy}
    economy["goal"] = _fit_goal(tables, share)
    target = brief_target(brief)
    if target is not None and not 0.8 <= target / economy["goal"] <= 1.25:
        _rescale(tables, 1.1 * target / economy["goal"])
        economy["goal"] = _fit_goal(tables, share)
    if target is not None and target <= economy["goal"]:
        economy["goal"] = target  # the brief's own number ("reach a million"), reachable by the same play
    hue = dom["hue"] if dom["hue"] is not None else hash_hue(brief)
    words = brief_words(brief)
    named = [c for c in dom["currency"] if c.split()[-1] in words or singular(c.split()[-1]) in words]
    currency = named[0] if named else rng.choice(dom["currency"])  # "cookies" when the brief says cookies
    verb = dom["verb"]
    theme = {
        "title": _title(brief, dom, rng, name if name != "generic" else rng.choice(_FALLBACK_HEADS)),
        "subtitle": subtitle_from(brief, f"{verb} {currency}, buy upgrades, beat the clock"),
        "currency": currency,
        "button_label": rng.choice(dom["button"]),
        "palette": legible_palette(palette_for((hue + rng.randint(-15, 15)) % 360, rng)),
        "texts": {"goal_prompt": f"{verb} {{goal}} {{currency}} in {{seconds}} seconds!",
                  "win": dom["win"], "lose": dom["lose"]},
    }
    tables["theme.json"] = theme
    return hold(genre_at(Path(__file__).parent), _candidates({t: tables[t] for t in TABLE_NAMES}), MIRROR)


#: the clicker's rules in Python, on which `hold` plays the latch split (docs/genre-kit.md, "builder.py")
MIRROR = sim.Play
#: how many lower goals are tried when the fitted one fails a gate (each 5 % below the last)
MAX_GOAL_STEPS = 8


def _candidates(tables: dict[str, Any]) -> Any:
    """The fitted tables, then the same game with a goal 5 %, 10 % … lower (never at or below the start money): a
    bounded, deterministic series for `hold` (the data gates and the latch split played on `sim.Play`)."""
    yield tables
    eco = tables["economy.json"]
    for k in range(1, MAX_GOAL_STEPS + 1):
        goal = nice_floor(eco["goal"] * (1 - 0.05 * k))
        if goal > eco["start_currency"]:
            yield {**tables, "economy.json": {**eco, "goal": goal}}


def hold_tables(tables: dict[str, Any]) -> dict[str, Any]:
    """``tables`` as they are (a follow-up's changed numbers: no other candidate is tried, so nothing the change asked
    for is undone) if they pass the gates `build_tables` holds; `GatesNotHeld` otherwise (`tier2.packs.knobs`)."""
    return dict(hold(genre_at(Path(__file__).parent), [tables], MIRROR))
