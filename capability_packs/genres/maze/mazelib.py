"""The maze genre's shared Python: grid parsing, breadth-first search, enemy patrols and a frame-exact replay of
the game's rules (template/src/state.js), used by probe.py, checks.py and builder.py (loaded by path)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = ["DIRS", "Cell", "Grid", "bfs", "enemy_cell", "parse", "play", "reachable"]

Cell = tuple[int, int]
DIRS: dict[str, Cell] = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
FRAME_MS = 1000.0 / 60


@dataclass(frozen=True)
class Grid:
    rows: tuple[str, ...]
    start: Cell
    exit: Cell
    gems: tuple[Cell, ...]
    hazards: frozenset[Cell]
    free: frozenset[Cell]  # not a wall, not a hazard
    walkable: frozenset[Cell]  # not a wall

    @property
    def w(self) -> int:
        return len(self.rows[0])

    @property
    def h(self) -> int:
        return len(self.rows)

    def at(self, c: Cell) -> str:
        x, y = c
        return self.rows[y][x] if 0 <= y < self.h and 0 <= x < len(self.rows[y]) else "#"

    def open(self, c: Cell) -> bool:
        """Walkable without harm: not a wall, not a hazard."""
        return c in self.free


def parse(rows: Iterable[str]) -> Grid:
    return _parse(tuple(rows))


@lru_cache(maxsize=64)
def _parse(rows: tuple[str, ...]) -> Grid:
    """The grid of a maze's rows; a missing P or E is (-1, -1), a cell outside the grid (checks.py reports it)."""
    found: dict[str, list[Cell]] = {"P": [], "E": [], "G": [], "X": [], "#": []}
    walkable: list[Cell] = []
    for y, row in enumerate(rows):
        for x, ch in enumerate(row):
            if ch in found:
                found[ch].append((x, y))
            if ch != "#":
                walkable.append((x, y))
    none = (-1, -1)
    hazards = frozenset(found["X"])
    return Grid(rows, (found["P"] or [none])[0], (found["E"] or [none])[0], tuple(found["G"]), hazards,
                frozenset(walkable) - hazards, frozenset(walkable))


def neighbours(c: Cell) -> list[Cell]:
    return [(c[0] + dx, c[1] + dy) for dx, dy in DIRS.values()]


def reachable(grid: Grid, src: Cell) -> set[Cell]:
    """Cells reachable from ``src`` without entering a wall or hazard."""
    seen, todo = {src}, deque([src])
    while todo:
        for n in neighbours(todo.popleft()):
            if n not in seen and n in grid.free:
                seen.add(n)
                todo.append(n)
    return seen


def bfs(src: Cell, goals: AbstractSet[Cell], passable: AbstractSet[Cell]) -> list[Cell] | None:
    """Shortest path src → the nearest goal through ``passable`` cells (src excluded, goal included — a goal need
    not be passable); None if no goal is reachable."""
    if src in goals:
        return []
    prev: dict[Cell, Cell] = {src: src}
    todo = deque([src])
    while todo:
        cur = todo.popleft()
        x, y = cur
        for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if n in prev or (n not in passable and n not in goals):
                continue
            prev[n] = cur
            if n in goals:
                path = [n]
                while prev[path[-1]] != src:
                    path.append(prev[path[-1]])
                return path[::-1]
            todo.append(n)
    return None


def enemy_cell(path: list[list[int]], ms: float, step_ms: float) -> Cell:
    """state.js `enemyCell`: back and forth along ``path``, one cell per ``step_ms`` of level time."""
    n = len(path)
    if n == 1:
        return (path[0][0], path[0][1])
    period = 2 * (n - 1)
    k = int(ms // step_ms) % period
    x, y = path[k if k < n else period - k]
    return (x, y)


@dataclass
class PlayResult:
    outcome: str
    actions: int
    hits: int
    levels_done: int
    notes: list[str] = field(default_factory=list)


def play(tables: dict[str, Any], policy: Callable[[dict[str, Any]], Any], action_frames: int, lead_frames: int = 0,
         max_actions: int = 2000) -> PlayResult:
    """Replay the game's rules frame by frame against ``policy(state) -> action | (action, frames) | None``, timed as
    the validator plays: a move lands on the next frame, then ``action_frames`` + 1 frames pass (key held, released);
    a wait lets its frames pass. ``lead_frames`` of level time pass before the first action."""
    mazes, rules = tables["mazes.json"]["mazes"], tables["rules.json"]
    step_ms, lives, level, score = float(rules["enemy_step_ms"]), int(rules["lives"]), 0, 0
    hits = 0

    def load(i: int) -> tuple[Grid, list[Cell], Cell]:
        g = parse(mazes[i]["rows"])
        return g, list(g.gems), g.start

    grid, gems_left, player = load(0)
    level_ms = lead_frames * FRAME_MS
    enemies = [enemy_cell(e["path"], level_ms, step_ms) for e in mazes[0]["enemies"]]

    def snap() -> dict[str, Any]:
        return {"player": {"x": player[0], "y": player[1]}, "player_x": player[0], "player_y": player[1],
                "gems": len(grid.gems) - len(gems_left), "gems_total": len(grid.gems),
                "gems_left": [{"x": x, "y": y} for x, y in gems_left], "exit_open": not gems_left,
                "enemies": [{"x": x, "y": y} for x, y in enemies], "lives": lives, "level": level,
                "levels": len(mazes), "time_left_ms": max(0.0, mazes[level]["time_ms"] - level_ms), "score": score,
                "outcome": "running"}

    for n in range(1, max_actions + 1):
        choice = policy(snap())
        if choice is None:
            return PlayResult("gave_up", n, hits, level)
        name, frames = (choice, action_frames) if isinstance(choice, str) else choice
        if name in DIRS:
            dx, dy = DIRS[name]
            target = (player[0] + dx, player[1] + dy)
            frames += 1
            if grid.at(target) != "#":
                player = target
                if grid.at(target) == "X":
                    hits, lives, player = hits + 1, lives - 1, grid.start
                elif target in gems_left:
                    gems_left.remove(target)
                if player in enemies:
                    hits, lives, player = hits + 1, lives - 1, grid.start
                elif player == grid.exit and not gems_left:
                    score += 1
                    if level + 1 == len(mazes):
                        return PlayResult("won", n, hits, level + 1)
                    level += 1
                    grid, gems_left, player = load(level)
                    level_ms = 0.0
                if lives <= 0:
                    return PlayResult("lost", n, hits, level)
        for _ in range(frames):
            level_ms += FRAME_MS
            enemies = [enemy_cell(e["path"], level_ms, step_ms) for e in mazes[level]["enemies"]]
            if player in enemies:
                hits, lives, player = hits + 1, lives - 1, grid.start
                if lives <= 0:
                    return PlayResult("lost", n, hits, level)
            if level_ms >= mazes[level]["time_ms"]:
                return PlayResult("lost", n, hits, level, ["time ran out"])
    return PlayResult("running", max_actions, hits, level)
