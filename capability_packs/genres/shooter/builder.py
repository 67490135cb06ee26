"""The shooter genre's offline builder: a one-line brief into the four data tables of an arcade shooter.

No network, no model: the domain (space, asteroids, sky, sea, bugs, spooky, robots or generic) comes from keywords in
``lexicon.yaml``, the difficulty from `tier2.packs.offline.difficulty`, every other choice from a ``random.Random``
seeded with sha256 of the normalised brief (same brief → byte-identical tables). Waves introduce one tougher enemy
type at a time; the numbers stay inside the bounds that ``checks.py`` proves beatable, idle-safe and losable.
"""

from __future__ import annotations

import colorsys
import copy
import math
import random
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tier2.packs.offline import (
    MIN_TEXT_CONTRAST,
    brief_words,
    contrast,
    difficulty,
    hash_hue,
    hsl,
    lives_from,
    normalise_brief,
    palette_for,
    seeded,
    slug,
    subtitle_from,
    title_from,
)
from tier2.validators.builder_gates import genre_at, hold

from . import checks

__all__ = ["MAX_EXTRA_ENEMIES", "PROFILES", "TABLE_NAMES", "adjust_count", "build_tables", "detect_domain",
           "hold_tables", "load_lexicon"]

TABLE_NAMES = ("theme.json", "player.json", "enemies.json", "waves.json")

#: per difficulty: lives, number of waves, enemies per wave, speed and fire-rate factors, ms between spawns
PROFILES: dict[str, dict[str, Any]] = {
    "easy": {"lives": 5, "waves": 3, "count": (4, 5), "speed": 0.85, "fire": 0.75, "spawn": (900, 1100)},
    "normal": {"lives": 4, "waves": 4, "count": (4, 5), "speed": 1.0, "fire": 1.0, "spawn": (780, 940)},
    "hard": {"lives": 3, "waves": 4, "count": (5, 6), "speed": 1.15, "fire": 1.2, "spawn": (680, 820)},
}

#: enemy tiers, weakest first: hp, radius, speed (px/s), score, sway (px), homing (px/s), fire interval (ms, 0: none)
_TIERS: tuple[dict[str, tuple[int, int]], ...] = (
    {"hp": (1, 1), "radius": (15, 17), "speed": (70, 84), "score": (10, 10), "sway": (0, 24), "homing": (0, 0),
     "fire_ms": (0, 0)},
    {"hp": (1, 1), "radius": (14, 16), "speed": (84, 98), "score": (20, 25), "sway": (24, 40), "homing": (0, 14),
     "fire_ms": (0, 0)},
    {"hp": (2, 2), "radius": (17, 19), "speed": (56, 68), "score": (40, 50), "sway": (10, 28), "homing": (10, 24),
     "fire_ms": (2800, 3600)},
    {"hp": (3, 3), "radius": (19, 21), "speed": (46, 56), "score": (75, 90), "sway": (0, 20), "homing": (0, 12),
     "fire_ms": (2300, 3000)},
    {"hp": (4, 4), "radius": (21, 23), "speed": (40, 48), "score": (140, 160), "sway": (0, 14), "homing": (0, 8),
     "fire_ms": (2000, 2600)},
)
_MAX_SPAWN_MS = 4000
#: palette entries drawn as text, on the panel or on the background
_TEXT_COLOURS = ("text", "accent", "good", "bad")
_WIN_TITLES = ("Victory!", "All waves cleared!", "Sector secure!", "You held the line!")
_LOSE_TITLES = ("Game over", "Overrun!", "Defeated", "Out of lives")


def _readable(colour: str, backgrounds: list[str]) -> str:
    """``colour`` lightened (same hue) until it reaches `MIN_TEXT_CONTRAST` on every one of the (dark) ``backgrounds``
    (`palette_for` sees to the background; this template also draws good/bad/text on the panel)."""
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, light, sat = colorsys.rgb_to_hls(r, g, b)
    out = colour
    while min(contrast(out, bg) for bg in backgrounds) < MIN_TEXT_CONTRAST and light < 1:
        light = min(1.0, light + 0.02)
        out = "#" + "".join(f"{round(c * 255):02x}" for c in colorsys.hls_to_rgb(h, light, sat))
    return out


@cache
def load_lexicon() -> dict[str, Any]:
    """The word lists (parsed once per process)."""
    data: dict[str, Any] = yaml.safe_load((Path(__file__).parent / "lexicon.yaml").read_text(encoding="utf-8"))
    return data


def detect_domain(brief: str) -> str:
    """The domain with most keywords in the brief (first listed wins a tie); "generic" when none matches."""
    words = brief_words(brief)
    domains = load_lexicon()["domains"]
    score = {name: len(words & set(dom["keywords"])) for name, dom in domains.items()}
    best = max(score, key=score.__getitem__)
    return best if score[best] else "generic"


