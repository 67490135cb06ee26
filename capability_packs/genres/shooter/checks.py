"""Data checks of the shooter's tables (L1 data gates ``l1.data.<id>``), computed from the numbers the game uses.

* ``solvable`` — a lone gunner that takes the enemies in spawn order (moving the mean distance between two random
  columns to reach each one, then firing at the gun's cooldown, each shot flying half the arena) kills every enemy
  at least 400 ms before it reaches the ship's line; the ship outruns the enemies' homing and can sidestep an
  enemy shot fired from the closest allowed range.
* ``idle_safe`` — nothing can cost a life in the first 2 s of Play and the player starts with at least 2 lives.
* ``losable`` — a player who never moves or shoots loses every life within a minute, even if each enemy that rams
  the ship during its invulnerability is free.

The arena geometry mirrors ``ARENA`` in ``template/src/state.js`` (a unit test keeps them equal).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["ARENA", "IDLE_MS", "LOSE_WITHIN_MS", "check_tables", "wave_overrun"]

ARENA = {"w": 800, "top": 44, "bottom": 568, "playerY": 528, "margin": 8, "fireGap": 140}
IDLE_MS = 2000
LOSE_WITHIN_MS = 60_000
_SAFETY_MS = 400  # the gunner must finish each kill this long before the enemy reaches the ship's line
_REACH_PX = (ARENA["w"] - 2 * ARENA["margin"]) / 3  # mean distance between two uniformly random columns
_DODGE_MARGIN_PX = 6

Result = dict[str, Any]


def _result(cid: str, findings: list[str], ok_summary: str) -> Result:
    summary = ok_summary if not findings else f"{len(findings)} problem(s): {findings[0]}"
    return {"id": cid, "passed": not findings, "summary": summary, "findings": findings}


def _types(tables: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in tables["enemies.json"]["enemies"]}


def _wave_list(wave: dict[str, Any], types: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [types[s["enemy"]] for s in wave["spawns"] for _ in range(int(s["count"]))]


def wave_overrun(tables: dict[str, Any], index: int) -> tuple[float, int, float, float]:
    """The lone gunner's worst lateness in wave ``index``: (ms late, enemy number, its deadline, gunner done) —
    late ≤ 0 means every enemy of the wave dies with the safety margin to spare."""
    p, types = tables["player.json"], _types(tables)
    wave = tables["waves.json"]["waves"][index]
    line = ARENA["playerY"] - p["radius"]
    free_at, worst = 0.0, (-math.inf, 0, 0.0, 0.0)
    for n, e in enumerate(_wave_list(wave, types)):
        spawn = n * wave["spawn_ms"]
        deadline = spawn + (line - (ARENA["top"] - e["radius"]) - e["radius"] / 2) / e["speed"] * 1000
        reach_ms = _REACH_PX / p["speed"] * 1000
        shoot_ms = (e["hp"] - 1) * p["fire_cooldown_ms"] + (line - ARENA["top"]) / 2 / p["shot_speed"] * 1000
        free_at = max(free_at, spawn + e["radius"] * 2 / e["speed"] * 1000) + reach_ms + shoot_ms
        late = free_at - (deadline - _SAFETY_MS)
        if late > worst[0]:
            worst = (late, n + 1, deadline, free_at)
    return worst


def _solvable(tables: dict[str, Any]) -> list[str]:
    p, types = tables["player.json"], _types(tables)
    out: list[str] = []
    for i, wave in enumerate(tables["waves.json"]["waves"]):
        late, n, deadline, done = wave_overrun(tables, i)
        if late > 0:
            out.append(f"waves.json waves[{i}] ({wave['name']}): enemy {n} reaches the ship's line "
                       f"{round(deadline)} ms into the wave, a lone gunner needs until {round(done)} ms "
                       f"(+{_SAFETY_MS} ms margin): slower enemies, fewer hit points or more time between spawns")
    for eid, e in types.items():
        if e["homing"] >= p["speed"] * 0.5:
            out.append(f"enemies.json {eid}.homing: {e['homing']} px/s is not under half the ship's speed {p['speed']}")
        if e["fire_ms"] > 0:
            sidestep_ms = (p["radius"] * 0.7 + e["shot_radius"] + _DODGE_MARGIN_PX) / p["speed"] * 1000
            flight_ms = ARENA["fireGap"] / e["shot_speed"] * 1000
            if sidestep_ms >= flight_ms / 2:
                out.append(f"enemies.json {eid}.shot_speed: a shot from {ARENA['fireGap']} px lands in "
                           f"{round(flight_ms)} ms, the ship needs {round(sidestep_ms)} ms to sidestep it "
                           "(must be under half)")
    return out


def _first_threat_ms(tables: dict[str, Any]) -> float:
    """Earliest game time at which anything could cost a life (an enemy at the ship's line or a shot reaching it)."""
    types, waves = _types(tables), tables["waves.json"]
    p = tables["player.json"]
    first = waves["waves"][0]
    best = math.inf
    for n, e in enumerate(_wave_list(first, types)):
        spawn = waves["start_delay_ms"] + n * first["spawn_ms"]
        ram = (ARENA["playerY"] - p["radius"] - ARENA["top"]) / e["speed"] * 1000
        best = min(best, spawn + ram)
        if e["fire_ms"] > 0:  # fires once fully inside the arena, at the earliest
            best = min(best, spawn + 2 * e["radius"] / e["speed"] * 1000
                       + (ARENA["playerY"] - ARENA["top"] - e["radius"]) / e["shot_speed"] * 1000)
    return best


def _idle_safe(tables: dict[str, Any]) -> list[str]:
    out: list[str] = []
    lives = tables["player.json"]["lives"]
    if lives < 2:
        out.append(f"player.json lives: {lives}; at least 2, so one early mistake never ends the game")
    first = _first_threat_ms(tables)
    if first <= IDLE_MS:
        out.append(f"waves.json start_delay_ms: the first threat can arrive {round(first)} ms into Play; "
                   f"it must come after {IDLE_MS} ms (raise start_delay_ms or slow the first wave)")
    return out


def _idle_loss_ms(tables: dict[str, Any]) -> float:
    """When an idle player has lost every life, counting each enemy as ramming the ship (the worst case: those that
    arrive during the invulnerability after a hit cost nothing)."""
    types, waves, p = _types(tables), tables["waves.json"], tables["player.json"]
    t0, lives, shield_until = float(waves["start_delay_ms"]), p["lives"], -math.inf
    for wave in waves["waves"]:
        arrivals = sorted(t0 + n * wave["spawn_ms"] + (ARENA["playerY"] - ARENA["top"]) / e["speed"] * 1000
                          for n, e in enumerate(_wave_list(wave, types)))
        for t in arrivals:
            if t >= shield_until:
                lives -= 1
                shield_until = t + p["invulnerable_ms"]
                if lives <= 0:
                    return float(t)
        t0 = arrivals[-1] + waves["gap_ms"] if arrivals else t0
    return math.inf


def _losable(tables: dict[str, Any]) -> list[str]:
    t = _idle_loss_ms(tables)
    if t <= LOSE_WITHIN_MS:
        return []
    total = sum(len(_wave_list(w, _types(tables))) for w in tables["waves.json"]["waves"])
    when = "never" if math.isinf(t) else f"only after {round(t)} ms"
    return [f"waves.json waves: a player who never shoots loses {when} ({total} enemies against "
            f"{tables['player.json']['lives']} lives); it must happen within {LOSE_WITHIN_MS} ms"]


def check_tables(tables: dict[str, Any], options: dict[str, Any] | None = None) -> list[Result]:
    """The three checks; malformed tables (the schemas catch them) fail every check instead of raising.
    ``options`` (validator options) changes nothing here."""
    checks = (("solvable", _solvable, "every wave can be shot down in time by a lone gunner"),
              ("idle_safe", _idle_safe, f"nothing can cost a life in the first {IDLE_MS} ms; at least 2 lives"),
              ("losable", _losable, f"an idle player loses every life within {LOSE_WITHIN_MS} ms"))
    out: list[Result] = []
    for cid, fn, ok in checks:
        try:
            findings = fn(tables)
        except (KeyError, TypeError, ValueError, ZeroDivisionError, AttributeError, IndexError) as exc:
            findings = [f"tables malformed ({type(exc).__name__}: {exc}); check them against the schemas first"]
        out.append(_result(cid, findings, ok))
    return out
