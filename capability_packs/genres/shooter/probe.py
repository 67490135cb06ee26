"""The shooter genre probe: win by lining up under the lowest enemy and firing (dodging what falls on the ship);
lose by waiting while the enemies break through.

Reads only the state snapshot, the action vocabulary and the tables (see the pack's docs/genre-kit.md).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["ARENA_W", "FRAME_MS", "danger", "lose_action", "win_action"]

ARENA_W = 800  # the contract's logical width
FRAME_MS = 1000 / 60
_MARGIN = 8
_MAX_MOVE_FRAMES = 8
_MAX_FIRE_FRAMES = 10
_IDLE_FRAMES = 12
_LOSE_WAIT_FRAMES = 30
_DISTANCE_WEIGHT = 0.25  # px of height one px of sideways travel costs when picking the next target

Action = str | tuple[str, int] | None


def _num(v: Any, default: float) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) else default


def _dicts(v: Any) -> list[dict[str, Any]]:
    """The object entries of a snapshot list (anything else in it is ignored)."""
    return [d for d in v if isinstance(d, dict)] if isinstance(v, list) else []


def _player_numbers(tables: dict[str, Any]) -> tuple[float, float, float]:
    """(speed px/s, hit radius px, shot speed px/s) of the player's ship."""
    raw = tables.get("player.json")
    p: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return _num(p.get("speed"), 300), _num(p.get("radius"), 16), _num(p.get("shot_speed"), 560)


def danger(state: dict[str, Any], x: float, tables: dict[str, Any], horizon_s: float = 0.45) -> float | None:
    """The x of the nearest enemy shot that would hit a ship at ``x`` within ``horizon_s`` (None: safe there).

    Enemies themselves are no threat to dodge: one that reaches the bottom line costs a life whether it rams the
    ship or slips past it, so the only answer to an enemy is to shoot it first."""
    _speed, radius, _shot = _player_numbers(tables)
    player = state["player"]
    py = _num(player.get("y"), 528)
    shielded = _num(player.get("invulnerable_ms"), 0) > horizon_s * 1000
    threats: list[tuple[float, float]] = []
    if not shielded:
        for q in _dicts(state.get("enemy_shots")):
            reach = _num(q.get("vy"), 200) * horizon_s + _num(q.get("r"), 5) + radius
            above, qx = py - _num(q.get("y"), 0), _num(q.get("x"), 0)
            if 0 <= above <= reach and abs(qx - x) < _num(q.get("r"), 5) + radius * 0.7 + 6:
                threats.append((above, qx))
    return min(threats)[1] if threats else None


def _hit_at(state: dict[str, Any], x: float, t_s: float, tables: dict[str, Any]) -> bool:
    """Would an enemy shot, flying on as it does, overlap a ship at ``x`` ``t_s`` seconds from now?"""
    _speed, radius, _shot = _player_numbers(tables)
    player = state["player"]
    if _num(player.get("invulnerable_ms"), 0) > t_s * 1000:
        return False
    py = _num(player.get("y"), 528)
    for q in _dicts(state.get("enemy_shots")):
        reach = _num(q.get("r"), 5) + radius * 0.7 + 4
        qy = _num(q.get("y"), -1e9) + _num(q.get("vy"), 200) * t_s
        if abs(_num(q.get("x"), -1e9) - x) < reach and abs(qy - py) < reach:
            return True
    return False


def _path_clear(state: dict[str, Any], x: float, dx: float, frames: int, tables: dict[str, Any]) -> bool:
    """True when no enemy shot meets the ship along a ``frames``-long move by ``dx``, nor in the 0.4 s after it."""
    return (all(not _hit_at(state, x + dx * i / frames, i * FRAME_MS / 1000, tables) for i in range(1, frames + 1))
            and all(not _hit_at(state, x + dx, (frames + k) * FRAME_MS / 1000, tables) for k in range(0, 25, 2)))


def _move(state: dict[str, Any], dx: float, actions: dict[str, Any], tables: dict[str, Any]) -> Action:
    """Move toward ``dx`` as far as the way is clear this action (None: not one frame of it is)."""
    speed, radius, _shot = _player_numbers(tables)
    name = "right" if dx > 0 else "left"
    x = _num(state["player"].get("x"), ARENA_W / 2)
    per_frame = speed * FRAME_MS / 1000
    frames = max(1, min(_MAX_MOVE_FRAMES, math.ceil(abs(dx) / per_frame)))
    lo, hi = _MARGIN + radius, ARENA_W - _MARGIN - radius
    while frames > 0:
        step = math.copysign(min(abs(dx), frames * per_frame), dx)
        step = min(hi, max(lo, x + step)) - x
        if name in actions and abs(step) >= 0.5 and _path_clear(state, x, step, frames, tables):
            return (name, frames)
        frames -= 2 if frames > 2 else 1
    return None


