"""The match-3 rules in Python, for checks.py and probe.py: a line-for-line port of ``template/src/board.js`` (the
mulberry32 PRNG, the no-line deal, line finding, gravity and refill) and of the cursor and swap rules of
``template/src/state.js``. A unit test plays the same boards and key sequences with node and with this port and
compares them, so the checks judge the very board the game deals and the probe plans on the game's own rules.

A grid is row-major: ``grid[y][x]`` is a tile kind index.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FACINGS", "MAX_DEALS", "STEP", "Cell", "Game", "Grid", "deal_board", "effective_facing", "fill_board",
           "find_runs", "has_move", "initial_grid", "partner", "rng_next", "rotations", "swap_matches", "valid_swaps"]

MAX_DEALS = 64  # as board.js
_M = 0xFFFFFFFF
_DIRS = ((1, 0), (0, 1))
Grid = list[list[int]]
Cell = tuple[int, int]


def rng_next(s: int) -> tuple[float, int]:
    """mulberry32 as board.js ``rngNext``: (value in [0, 1), next uint32 state)."""
    a = (s + 0x6D2B79F5) & _M
    t = ((a ^ (a >> 15)) * (a | 1)) & _M
    t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & _M)) & _M
    return ((t ^ (t >> 14)) & _M) / 4294967296, a


FACINGS = ("right", "down", "left", "up")  # clockwise, as state.js
STEP = {"right": (1, 0), "down": (0, 1), "left": (-1, 0), "up": (0, -1)}
_OPPOSITE = {"right": "left", "left": "right", "up": "down", "down": "up"}


class _Rng:
    def __init__(self, seed: int) -> None:
        self.state = seed & _M

    def rand_int(self, n: int) -> int:
        v, self.state = rng_next(self.state)
        return int(v * n)


def _inside(size: int, x: int, y: int) -> bool:
    return 0 <= x < size and 0 <= y < size


def _at(grid: list[list[int | None]], x: int, y: int) -> int | None:
    return grid[y][x] if 0 <= x < len(grid) and 0 <= y < len(grid) else None


def _makes_line(grid: list[list[int | None]], x: int, y: int, k: int) -> bool:
    for dx, dy in _DIRS:
        for a, b in ((-2, -1), (-1, 1), (1, 2)):
            if _at(grid, x + a * dx, y + a * dy) == k and _at(grid, x + b * dx, y + b * dy) == k:
                return True
    return False


def fill_board(rng: _Rng, size: int, kinds: int, presets: dict[Cell, int] | None = None) -> Grid:
    presets = presets or {}
    grid: list[list[int | None]] = [[None] * size for _ in range(size)]
    for (x, y), k in presets.items():
        grid[y][x] = k
    for y in range(size):
        for x in range(size):
            if (x, y) in presets:
                continue
            allowed = [k for k in range(kinds) if not _makes_line(grid, x, y, k)]
            grid[y][x] = allowed[rng.rand_int(len(allowed))] if allowed else rng.rand_int(kinds)
    return [[int(k or 0) for k in row] for row in grid]


def find_runs(grid: Grid) -> list[list[Cell]]:
    """Every maximal horizontal or vertical run of 3+ equal tiles, as its cells."""
    size = len(grid)
    runs: list[list[Cell]] = []
    g: list[list[int | None]] = [list(r) for r in grid]
    for dx, dy in _DIRS:
        for y in range(size):
            for x in range(size):
                k = g[y][x]
                if k is None or _at(g, x - dx, y - dy) == k:
                    continue
                cells: list[Cell] = []
                while _at(g, x + len(cells) * dx, y + len(cells) * dy) == k:
                    cells.append((x + len(cells) * dx, y + len(cells) * dy))
                if len(cells) >= 3:
                    runs.append(cells)
    return runs


def _in_line(g: Grid, x: int, y: int) -> bool:
    """Is (x, y) part of a horizontal or vertical run of 3+?"""
    size, k = len(g), g[y][x]
    for dx, dy in _DIRS:
        n = 1
        for sign in (-1, 1):
            i = 1
            while _inside(size, x + sign * i * dx, y + sign * i * dy) and g[y + sign * i * dy][x + sign * i * dx] == k:
                n, i = n + 1, i + 1
        if n >= 3:
            return True
    return False


def swap_matches(grid: Grid, a: Cell, b: Cell) -> bool:
    """Does swapping the neighbours ``a`` and ``b`` (x, y) make a line? (The board has none before.)"""
    (ax, ay), (bx, by) = a, b
    grid[ay][ax], grid[by][bx] = grid[by][bx], grid[ay][ax]
    try:
        return _in_line(grid, ax, ay) or _in_line(grid, bx, by)
    finally:
        grid[ay][ax], grid[by][bx] = grid[by][bx], grid[ay][ax]


def _pairs(size: int) -> list[tuple[Cell, Cell]]:
    return [((x, y), (x + dx, y + dy)) for y in range(size) for x in range(size) for dx, dy in _DIRS
            if x + dx < size and y + dy < size]


def valid_swaps(grid: Grid, matching: bool = True) -> list[tuple[Cell, Cell]]:
    """Every neighbour pair whose swap makes a line (``matching=False``: makes none), row-major, right first."""
    return [(a, b) for a, b in _pairs(len(grid)) if swap_matches(grid, a, b) == matching]


def has_move(grid: Grid) -> bool:
    return any(swap_matches(grid, a, b) for a, b in _pairs(len(grid)))


def deal_board(seed: int, size: int, kinds: int) -> Grid:
    """The board ``createState`` deals from ``seed`` (board.js ``dealBoard``)."""
    rng = _Rng(seed)
    for _ in range(MAX_DEALS):
        grid = fill_board(rng, size, kinds)
        if has_move(grid):
            return grid
    return fill_board(rng, size, kinds, {(0, 0): 0, (1, 0): 0, (2, 1): 0})


def initial_grid(board: dict[str, Any]) -> Grid:
    """The opening board of a board.json: its ``layout``, else the deal from its seed."""
    layout = board.get("layout")
    if layout is not None:
        return [[int(k) for k in row] for row in layout]
    return deal_board(int(board["seed"]), int(board["size"]), len(board["kinds"]))


def effective_facing(cursor: Cell, facing: str, size: int) -> str:
    """The stored facing, or its opposite when that neighbour is off the board (state.js ``effectiveFacing``)."""
    dx, dy = STEP[facing]
    return facing if _inside(size, cursor[0] + dx, cursor[1] + dy) else _OPPOSITE[facing]


def partner(cursor: Cell, facing: str, size: int) -> Cell:
    dx, dy = STEP[effective_facing(cursor, facing, size)]
    return cursor[0] + dx, cursor[1] + dy


def _rotate(cursor: Cell, facing: str, size: int) -> str:
    i = FACINGS.index(effective_facing(cursor, facing, size))
    for _ in range(4):
        i = (i + 1) % 4
        dx, dy = STEP[FACINGS[i]]
        if _inside(size, cursor[0] + dx, cursor[1] + dy):
            break
    return FACINGS[i]


def rotations(cursor: Cell, facing: str, size: int, want: Cell) -> int:
    """How many presses of rotate turn the partner of ``cursor`` to ``want`` (a neighbour); 4 if it never does."""
    for n in range(4):
        if partner(cursor, facing, size) == want:
            return n
        facing = _rotate(cursor, facing, size)
    return 4


def _collapse(rng: _Rng, grid: Grid, cells: list[Cell], kinds: int) -> None:
    size = len(grid)
    g: list[list[int | None]] = [list(r) for r in grid]
    for x, y in cells:
        g[y][x] = None
    for x in range(size):
        column = [g[y][x] for y in range(size - 1, -1, -1) if g[y][x] is not None]
        for i, y in enumerate(range(size - 1, -1, -1)):
            g[y][x] = column[i] if i < len(column) else None
    for y in range(size):
        for x in range(size):
            grid[y][x] = rng.rand_int(kinds) if g[y][x] is None else int(g[y][x] or 0)


class Game:
    """The Play state of state.js, driven by action names (the probe's and the tests' model of the game)."""

    def __init__(self, tables: dict[str, Any]) -> None:
        board, goals = tables["board.json"], tables["goals.json"]
        self.kinds, self.goals = len(board["kinds"]), goals
        self.rng = _Rng(int(board["seed"]))
        layout = board.get("layout")
        self.grid = [list(r) for r in layout] if layout is not None else self._deal(int(board["size"]))
        c = int(board["size"]) // 2
        self.cursor, self.facing = (c, c), "right"
        self.moves_left, self.score, self.matches, self.outcome = int(goals["moves"]), 0, 0, "running"
        self.cascades = self.shuffles = 0

    def _deal(self, size: int) -> Grid:
        for _ in range(MAX_DEALS):
            grid = fill_board(self.rng, size, self.kinds)
            if has_move(grid):
                return grid
        return fill_board(self.rng, size, self.kinds, {(0, 0): 0, (1, 0): 0, (2, 1): 0})

    def snapshot(self) -> dict[str, Any]:
        size = len(self.grid)
        sel = partner(self.cursor, self.facing, size)
        return {"scene": "Play", "outcome": self.outcome, "grid": [list(r) for r in self.grid],
                "cursor": {"x": self.cursor[0], "y": self.cursor[1]}, "selected": {"x": sel[0], "y": sel[1]},
                "facing": effective_facing(self.cursor, self.facing, size), "moves_left": self.moves_left,
                "score": self.score, "matches": self.matches, "target": self.goals["target_score"],
                "cascades": self.cascades, "shuffles": self.shuffles}

    def act(self, name: str) -> None:
        size = len(self.grid)
        if self.outcome != "running":
            return
        if name in ("up", "down", "left", "right"):
            x, y = self.cursor[0] + STEP[name][0], self.cursor[1] + STEP[name][1]
            self.cursor = (x, y) if _inside(size, x, y) else self.cursor
        elif name == "rotate":
            self.facing = _rotate(self.cursor, self.facing, size)
        elif name == "swap":
            self._swap()
        elif name == "abandon":
            self.outcome = "abandoned"

    def _swap(self) -> None:
        (ax, ay), (bx, by) = self.cursor, partner(self.cursor, self.facing, len(self.grid))
        g = self.grid
        g[ay][ax], g[by][bx] = g[by][bx], g[ay][ax]
        self.moves_left -= 1
        runs, cascade = find_runs(g), 0
        if not runs:
            g[ay][ax], g[by][bx] = g[by][bx], g[ay][ax]
        while runs:
            cleared = list(dict.fromkeys(c for r in runs for c in r))
            self.score += len(cleared) * int(self.goals["points_per_tile"]) + cascade * int(self.goals["cascade_bonus"])
            self.matches += len(runs)
            self.cascades += cascade > 0
            _collapse(self.rng, g, cleared, self.kinds)
            runs, cascade = find_runs(g), cascade + 1
        if cascade and not has_move(g):
            self.grid = self._deal(len(g))
            self.shuffles += 1
        if self.score >= int(self.goals["target_score"]):
            self.outcome = "won"
        elif self.moves_left <= 0:
            self.outcome = "lost"


#: state.js ``ACTIONS``: the action vocabulary the game's hook reports
PLAY_ACTIONS: dict[str, dict[str, Any]] = {
    "start": {"keys": ["Enter", "Space"], "label": "start"},
    "up": {"keys": ["ArrowUp", "KeyW"], "label": "cursor up"},
    "left": {"keys": ["ArrowLeft", "KeyA"], "label": "cursor left"},
    "down": {"keys": ["ArrowDown", "KeyS"], "label": "cursor down"},
    "right": {"keys": ["ArrowRight", "KeyD"], "label": "cursor right"},
    "rotate": {"keys": ["KeyR", "KeyE"], "label": "turn the partner"},
    "swap": {"keys": ["Space", "KeyX"], "label": "swap the marked pair"},
    "abandon": {"keys": ["Escape"], "label": "quit to the menu"},
}


class Play:
    """`Game` driven the way the validator's latch play drives the page (the genre's mirror for
    `tier2.validators.builder_gates`): one key press per action, time changes nothing (no clock in this game)."""

    def __init__(self, tables: dict[str, Any]) -> None:
        self.tables = tables
        self.game = Game(tables)

    def actions(self) -> dict[str, Any]:
        return PLAY_ACTIONS

    def start(self) -> dict[str, Any]:
        self.game = Game(self.tables)
        return self.game.snapshot()

    def act(self, name: str, frames: int) -> dict[str, Any]:
        if name != "wait":
            self.game.act(name)
        return self.game.snapshot()

    def advance(self, ms: float) -> dict[str, Any]:
        return self.game.snapshot()

    def abandon(self) -> dict[str, Any]:
        return self.act("abandon", 4)
