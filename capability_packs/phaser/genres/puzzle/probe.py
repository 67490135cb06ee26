"""The puzzle genre probe: win by making the nearest matching swap each move; lose by making swaps that match
nothing (they bounce back and spend a move) until the moves run out.

Reads only the state snapshot (``grid``, ``cursor``, ``selected``, ``facing``, ``outcome``), the action vocabulary
and the tables (see the pack's docs/genre-kit.md). Deterministic: the same snapshot gives the same action.
"""

from __future__ import annotations

from typing import Any

from . import rules

__all__ = ["ACTIONS", "lose_action", "next_step", "reference_play", "win_action"]


_MOVES = (("left", -1, 0), ("right", 1, 0), ("up", 0, -1), ("down", 0, 1))
#: the template's action names (state.js ACTIONS) the probe uses
ACTIONS = ("up", "down", "left", "right", "rotate", "swap")


def _cell(v: Any) -> tuple[int, int] | None:
    if isinstance(v, dict) and isinstance(v.get("x"), int) and isinstance(v.get("y"), int):
        return v["x"], v["y"]
    return None


def next_step(state: dict[str, Any], matching: bool) -> str | None:
    """The next action towards the cheapest swap that makes a line (``matching``) or makes none: move the cursor
    onto one of its tiles (x first, then y), turn the partner onto the other, swap. None: no such swap."""
    grid, cursor, selected = state.get("grid"), _cell(state.get("cursor")), _cell(state.get("selected"))
    facing = state.get("facing")
    if not isinstance(grid, list) or not grid or cursor is None or selected is None or facing not in rules.STEP:
        return None
    size = len(grid)
    best: tuple[tuple[int, int, int, int, int], tuple[int, int], tuple[int, int]] | None = None
    for a, b in rules.valid_swaps(grid, matching=matching):
        for at, other in ((a, b), (b, a)):
            dist = abs(at[0] - cursor[0]) + abs(at[1] - cursor[1])
            turns = rules.rotations(at, facing, size, other) if dist == 0 else 0
            key = (dist, turns, at[1], at[0], rules.FACINGS.index(_dir(at, other)))
            if best is None or key < best[0]:
                best = (key, at, other)
    if best is None:
        return None
    _, at, other = best
    for name, dx, dy in _MOVES:
        if (dx and (at[0] - cursor[0]) * dx > 0) or (dy and at[0] == cursor[0] and (at[1] - cursor[1]) * dy > 0):
            return name
    return "swap" if selected == other else "rotate"


def _dir(a: tuple[int, int], b: tuple[int, int]) -> str:
    step = (b[0] - a[0], b[1] - a[1])
    return str(next(f for f, d in rules.STEP.items() if d == step))


def _act(state: dict[str, Any], actions: dict[str, Any], matching: bool) -> str | None:
    if state.get("outcome", "running") != "running":
        return None
    name = next_step(state, matching)
    return name if name is not None and name in actions else None


def win_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> str | None:
    """Move to the nearest swap that makes a line and make it; every such swap scores at least 3 tiles."""
    return _act(state, actions, matching=True)


def lose_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> str | None:
    """Make the nearest swap that makes no line (the board stays as it is) until no move is left."""
    return _act(state, actions, matching=False)


def reference_play(tables: dict[str, Any], matching: bool = True, max_actions: int = 5000,
                   target: int | None = None) -> dict[str, Any]:
    """Play the tables' game with this probe on the Python port of the rules (rules.Game): what the validator's
    win (``matching``) or lose play will do. ``target`` overrides goals.json's (e.g. a huge one, to see what
    the moves can score). Returns {outcome, score, actions, moves_used, score_at_action: [...]}."""
    if target is not None:
        tables = {**tables, "goals.json": {**tables["goals.json"], "target_score": target}}
    game = rules.Game(tables)
    vocab: dict[str, Any] = dict.fromkeys(ACTIONS, {})
    scores: list[int] = []
    while game.outcome == "running" and len(scores) < max_actions:
        name = _act(game.snapshot(), vocab, matching)
        if name is None:
            break
        game.act(name)
        scores.append(game.score)
    return {"outcome": game.outcome, "score": game.score, "actions": len(scores),
            "moves_used": int(tables["goals.json"]["moves"]) - game.moves_left, "score_at_action": scores}
