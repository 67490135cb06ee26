"""The maze genre's offline builder: a one-line brief into theme.json, mazes.json and rules.json.

No network, no model: the setting (dungeon, arcade, space station…) comes from the brief's words and
`lexicon.yaml`; every other choice from a `random.Random` seeded with the brief (same brief → same bytes). Mazes are
carved by a depth-first backtracker, braided (some dead ends opened into loops), then get a start with a free cell
to its right, the exit at the far end, gems in dead ends, hazards that never cut a gem or the exit off, and enemies
patrolling straight runs away from the start. Every maze is kept only if checks.py passes and the genre probe, replayed
frame by frame on the game's rules (mazelib.play) at several timings, wins it without losing a life.
"""

from __future__ import annotations

import colorsys
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
    palette_for,
    seeded,
    singular,
    subtitle_from,
)
from tier2.validators.builder_gates import genre_at, hold

from . import checks, mazelib, probe

__all__ = ["TABLE_NAMES", "adjust_count", "build_tables", "carve", "contrast", "hold_tables", "legible_palette",
           "load_lexicon"]

TABLE_NAMES = ("theme.json", "mazes.json", "rules.json")
Cell = tuple[int, int]
_SKIP = frozenset({"maze", "mazes", "labyrinth", "collect", "collector", "corridor", "down", "top", "topdown", "gem",
                   "exit", "game", "level", "easy", "hard", "relaxing", "relaxed", "cozy", "cosy", "gentle", "casual",
                   "calm", "difficult", "challenging", "brutal", "hardcore", "tough", "intense", "fast", "frantic",
                   "three", "live", "lives", "collecting", "dodge", "dodging", "avoid", "avoiding", "find", "finding",
                   "reach", "reaching", "walk", "style", "every", "escape"})
#: difficulty → mazes, (w, h) of the first maze, gems, hazards, enemies per maze, lives, enemy step ms, time share
_PLAN: dict[str, dict[str, Any]] = {
    "easy": {"mazes": (1, 2), "size": (13, 9), "gems": (3, 4), "hazards": (1, 2), "enemies": (0, 1), "lives": 5,
             "step": (650, 750), "share": 0.4},
    "normal": {"mazes": (2, 2), "size": (13, 9), "gems": (3, 5), "hazards": (2, 3), "enemies": (1, 2), "lives": 3,
               "step": (520, 620), "share": 0.5},
    "hard": {"mazes": (3, 3), "size": (15, 11), "gems": (4, 6), "hazards": (3, 4), "enemies": (2, 3), "lives": 3,
             "step": (420, 500), "share": 0.6},
}
PROBE_TIMINGS = ((6, 0), (6, 7), (7, 3), (9, 11), (12, 5))  # (frames per action, lead frames) the probe must win at
MAX_ACTIONS_PER_MAZE = 180  # genre.yaml allows the probe 700 actions; 3 mazes stay well inside


@cache
def load_lexicon() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((Path(__file__).parent / "lexicon.yaml").read_text(encoding="utf-8"))
    return data


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two #rrggbb colours."""
    def lum(h: str) -> float:
        def lin(c: int) -> float:
            v = c / 255
            return v / 12.92 if v <= 0.03928 else float(((v + 0.055) / 1.055) ** 2.4)
        r, g, b = (int(h[i:i + 2], 16) for i in (1, 3, 5))
        return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def legible_palette(pal: dict[str, str], minimum: float = 4.5) -> dict[str, str]:
    """Lightens accent/good/bad/text until each reads at ``minimum``:1 on the panel and the background."""
    out = dict(pal)
    for key in ("accent", "good", "bad", "text"):
        r, g, b = (int(out[key][i:i + 2], 16) / 255 for i in (1, 3, 5))
        h, light, sat = colorsys.rgb_to_hls(r, g, b)
        while min(contrast(out[key], pal["panel"]), contrast(out[key], pal["background"])) < minimum and light < 0.97:
            light = min(0.97, light + 0.02)
            out[key] = "#" + "".join(f"{round(c * 255):02x}" for c in colorsys.hls_to_rgb(h, light, sat))
    return out


