"""The maze genre's data checks, on the same grid rules as the game (template/src/state.js):

* ``maze_solvable`` — in every maze each gem and the exit can be reached from the start without crossing a hazard
  (``X``) or a wall (``#``): walls and hazards are the only cells a breadth-first search may not enter.
* ``maze_fair`` — what else a fair maze needs: the start has a free cell to its right (the genre gate presses
  "right" first), enemies patrol contiguous free cells and never come within two cells of the start (idling there
  is safe), and the time limit leaves room for a human: the collect-then-exit tour at `HUMAN_MS_PER_MOVE` (about
  3 moves a second, with thinking) fits within `TOUR_SHARE` of it.
"""

from __future__ import annotations

import re
from typing import Any

from . import mazelib

__all__ = ["HUMAN_MS_PER_MOVE", "TOUR_SHARE", "check_tables", "shape_problems", "tour_moves"]

HUMAN_MS_PER_MOVE = 350
TOUR_SHARE = 0.75
SAFE_START = 3  # Manhattan distance every enemy keeps from the start
MAX_W, MAX_H, MAX_MAZES, MAX_PATH = 31, 19, 3, 40  # as the schema
_ROW = re.compile(r"^[#.PEGX]+$")


def _name(i: int, maze: Any) -> str:
    label = maze.get("name") if isinstance(maze, dict) else None
    return f"mazes.json mazes[{i}]" + (f" ({label})" if isinstance(label, str) else "")


def shape_problems(tables: dict[str, Any]) -> list[str]:
    """What makes the mazes unreadable as grids (one P, one E, at least one G, rectangular rows of # . P E G X)."""
    mazes = tables.get("mazes.json", {}).get("mazes") if isinstance(tables.get("mazes.json"), dict) else None
    if not isinstance(mazes, list) or not 1 <= len(mazes) <= MAX_MAZES:
        return [f"mazes.json mazes: missing, empty or more than {MAX_MAZES}"]
    out: list[str] = []
    for i, m in enumerate(mazes):
        rows = m.get("rows") if isinstance(m, dict) else None
        if not isinstance(rows, list) or not rows or not all(isinstance(r, str) for r in rows):
            out.append(f"{_name(i, m)}.rows: missing or not a list of strings")
            continue
        if not (5 <= len(rows) <= MAX_H and 5 <= len(rows[0]) <= MAX_W):
            out.append(f"{_name(i, m)}.rows: 5-{MAX_H} rows of 5-{MAX_W} cells")
            continue
        if len({len(r) for r in rows}) != 1 or not all(_ROW.match(r) for r in rows):
            out.append(f"{_name(i, m)}.rows: rows must be equally long and use only # . P E G X")
            continue
        text = "".join(rows)
        for ch, what, ok in (("P", "one start P", text.count("P") == 1), ("E", "one exit E", text.count("E") == 1),
                             ("G", "at least one gem G", text.count("G") >= 1)):
            if not ok:
                out.append(f"{_name(i, m)}.rows: needs {what}, has {text.count(ch)}")
    return out


def tour_moves(grid: Any) -> int | None:
    """Moves of the greedy tour: nearest gem first, then the exit (None if something is unreachable)."""
    lib = mazelib
    here, left, total = grid.start, set(grid.gems), 0
    while True:
        goals = left or {grid.exit}
        path = lib.bfs(here, goals, grid.free)
        if path is None:
            return None
        total += len(path)
        here = path[-1] if path else here
        if not left:
            return total
        left.discard(here)


def _solvable(mazes: list[dict[str, Any]]) -> dict[str, Any]:
    lib = mazelib
    findings: list[str] = []
    for i, m in enumerate(mazes):
        grid = lib.parse(m["rows"])
        seen = lib.reachable(grid, grid.start)
        findings += [f"{_name(i, m)}: gem at ({x}, {y}) cannot be reached from the start {grid.start} without "
                     f"crossing a wall or hazard" for x, y in grid.gems if (x, y) not in seen]
        if grid.exit not in seen:
            findings.append(f"{_name(i, m)}: the exit at {grid.exit} cannot be reached from the start {grid.start} "
                            f"without crossing a wall or hazard")
    summary = (f"{len(mazes)} maze(s): every gem and exit reachable from the start" if not findings else
               f"{len(findings)} unreachable target(s)")
    return {"id": "maze_solvable", "passed": not findings, "summary": summary, "findings": findings}


def _fair(mazes: list[dict[str, Any]], rules: Any) -> dict[str, Any]:
    lib = mazelib
    findings: list[str] = []
    step = rules.get("enemy_step_ms") if isinstance(rules, dict) else None
    if not isinstance(step, int | float) or isinstance(step, bool) or step <= 0:
        findings.append("rules.json enemy_step_ms: missing or not a number > 0")
    for i, m in enumerate(mazes):
        grid = lib.parse(m["rows"])
        sx, sy = grid.start
        if not grid.open((sx + 1, sy)):
            findings.append(f"{_name(i, m)}: the cell right of the start {grid.start} is a wall or hazard")
        for j, e in enumerate(m.get("enemies") or []):
            path = e.get("path") if isinstance(e, dict) else None
            ok = isinstance(path, list) and 0 < len(path) <= MAX_PATH
            cells = [(c[0], c[1]) for c in path or [] if isinstance(c, list) and len(c) == 2
                     and all(isinstance(v, int) and not isinstance(v, bool) for v in c)] if ok else []
            if not cells or len(cells) != len(path or []):
                findings.append(f"{_name(i, m)}.enemies[{j}].path: missing or not [x, y] cells")
                continue
            bad = [c for c in cells if not grid.open(c)]
            gaps = [k for k in range(1, len(cells)) if abs(cells[k][0] - cells[k - 1][0])
                    + abs(cells[k][1] - cells[k - 1][1]) != 1]
            near = [c for c in cells if abs(c[0] - sx) + abs(c[1] - sy) < SAFE_START]
            findings += [f"{_name(i, m)}.enemies[{j}].path: {c} is a wall or hazard" for c in bad[:2]]
            findings += [f"{_name(i, m)}.enemies[{j}].path[{k}]: not next to the previous cell" for k in gaps[:2]]
            findings += [f"{_name(i, m)}.enemies[{j}].path: {c} is within {SAFE_START - 1} cells of the start"
                         for c in near[:1]]
        moves = tour_moves(grid)
        time_ms = m.get("time_ms")
        if moves is not None and isinstance(time_ms, int | float) and moves * HUMAN_MS_PER_MOVE > TOUR_SHARE * time_ms:
            findings.append(f"{_name(i, m)}.time_ms: {time_ms} is too short: the {moves}-move tour takes "
                            f"{moves * HUMAN_MS_PER_MOVE} ms at {HUMAN_MS_PER_MOVE} ms a move, over "
                            f"{TOUR_SHARE:.0%} of the limit")
    return {"id": "maze_fair", "passed": not findings,
            "summary": "start, enemy patrols and time limits are fair" if not findings else
            f"{len(findings)} fairness problem(s)", "findings": findings}


def check_tables(tables: dict[str, Any], options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    problems = shape_problems(tables)
    if problems:
        return [{"id": cid, "passed": False, "summary": "the mazes cannot be read as grids", "findings": problems}
                for cid in ("maze_solvable", "maze_fair")]
    mazes = tables["mazes.json"]["mazes"]
    return [_solvable(mazes), _fair(mazes, tables.get("rules.json"))]
