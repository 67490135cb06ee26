"""The puzzle genre's data checks (L1 gates ``l1.data.<id>``), computed from the same numbers and the same deal as
the game (``rules.py`` ports board.js):

* ``board_start`` — the opening board (``layout``, else the deal from ``seed``) has no ready-made line and at least
  one swap that makes one;
* ``target_reachable`` — the genre probe's play (nearest matching swap, on the Python port of the rules: the
  very play the validator makes) reaches the target within the moves; or the target is at most
  ``moves × 3 × points_per_tile``, which any play matching on every move reaches (every matching swap clears at
  least 3 tiles and a redeal always leaves a matching swap);
* ``losable`` — the genre probe's lose play (swaps that make no line: they bounce back and spend a move) runs
  the moves out below the target;
* ``tiles_distinct`` — no two tile kinds share a shape or a colour (told apart without colour vision too).
"""

from __future__ import annotations

from typing import Any

from . import probe, rules

__all__ = ["MIN_LINE", "check_tables"]

MIN_LINE = 3  # the fewest tiles a matching swap clears
SIZES, KINDS, MAX_MOVES = (5, 10), (4, 8), 99  # the schemas' bounds (board.json size and kinds, goals.json moves)


def _result(gid: str, passed: bool, summary: str, findings: list[str] | None = None,
            evidence: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": gid, "passed": passed, "summary": summary, "findings": findings or [], "evidence": evidence or {}}


def _board_start(grid: list[list[int]], source: str) -> dict[str, Any]:
    runs = rules.find_runs(grid)
    moves = rules.valid_swaps(grid)
    findings = [f"board.json {source}: starts with a line of {len(r)} at {r[0]}" for r in runs[:5]]
    if not moves:
        findings.append(f"board.json {source}: no swap makes a line (the player cannot score)")
    if findings:
        return _result("board_start", False, f"the opening board ({source}) is not playable", findings)
    return _result("board_start", True, f"the opening board ({source}) has no line and {len(moves)} matching swap(s)",
                   evidence={"matching_swaps": len(moves), "first_swap": [list(c) for c in moves[0]]})


def _target(tables: dict[str, Any]) -> dict[str, Any]:
    goals = tables["goals.json"]
    moves, ppt, target = int(goals["moves"]), int(goals["points_per_tile"]), int(goals["target_score"])
    floor = moves * MIN_LINE * ppt
    play = probe.reference_play(tables)
    ev = {"target_score": target, "guaranteed_by_matching_every_move": floor, "reference_play": {
        k: play[k] for k in ("outcome", "score", "actions", "moves_used")}}
    if play["outcome"] == "won":
        return _result("target_reachable", True, f"target {target}: the reference play (nearest matching swap) reaches"
                       f" {play['score']} in {play['moves_used']} of {moves} moves", evidence=ev)
    if target <= floor and rules.has_move(rules.initial_grid(tables["board.json"])):
        return _result("target_reachable", True, f"target {target} ≤ {floor} ({moves} moves × {MIN_LINE} tiles × "
                       f"{ppt} points): matching on every move reaches it", evidence=ev)
    return _result("target_reachable", False, f"target {target} is out of reach: the reference play ends at "
                   f"{play['score']}, and no play is sure to score {target} (moves × {MIN_LINE} tiles × {ppt} points "
                   f"= {floor}, on a board with a matching swap)",
                   [f"goals.json target_score: {target} > {play['score']} (reference play)"], ev)


def _losable(tables: dict[str, Any], grid: list[list[int]]) -> dict[str, Any]:
    wasted = rules.valid_swaps(grid, matching=False)
    play = probe.reference_play(tables, matching=False)
    ev = {"non_matching_swaps": len(wasted), "lose_play": {k: play[k] for k in ("outcome", "score", "actions")}}
    if play["outcome"] != "lost":
        why = "every swap on the opening board makes a line" if not wasted else f"it ended {play['outcome']}"
        return _result("losable", False, f"swaps that make no line do not lose the game: {why}",
                       [f"the lose play ({play['actions']} actions) ended {play['outcome']}"], ev)
    return _result("losable", True, f"{len(wasted)} swap(s) make no line and spend a move; {play['actions']} actions "
                   f"of them end the game at {play['score']} of {tables['goals.json']['target_score']} points",
                   evidence=ev)


def _distinct(kinds: list[Any]) -> dict[str, Any]:
    findings = []
    rows = [k if isinstance(k, dict) else {} for k in kinds]
    for key in ("shape", "color"):
        seen: dict[str, str] = {}
        for k in rows:
            value, ident = str(k.get(key, "")).lower(), str(k.get("id", "?"))
            if value in seen:
                findings.append(f"board.json kinds: {seen[value]} and {ident} share the {key} {value!r}")
            seen.setdefault(value, ident)
    if findings:
        return _result("tiles_distinct", False, "two tile kinds look alike", findings)
    return _result("tiles_distinct", True, f"{len(kinds)} tile kinds, each with its own shape and colour")


def check_tables(tables: dict[str, Any], options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The genre's data checks, as ``{"id", "passed", "summary", "findings"}``; a malformed table fails them all."""
    try:
        board, goals = tables["board.json"], tables["goals.json"]
        size, moves = int(board["size"]), int(goals["moves"])
        kinds = board["kinds"]
        if not isinstance(kinds, list) or not all(isinstance(k, dict) for k in kinds):
            raise TypeError("board.json kinds: not a list of objects")
        if not (SIZES[0] <= size <= SIZES[1] and KINDS[0] <= len(kinds) <= KINDS[1] and 1 <= moves <= MAX_MOVES):
            raise ValueError(f"size {size}, {len(kinds)} kinds or {moves} moves out of the schema's bounds")
        for key in ("points_per_tile", "target_score", "cascade_bonus"):
            int(goals[key])
        grid = rules.initial_grid(board)
        if len(grid) != size or any(len(r) != size or not all(0 <= k < len(kinds) for k in r) for r in grid):
            raise ValueError("layout is not size × size tile indices")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return [_result(gid, False, f"board.json/goals.json malformed: {type(exc).__name__}: {exc}"[:300])
                for gid in ("board_start", "target_reachable", "losable", "tiles_distinct")]
    source = "layout" if board.get("layout") is not None else f"deal of seed {board['seed']}"
    return [_board_start(grid, source), _target(tables), _losable(tables, grid), _distinct(kinds)]