def carve(w: int, h: int, rng: random.Random, braid: float) -> list[list[str]]:
    """A perfect maze on odd coordinates (depth-first backtracker), then ``braid`` of its dead ends opened."""
    grid = [["#"] * w for _ in range(h)]
    stack: list[Cell] = [(1, 1)]
    grid[1][1] = "."
    while stack:
        x, y = stack[-1]
        nxt = [(x + dx, y + dy, dx, dy) for dx, dy in ((2, 0), (-2, 0), (0, 2), (0, -2))
               if 0 < x + dx < w - 1 and 0 < y + dy < h - 1 and grid[y + dy][x + dx] == "#"]
        if not nxt:
            stack.pop()
            continue
        nx, ny, dx, dy = rng.choice(nxt)
        grid[y + dy // 2][x + dx // 2] = grid[ny][nx] = "."
        stack.append((nx, ny))
    for x, y in _dead_ends(grid):
        if rng.random() < braid:
            walls = [(x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
                     if 0 < x + 2 * dx < w - 1 and 0 < y + 2 * dy < h - 1 and grid[y + dy][x + dx] == "#"]
            if walls:
                wx, wy = rng.choice(walls)
                grid[wy][wx] = "."
    return grid


def _open_around(grid: list[list[str]], x: int, y: int) -> int:
    return sum(grid[y + dy][x + dx] != "#" for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)))


def _dead_ends(grid: list[list[str]]) -> list[Cell]:
    return [(x, y) for y in range(1, len(grid) - 1) for x in range(1, len(grid[0]) - 1)
            if grid[y][x] != "#" and _open_around(grid, x, y) == 1]


def _runs(grid: list[list[str]], start: Cell, length: int) -> list[list[list[int]]]:
    """Straight runs of ``length`` free cells (no P/E/G/X) at least three cells from the start."""
    out = []
    h, w = len(grid), len(grid[0])
    for y in range(h):
        for x in range(w):
            for dx, dy in ((1, 0), (0, 1)):
                cells = [(x + k * dx, y + k * dy) for k in range(length)]
                if all(0 <= cx < w and 0 <= cy < h and grid[cy][cx] == "." and
                       abs(cx - start[0]) + abs(cy - start[1]) >= 4 for cx, cy in cells):
                    out.append([[cx, cy] for cx, cy in cells])
    return out


def _maze(rng: random.Random, size: tuple[int, int], plan: dict[str, Any], name: str, step_ms: int,
          pace_ms: int) -> dict[str, Any]:
    lib = mazelib
    w, h = size
    grid = carve(w, h, rng, braid=rng.uniform(0.25, 0.5))
    sy = rng.choice(range(1, h - 1, 2))
    start = (1, sy)
    grid[sy][2] = "."  # the start always has a free cell to its right (the genre gate presses "right")
    grid[sy][1] = "P"
    parsed = lib.parse("".join(r) for r in grid)
    far = _distances(parsed, start)
    exit_cell = max(far, key=lambda c: (far[c], c[1], c[0]))
    grid[exit_cell[1]][exit_cell[0]] = "E"
    ends = [c for c in _dead_ends(grid) if grid[c[1]][c[0]] == "." and far.get(c, 0) >= 4]
    rng.shuffle(ends)
    spots = list(dict.fromkeys(ends + sorted((c for c in far if grid[c[1]][c[0]] == "." and far[c] >= 5),
                                             key=lambda _: rng.random())))
    for gx, gy in _spread(spots, rng.randint(*plan["gems"]), [start, exit_cell], len(ends)):
        grid[gy][gx] = "G"
    for _ in range(rng.randint(*plan["hazards"])):
        cands = [c for c in far if grid[c[1]][c[0]] == "." and far[c] >= 3 and c != (2, sy)]
        for cx, cy in sorted(cands, key=lambda _: rng.random())[:12]:
            grid[cy][cx] = "X"
            g2 = lib.parse("".join(r) for r in grid)
            seen = lib.reachable(g2, g2.start)
            if all(g in seen for g in g2.gems) and g2.exit in seen:
                break
            grid[cy][cx] = "."
    rows = ["".join(r) for r in grid]
    tour = checks.tour_moves(lib.parse(rows)) or 0
    time_ms = 5000 * math.ceil(max(20_000, tour * pace_ms / plan["share"]) / 5000)
    maze: dict[str, Any] = {"name": name, "rows": rows, "time_ms": time_ms, "enemies": []}
    runs = _runs(grid, start, rng.randint(3, 5))
    rng.shuffle(runs)
    want = rng.randint(*plan["enemies"])
    for path in runs[:8]:
        if len(maze["enemies"]) >= want:
            break
        if any(c in (e["path"]) for e in maze["enemies"] for c in path):
            continue
        maze["enemies"].append({"path": path if rng.random() < 0.5 else path[::-1]})
        if not _probe_wins({"mazes.json": {"mazes": [maze]}, "rules.json": {"lives": 1, "enemy_step_ms": step_ms}},
                           PROBE_TIMINGS[:1]):
            maze["enemies"].pop()
    return maze