def _fire(state: dict[str, Any]) -> Action:
    """Hold fire until the gun is ready (one shot per action)."""
    wait = _num(state["player"].get("cooldown_ms"), 0)
    return ("fire", max(1, min(_MAX_FIRE_FRAMES, math.ceil(wait / FRAME_MS) + 1)))


def _dodge(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any], prefer: float) -> Action:
    """Step sideways out of the threat's column, the target's side first; fire if no way is clear."""
    _speed, radius, _shot = _player_numbers(tables)
    x = _num(state["player"].get("x"), ARENA_W / 2)
    for mult in (1, 2, 3):
        step = (radius * 2 + 14) * mult
        for d in sorted((-1, 1), key=lambda d: -d * (prefer - x)):
            move = _move(state, d * step, actions, tables)
            if move is not None and danger(state, x + d * step, tables) is None:
                return move
    return _fire(state)


def _aim(e: dict[str, Any], py: float, shot_speed: float) -> float:
    """Where to stand to hit ``e``: its x led by its sideways speed over the shot's flight."""
    r = _num(e.get("r"), 16)
    flight_s = max(0.0, py - _num(e.get("y"), 0)) / (shot_speed + _num(e.get("vy"), 80))
    return min(ARENA_W - r, max(r, _num(e.get("x"), ARENA_W / 2) + _num(e.get("vx"), 0) * flight_s))


def _shots_on(e: dict[str, Any], state: dict[str, Any], shot_speed: float) -> int:
    """How many of the player's shots in flight will meet ``e`` (on its current course)."""
    n = 0
    for sh in _dicts(state.get("shots")):
        gap = _num(sh.get("y"), -1e9) - _num(e.get("y"), 0)
        if gap <= 0:
            continue
        t = gap / (shot_speed + _num(e.get("vy"), 80))
        ex = _num(e.get("x"), 0) + _num(e.get("vx"), 0) * t
        n += abs(_num(sh.get("x"), -1e9) - ex) < _num(e.get("r"), 16) + 2
    return n


def _target(state: dict[str, Any], tables: dict[str, Any]) -> tuple[dict[str, Any], float] | None:
    """The enemy to shoot next and where to stand: the lowest one (nearest the ship's line), a far one counting
    as a little higher (so the ship does not shuttle between two at one height). Enemies level with the ship (shots
    fly up from its nose) and those the shots in flight will finish are skipped."""
    _speed, radius, shot_speed = _player_numbers(tables)
    x = _num(state["player"].get("x"), ARENA_W / 2)
    py = _num(state["player"].get("y"), 528)
    best: tuple[float, float, dict[str, Any]] | None = None
    for e in _dicts(state.get("enemies")):
        y = _num(e.get("y"), 0)
        if y >= py - radius - _num(e.get("r"), 16) * 0.5 or _shots_on(e, state, shot_speed) >= _num(e.get("hp"), 1):
            continue
        aim = _aim(e, py, shot_speed)
        score = y - _DISTANCE_WEIGHT * abs(aim - x)
        if best is None or score > best[0]:
            best = (score, aim, e)
    return (best[2], best[1]) if best else None


def win_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> Action:
    if not all(a in actions for a in ("left", "right", "fire")) or not isinstance(state.get("player"), dict):
        return None
    x = _num(state["player"].get("x"), ARENA_W / 2)
    chosen = _target(state, tables)
    aim = chosen[1] if chosen else ARENA_W / 2
    if danger(state, x, tables) is not None:
        return _dodge(state, actions, tables, aim)
    if chosen is None:
        return (_move(state, aim - x, actions, tables) if abs(aim - x) > 40 else None) or ("wait", _IDLE_FRAMES)
    if abs(aim - x) > max(3.0, _num(chosen[0].get("r"), 16) * 0.4):
        return _move(state, aim - x, actions, tables) or _fire(state)
    return _fire(state)


def lose_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> Action:
    """Never shoot, never move: the enemies reach the bottom line (or ram the ship) until no life is left."""
    return ("wait", _LOSE_WAIT_FRAMES)
