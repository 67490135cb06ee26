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

Action = str | tuple[str, int] | None


def _num(v: Any, default: float) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) else default


def _player_numbers(tables: dict[str, Any]) -> tuple[float, float, float]:
    """(speed px/s, hit radius px, shot speed px/s) of the player's ship."""
    p = tables.get("player.json") if isinstance(tables.get("player.json"), dict) else {}
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
        for q in state.get("enemy_shots") or []:
            reach = _num(q.get("vy"), 200) * horizon_s + _num(q.get("r"), 5) + radius
            if 0 <= py - _num(q.get("y"), 0) <= reach and abs(_num(q.get("x"), 0) - x) < _num(q.get("r"), 5) + radius * 0.7 + 6:
                threats.append((py - _num(q.get("y"), 0), _num(q.get("x"), 0)))
    return min(threats)[1] if threats else None


def _path_clear(state: dict[str, Any], x: float, dx: float, frames: int, tables: dict[str, Any]) -> bool:
    """True when no point of a ``frames``-long move by ``dx`` (and its end) lies in a threat's column."""
    return all(danger(state, x + dx * i / frames, tables, 0.3 + i * FRAME_MS / 1000) is None
               for i in range(1, frames + 1))


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


def win_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> Action:
    if not all(a in actions for a in ("left", "right", "fire")) or not isinstance(state.get("player"), dict):
        return None
    _speed, _radius, shot_speed = _player_numbers(tables)
    x = _num(state["player"].get("x"), ARENA_W / 2)
    py = _num(state["player"].get("y"), 528)
    _s, radius, _s2 = _player_numbers(tables)
    # enemies already level with the ship cannot be shot any more (shots fly up from its nose)
    enemies = [e for e in state.get("enemies") or [] if isinstance(e, dict)
               and _num(e.get("y"), 0) + _num(e.get("r"), 16) * 0.5 < py - radius]
    target = max(enemies, key=lambda e: (_num(e.get("y"), 0), -abs(_num(e.get("x"), 0) - x)), default=None)
    aim = _num(target.get("x"), x) if target else ARENA_W / 2
    if target is not None:
        travel_s = max(0.0, py - _num(target.get("y"), 0)) / shot_speed
        r = _num(target.get("r"), 16)
        aim = min(ARENA_W - r, max(r, aim + _num(target.get("vx"), 0) * travel_s))
    if danger(state, x, tables) is not None:
        return _dodge(state, actions, tables, aim)
    if target is None:
        return (_move(state, aim - x, actions, tables) if abs(aim - x) > 40 else None) or ("wait", _IDLE_FRAMES)
    if abs(aim - x) > max(3.0, _num(target.get("r"), 16) * 0.4):
        return _move(state, aim - x, actions, tables) or _fire(state)
    return _fire(state)


def lose_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> Action:
    """Never shoot, never move: the enemies reach the bottom line (or ram the ship) until no life is left."""
    return ("wait", _LOSE_WAIT_FRAMES)