def _level(rng: random.Random, plan: dict[str, Any], i: int, place: str, rules: dict[str, Any]) -> dict[str, Any]:
    """Maze ``i`` (0-based): the first of 12 carvings that passes checks.py and the probe's wins (else the last one:
    `hold` then refuses the tables)."""
    w0, h0 = plan["size"]
    size = (w0 + 2 * rng.randint(0, 1) + 2 * i, h0 + 2 * rng.randint(0, 1))
    for _ in range(12):
        maze = _maze(rng, size, plan, place, rules["enemy_step_ms"], checks_pace())
        single = {"mazes.json": {"mazes": [maze]}, "rules.json": rules}
        if all(r["passed"] for r in checks.check_tables(single)) and _probe_wins(single):
            break
    return maze


def _spread(spots: list[Cell], k: int, taken: list[Cell], preferred: int) -> list[Cell]:
    """``k`` of ``spots`` far apart: each next one the farthest (Manhattan) from those taken, dead ends (the first
    ``preferred`` spots) before open floor."""
    chosen: list[Cell] = []
    for _ in range(min(k, len(spots))):
        pool = [c for c in spots[:preferred] if c not in chosen] or [c for c in spots if c not in chosen]
        best = max(pool, key=lambda c: min(abs(c[0] - t[0]) + abs(c[1] - t[1]) for t in [*taken, *chosen]))
        chosen.append(best)
    return chosen


def _distances(grid: Any, src: Cell) -> dict[Cell, int]:
    lib = mazelib
    dist, frontier = {src: 0}, [src]
    while frontier:
        nxt = []
        for c in frontier:
            for n in lib.neighbours(c):
                if n not in dist and grid.open(n):
                    dist[n] = dist[c] + 1
                    nxt.append(n)
        frontier = nxt
    return dist


def _probe_wins(tables: dict[str, Any], timings: tuple[tuple[int, int], ...] = PROBE_TIMINGS) -> bool:
    """The genre probe wins the tables without losing a life, within MAX_ACTIONS_PER_MAZE a maze, at every timing."""
    lib = mazelib
    bound = MAX_ACTIONS_PER_MAZE * len(tables["mazes.json"]["mazes"])
    for frames, lead in timings:
        res = lib.play(tables, lambda st: probe.plan_win(st, tables), frames, lead, bound)
        if res.outcome != "won" or res.hits:
            return False
    return True


def _domain(brief: str) -> tuple[str, dict[str, Any]]:
    lex = load_lexicon()
    words = brief_words(brief)
    scores = {name: len(words & set(d["keywords"])) for name, d in lex["domains"].items()}
    best = max(scores, key=scores.__getitem__)
    name = best if scores[best] else "generic"
    return name, lex["domains"][name]


_COLLECTIBLES = ("coins", "gems", "stars", "rubies", "diamonds", "crystals", "pearls", "keys", "apples", "cherries",
                 "cookies", "emeralds", "jewels", "gold coins", "treasures", "orbs", "shells", "eggs", "acorns")


def _gem_name(brief: str, dom: dict[str, Any], rng: random.Random) -> str:
    """What the G cells are: a collectible the brief names (rubies, coins…), else one of the setting's."""
    words = brief_words(brief)
    for name in [*dom["gem"], *_COLLECTIBLES]:
        last = name.split()[-1]
        if last in words or singular(last) in words:
            return str(name)
    return str(rng.choice(dom["gem"]))


def _title(brief: str, dom: dict[str, Any], rng: random.Random) -> str:
    known = {singular(k + "s"): k for d in load_lexicon()["domains"].values() for k in d["keywords"]}
    nouns = [known.get(n, n) for n in content_nouns(brief, _SKIP)]
    nouns = [n for n in nouns if n in dom["keywords"]] or nouns  # the setting's own word first ("Dungeon …")
    head = rng.choice(nouns).title() if nouns else rng.choice(["Hidden", "Twisty", "Secret", "Lost", "Shadow"])
    suffixes = [x for x in dom["suffixes"] if head.lower() not in x.lower()] or ["Maze"]
    return f"{head} {rng.choice(suffixes)}"[:32]


