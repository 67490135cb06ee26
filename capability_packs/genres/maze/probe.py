"""The maze genre probe: win by walking breadth-first to the nearest gem, then to the open exit, keeping clear of
hazards and of patrolling enemies; lose by walking into hazards (or, with none reachable, letting the clock run out).

Reads only the state snapshot, the action vocabulary and the tables (see the pack's docs/genre-kit.md).
"""

from __future__ import annotations

from typing import Any

from . import mazelib

__all__ = ["SHORT_WAIT", "lose_action", "plan_win", "win_action"]

SHORT_WAIT = 12  # frames to wait for an enemy to move on
LONG_WAIT = 60  # frames to wait when there is nothing better to do (the lose play with no hazard)


def _cell(d: Any) -> tuple[int, int] | None:
    if isinstance(d, dict) and isinstance(d.get("x"), int) and isinstance(d.get("y"), int):
        return (d["x"], d["y"])
    return None


def _maze(state: dict[str, Any], tables: dict[str, Any]) -> dict[str, Any] | None:
    """The current maze when it is a readable grid (rectangular rows, at most 31 × 19), else None."""
    mazes = tables.get("mazes.json", {}).get("mazes", []) if isinstance(tables.get("mazes.json"), dict) else []
    level = state.get("level")
    maze = mazes[level] if isinstance(level, int) and isinstance(mazes, list) and 0 <= level < len(mazes) else None
    rows = maze.get("rows") if isinstance(maze, dict) else None
    if not isinstance(rows, list) or not 0 < len(rows) <= 19 or not all(isinstance(r, str) for r in rows) \
            or len({len(r) for r in rows}) != 1 or len(rows[0]) > 31:
        return None
    return maze


def _danger(state: dict[str, Any], maze: dict[str, Any], near: int) -> set[tuple[int, int]]:
    """Cells an enemy is on or reaches within ``near`` steps of its patrol, and the cells next to it."""
    lib = mazelib
    out: set[tuple[int, int]] = set()
    raw_enemies = maze.get("enemies")
    enemies: list[Any] = raw_enemies if isinstance(raw_enemies, list) else []
    paths: list[list[Any]] = []
    for e in enemies:
        path = e.get("path") if isinstance(e, dict) else None
        paths.append(path if isinstance(path, list) else [])
    for i, raw in enumerate(state.get("enemies") or []):
        pos = _cell(raw)
        if pos is None:
            continue
        out.add(pos)
        out.update(lib.neighbours(pos))
        path = [(c[0], c[1]) for c in paths[i] if isinstance(c, list) and len(c) == 2] if i < len(paths) else []
        for k, c in enumerate(path):
            if c == pos:
                out.update(path[max(0, k - near):k + near + 1])
    return out


def _step(src: tuple[int, int], dst: tuple[int, int]) -> str:
    d = (dst[0] - src[0], dst[1] - src[1])
    return str(next(name for name, v in mazelib.DIRS.items() if v == d))


def plan_win(state: dict[str, Any], tables: dict[str, Any]) -> str | tuple[str, int] | None:
    """The next move (or a short wait) of the win play; None when the state makes no sense for these tables."""
    lib = mazelib
    maze, me = _maze(state, tables), _cell(state.get("player"))
    if maze is None or me is None:
        return None
    grid = lib.parse(maze["rows"])
    left = {c for c in (_cell(g) for g in state.get("gems_left") or []) if c is not None}
    goals = left or {grid.exit}
    enemies = {c for c in (_cell(e) for e in state.get("enemies") or []) if c is not None}
    danger = _danger(state, maze, near=2)
    path = lib.bfs(me, goals - danger, grid.free - danger)
    if path:
        return _step(me, path[0])
    if me in danger and enemies:  # retreat: the open neighbour farthest from every enemy
        options = [n for n in lib.neighbours(me) if grid.open(n) and n not in enemies]
        if options:
            far = max(options, key=lambda n: min(abs(n[0] - e[0]) + abs(n[1] - e[1]) for e in enemies))
            return _step(me, far)
    close = _danger(state, maze, near=1)
    path = lib.bfs(me, goals - enemies, grid.free - enemies)
    if path and path[0] not in close:
        return _step(me, path[0])
    return ("wait", SHORT_WAIT)


def win_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> str | tuple[str, int] | None:
    step = plan_win(state, tables)
    if isinstance(step, str) and step not in actions:
        return None
    return step


def lose_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> str | tuple[str, int]:
    """Walk into the nearest hazard (never through the open exit); with none reachable, wait for the clock."""
    lib = mazelib
    maze, me = _maze(state, tables), _cell(state.get("player"))
    if maze is None or me is None:
        return ("wait", LONG_WAIT)
    grid = lib.parse(maze["rows"])
    shut = {grid.exit} if state.get("exit_open") or len(state.get("gems_left") or []) <= 1 else set()
    path = lib.bfs(me, grid.hazards, grid.free - shut)
    if path and _step(me, path[0]) in actions:
        return _step(me, path[0])
    return ("wait", LONG_WAIT)