def _between(rng: random.Random, lo_hi: tuple[int, int], factor: float = 1.0) -> int:
    return round(rng.randint(*lo_hi) * factor)


def _enemies(dom: dict[str, Any], n_types: int, prof: dict[str, Any], rng: random.Random,
             mult: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tier, (name, shape, colour) in enumerate(dom["enemies"][:n_types]):
        t = _TIERS[min(tier, len(_TIERS) - 1)]
        fire_ms = _between(rng, t["fire_ms"], 1 / prof["fire"])
        score_lo, score_hi = t["score"]
        score = (score_lo + 5 * rng.randint(0, (score_hi - score_lo) // 5)) * mult
        out.append({
            "id": slug(name)[:32] or f"enemy_{tier + 1}", "name": name[:16], "shape": shape, "color": colour,
            "hp": _between(rng, t["hp"]), "radius": _between(rng, t["radius"]),
            "speed": _between(rng, t["speed"], prof["speed"]), "score": score,
            "sway": _between(rng, t["sway"]), "sway_ms": rng.randint(18, 28) * 100,
            "homing": _between(rng, t["homing"]), "fire_ms": fire_ms,
            "shot_speed": _between(rng, (170, 220), prof["fire"]), "shot_radius": 5,
        })
    return out


def _waves(dom: dict[str, Any], enemies: list[dict[str, Any]], prof: dict[str, Any], rng: random.Random,
           mult: int) -> list[dict[str, Any]]:
    """Wave k brings in enemy type k (the toughest so far) alongside older ones; the last wave mixes them all."""
    n = prof["waves"]
    pool = list(dom["waves"])
    middle = pool[1:-1]
    rng.shuffle(middle)
    names = [pool[0], *middle[: n - 2], pool[-1]] if n >= 2 else pool[:1]
    waves: list[dict[str, Any]] = []
    for k in range(n):
        known = [e["id"] for e in enemies[: min(k + 1, len(enemies))]]
        total = rng.randint(*prof["count"]) + k // 2
        newest = known[-1]
        older = known[:-1]
        n_new = max(1, total // 2) if older else total
        spawns = [{"enemy": newest, "count": n_new}]
        rest = total - n_new
        picks = rng.sample(older, k=min(len(older), 2)) if older else []
        for i, eid in enumerate(picks):
            share = rest if i == len(picks) - 1 else rng.randint(1, max(1, rest - 1))
            if share > 0:
                spawns.append({"enemy": eid, "count": share})
                rest -= share
        # tougher waves come slower: the time between spawns grows with the wave's mean hit points
        mean_hp = sum(s["count"] * next(e["hp"] for e in enemies if e["id"] == s["enemy"]) for s in spawns) / total
        spawn_ms = round(rng.randint(*prof["spawn"]) * (1 + 0.3 * (mean_hp - 1)), -1)
        waves.append({"name": names[k][:24], "spawn_ms": int(spawn_ms),
                      "bonus": 50 * (k + 1) * mult, "spawns": spawns})
    return waves


def build_tables(brief: str) -> dict[str, Any]:
    """The four tables (``{"theme.json": {...}, ...}``) for ``brief``; deterministic, no I/O but the lexicon."""
    lex = load_lexicon()
    norm = normalise_brief(brief)
    rng = seeded(norm, "shooter")
    domain = detect_domain(brief)
    dom = lex["domains"][domain]
    prof = PROFILES[difficulty(brief)]
    mult = rng.choice((1, 1, 2, 5, 10))

    hue = int(dom["hue"]) if dom["hue"] is not None else hash_hue(norm)
    hue += rng.randint(-14, 14)
    palette = palette_for(hue, rng) | {
        "player": hsl(hue, 0.35, rng.uniform(0.82, 0.88)),
        "shot": hsl(rng.randint(45, 62), 0.95, rng.uniform(0.62, 0.7)),
        "enemy_shot": hsl(rng.randint(335, 358), 0.9, rng.uniform(0.6, 0.66)),
        "star": hsl(hue, 0.3, rng.uniform(0.62, 0.74)),
    }
    for key in _TEXT_COLOURS:
        palette[key] = _readable(palette[key], [palette["panel"], palette["background"]])
    player_name = rng.choice(dom["player"])
    skip = frozenset(lex["title_skip"])
    title = title_from(brief, list(dom["suffixes"]), rng, skip=skip, fallback=player_name.split()[0])
    head, _, rest = title.partition(" ")
    fixed = lex["singular_fixes"].get(head.lower())
    title = f"{fixed.title()} {rest}"[:32] if fixed else title
    fill = {"player": player_name, "enemies": dom["enemy_noun"]}
    theme = {
        "title": title, "subtitle": subtitle_from(brief, f"Shoot down every wave of {dom['enemy_noun']}", limit=72),
        "player_name": player_name, "enemy_noun": dom["enemy_noun"], "palette": palette,
        "texts": {"win_title": rng.choice(_WIN_TITLES), "win": dom["win"].format(**fill)[:120],
                  "lose_title": rng.choice(_LOSE_TITLES), "lose": dom["lose"].format(**fill)[:120]},
    }

    cooldown = rng.randint(19, 25) * 10
    shot_speed = rng.randint(54, 64) * 10
    player = {
        # the brief's own count when it names one ("three lives"); at least 2 (checks: idle_safe), at most 9
        "lives": min(9, max(2, lives_from(brief) or prof["lives"])), "speed": rng.randint(28, 34) * 10, "radius": 16,
        "fire_cooldown_ms": cooldown,
        "shot_speed": shot_speed, "shot_radius": 4,
        # enough shots in flight for a full-height volley at the cooldown (a cap, never the bottleneck)
        "max_shots": math.ceil(520 / shot_speed * 1000 / cooldown) + 1,
        "invulnerable_ms": rng.randint(12, 16) * 100,
    }
    n_types = min(len(dom["enemies"]), prof["waves"], rng.randint(3, 5))
    enemies = _enemies(dom, n_types, prof, rng, mult)
    wave_list = _waves(dom, enemies, prof, rng, mult)
    waves = {"seed": rng.randrange(2**32), "start_delay_ms": rng.randint(26, 34) * 100,
             "gap_ms": rng.randint(16, 24) * 100, "waves": wave_list}
    tables = {"theme.json": theme, "player.json": player, "enemies.json": {"enemies": enemies}, "waves.json": waves}
    _space(tables)
    return hold(genre_at(Path(__file__).parent), _candidates(tables))


def _space(tables: dict[str, Any]) -> None:
    """Space the spawns of any wave a lone gunner could not keep up with (checks.py's model, the same numbers)."""
    for i, wave in enumerate(tables["waves.json"]["waves"]):
        while checks.wave_overrun(tables, i)[0] > 0 and wave["spawn_ms"] < _MAX_SPAWN_MS:
            wave["spawn_ms"] += 20


#: at most this many enemies are added to the last wave to hold the gates (the schema caps a spawn at 40)
MAX_EXTRA_ENEMIES = 24


def _candidates(tables: dict[str, Any]) -> Any:
    """The derived tables, then the same game with 1, 2 … more enemies of the last wave's newest type, re-spaced:
    a bounded, deterministic series for `hold`. Many lives ("nine hearts") against few enemies leave a player who
    never shoots alive (``l1.data.losable``): the brief's lives are kept, the last wave grows instead."""
    yield tables
    for extra in range(1, MAX_EXTRA_ENEMIES + 1):
        grown = copy.deepcopy(tables)
        spawn = grown["waves.json"]["waves"][-1]["spawns"][0]
        if spawn["count"] + extra > 40:
            return
        spawn["count"] += extra
        _space(grown)
        yield grown


def hold_tables(tables: dict[str, Any]) -> dict[str, Any]:
    """``tables`` as they are (a follow-up's changed numbers: no other candidate is tried, so nothing the change asked
    for is undone) if they pass the gates `build_tables` holds; `GatesNotHeld` otherwise (`tier2.packs.knobs`)."""
    return dict(hold(genre_at(Path(__file__).parent), [tables]))


def adjust_count(tables: dict[str, Any], knob_id: str, n: int, brief: str) -> dict[str, Any]:
    """The ``waves`` knob (genre.yaml ``adjust:``): fewer waves keep the first ``n - 1`` and the finale (the last
    wave mixes every enemy type); more waves add, before the finale, copies of the wave before it with one more enemy
    per spawn each time, bonuses rising as `build_tables` sets them, then spaced as it spaces them (`_space`).
    Deterministic; ``brief`` is not needed. The caller re-holds the result (`hold_tables`)."""
    if knob_id != "waves":
        raise ValueError(f"the shooter builder has no count knob {knob_id!r}")
    out = copy.deepcopy(tables)
    waves = out["waves.json"]["waves"]
    if n < len(waves):
        out["waves.json"]["waves"] = waves = [*waves[: n - 1], waves[-1]] if n > 1 else waves[-1:]
    else:
        base = waves[-2] if len(waves) > 1 else waves[-1]
        for k in range(n - len(waves)):
            extra = copy.deepcopy(base)
            extra["name"] = f"{base['name'][:19]} {_ROMAN[min(k, len(_ROMAN) - 1)]}"
            for spawn in extra["spawns"]:
                spawn["count"] = min(40, spawn["count"] + k + 1)
            waves.insert(len(waves) - 1, extra)
    step = waves[0]["bonus"] if waves[0]["bonus"] > 0 else 50
    for k, wave in enumerate(waves):
        wave["bonus"] = step * (k + 1)
    _space(out)
    return out


_ROMAN = ("II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")