def build_tables(brief: str) -> dict[str, Any]:
    """The genre kit's builder entry (see the pack's docs/genre-kit.md)."""
    rng = seeded(brief, "maze")
    name, dom = _domain(brief)
    plan = _PLAN[difficulty(brief)]
    step_ms = 10 * (rng.randint(*plan["step"]) // 10)
    rules = {"lives": plan["lives"], "gem_score": rng.choice([10, 25, 50, 100]),
             "exit_score": rng.choice([100, 250, 500]), "time_bonus_per_s": rng.choice([1, 2, 5, 10]),
             "enemy_step_ms": step_ms, "move_repeat_delay_ms": 220, "move_repeat_ms": 110}
    places = rng.sample(dom["places"], plan["mazes"][1])
    count = rng.randint(*plan["mazes"])
    mazes = [_level(rng, plan, i, places[i], rules) for i in range(count)]
    hue = dom["hue"] if dom["hue"] is not None else hash_hue(brief)
    gem = _gem_name(brief, dom, rng)
    hazard, enemy = rng.choice(dom["hazard"]), rng.choice(dom["enemy"])
    theme = {
        "title": _title(brief, dom, rng),
        "subtitle": subtitle_from(brief, f"Collect the {gem}, dodge the {enemy}, find the way out"),
        "hero": rng.choice(dom["hero"]),
        "gem_name": gem,
        "palette": legible_palette(palette_for((hue + rng.randint(-15, 15)) % 360, rng)),
        "texts": {"goal_prompt": f"Collect all the {{gem}}, then reach the exit. Beware the {hazard} and {enemy}!",
                  "win": dom["win"], "lose": dom["lose"]},
    }
    tables = {"theme.json": theme, "mazes.json": {"mazes": mazes}, "rules.json": rules}
    # a level whose 12 tries all failed was kept as the last try: `hold` refuses such tables instead
    return hold(genre_at(Path(__file__).parent), [{t: tables[t] for t in TABLE_NAMES}], extra=_plays)


def _plays(tables: dict[str, Any]) -> list[str]:
    """The latch split's win and lose plays replayed on mazelib: the probe wins every level (at every timing of
    `PROBE_TIMINGS`) and its lose play loses within the genre's ``max_lose_actions``."""
    out = [] if _probe_wins(tables) else ["l1.latch_split: the genre probe's win play, replayed on mazelib, does not "
                                          "win every level"]
    bounds = genre_at(Path(__file__).parent).spec.probe
    moves: dict[str, Any] = {name: {"keys": []} for name in mazelib.DIRS}
    lost = mazelib.play(tables, lambda st: probe.lose_action(st, moves, tables), bounds.action_frames, 0,
                        bounds.max_lose_actions)
    return out + ([] if lost.outcome == "lost" else [f"l1.latch_split: the genre probe's lose play, replayed on "
                                                     f"mazelib, ends {lost.outcome!r} in {lost.actions} actions"])


def checks_pace() -> int:
    """The human pace the time limits are set from (checks.HUMAN_MS_PER_MOVE)."""
    return int(checks.HUMAN_MS_PER_MOVE)


def hold_tables(tables: dict[str, Any]) -> dict[str, Any]:
    """``tables`` as they are (a follow-up's changed numbers: no other candidate is tried, so nothing the change asked
    for is undone) if they pass the gates `build_tables` holds; `GatesNotHeld` otherwise (`tier2.packs.knobs`)."""
    return dict(hold(genre_at(Path(__file__).parent), [tables], extra=_plays))


def adjust_count(tables: dict[str, Any], knob_id: str, n: int, brief: str) -> dict[str, Any]:
    """The ``mazes`` knob (genre.yaml ``adjust:``): the first ``n`` mazes kept, or new ones carved after them the way
    `build_tables` carves one (the brief's setting and difficulty, the tables' rules; an RNG seeded with the brief and
    the maze's index: deterministic). The caller re-holds the result (`hold_tables`)."""
    if knob_id != "mazes":
        raise ValueError(f"the maze builder has no count knob {knob_id!r}")
    out = {**tables, "mazes.json": {**tables["mazes.json"], "mazes": list(tables["mazes.json"]["mazes"])}}
    mazes = out["mazes.json"]["mazes"]
    if n <= len(mazes):
        del mazes[n:]
        return out
    _name, dom = _domain(brief)
    plan = _PLAN[difficulty(brief)]
    taken = {m["name"] for m in mazes}
    for i in range(len(mazes), n):
        rng = seeded(brief, f"maze {i + 1}")
        place = next((p for p in dom["places"] if p not in taken), f"Maze {i + 1}")
        taken.add(place)
        mazes.append(_level(rng, plan, i, place, out["rules.json"]))
    return out

