"""The platformer probe: win by planning runs and jumps from the state and the level tables; lose by walking into
the nearest pit or hazard.

Reads only the state snapshot, the action vocabulary and the tables (see the pack's docs/genre-kit.md). Closed
loop: every call looks at where the player is now. On the ground it follows the jump graph of `routes` towards the
exit — walk to a take-off point of the next jump, press jump for one frame; in the air it tries run/no-run input
sequences through the game's own physics (`sim`, a mirror of physics.js) and steers towards the landing closest
to the exit, so a frame more or less in how the validator holds a key never derails the plan.
"""

from __future__ import annotations

import math
from typing import Any

from . import routes

__all__ = ["lose_action", "win_action"]

Action = tuple[str, int]
TAKEOFF_AT = 0.7  # where in a take-off interval to jump (0: farthest from the target, 1: nearest)
CHUNK = 12  # at most this many frames per action in the air, so the plan is revised often
WALK_CHUNK = 60  # at most this many frames of walking per action
AIR_STEPS = 240  # how far ahead a flight is simulated
DEATH_STEPS = 900  # how far ahead the lose play looks for a death


def _world(state: dict[str, Any], tables: dict[str, Any]) -> tuple[Any, Any, Any, Any] | None:
    """(routes, graph, physics, body) for the level the state is in; None when the state makes no sense."""
    sim = routes.sim
    try:
        levels: dict[str, Any] = tables["levels.json"]
        physics: dict[str, Any] = tables["physics.json"]
        p: dict[str, Any] = state["player"]
        index = int(state["level"]) - 1
        if not 0 <= index < len(levels["levels"]):
            return None
        g = routes.graph(levels, physics, index)
        ph = sim.phys_from(physics)
        body = sim.Body(float(p["x"]), float(p["y"]), float(p.get("vx", 0)), float(p.get("vy", 0)),
                        bool(p["on_ground"]), float(p.get("coyote_ms", 0)), float(p.get("buffer_ms", 0)),
                        bool(p.get("jump_held", False)), int(p.get("air_jumps", 0)))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None
    return routes, g, ph, body


def _waiting(state: dict[str, Any]) -> Action | None:
    respawn = state.get("respawn_ms")
    if isinstance(respawn, int | float) and respawn > 0:
        return ("wait", max(1, math.ceil(respawn / (1000 / 60))) + 1)
    return None


def _run(d: int) -> str:
    return "right" if d > 0 else "left"


def _walk_to(x: float, tx: float, ph: Any) -> Action:
    steps = max(1, round(abs(tx - x) / ph.walk_px))
    return (_run(1 if tx > x else -1), min(WALK_CHUNK, steps))


def _ground_move(routes: Any, g: Any, ph: Any, body: Any, seg: Any) -> Action | None:
    if seg.goal is not None:
        lo, hi = seg.goal
        return _walk_to(body.x, (lo + hi) / 2, ph)
    dist = g.dist_to_goal
    here = dist.get(seg.index)
    options = [e for e in g.edges.get(seg.index, []) if e.dst in dist and (here is None or dist[e.dst] < here)]
    if not options:
        return None
    best = min(options, key=lambda e: (dist[e.dst], -max(hi - lo for lo, hi in e.spans)))
    lo, hi = max(best.spans, key=lambda sp: sp[1] - sp[0])
    # Take off well inside the interval, towards the target: the shorter flight leaves room for a frame lost
    # between two key presses.
    tx = lo + TAKEOFF_AT * (hi - lo) if best.d > 0 else hi - TAKEOFF_AT * (hi - lo)
    if lo <= body.x <= hi and abs(tx - body.x) <= max(ph.walk_px, (hi - lo) * (1 - TAKEOFF_AT) / 2):
        return ("jump", 1)
    return _walk_to(body.x, tx, ph)


def _air_options(routes: Any, g: Any, ph: Any, body: Any) -> list[tuple[int, int, str, int, Any, float]]:
    """(direction, run steps, result, steps to it, landing segment, landing margin) of run-then-coast inputs."""
    sim = routes.sim
    near = tuple(r for r in g.level.platforms if abs(r.x + r.w / 2 - body.x) < r.w / 2 + 900)
    out = []
    for d in (1, -1):
        for n in range(0 if d > 0 else 2, CHUNK * 5 + 1, 2):
            end, steps, b = sim.simulate(body, [(d < 0, d > 0, False)] * n, g.level, ph, AIR_STEPS, near)
            seg = sim.segment_at(g.segs, b.x, b.y + ph.h) if end == "landed" else None
            margin = min(b.x - seg.lo, seg.hi - b.x) if seg is not None else 0.0
            out.append((d, n, end, steps, seg, margin))
    return out


def _air_move(routes: Any, g: Any, ph: Any, body: Any) -> Action:
    dist = g.dist_to_goal
    options = _air_options(routes, g, ph, body)
    landing = {(d, n): ("exit" if end == "exit" else seg.index if seg is not None else None)
               for d, n, end, _s, seg, _m in options}

    def score(opt: tuple[int, int, str, int, Any, float]) -> tuple[float, float, float]:
        d, n, end, _steps, seg, margin = opt
        if end == "exit":
            return (-1.0, 0.0, 0.0)
        if seg is None:
            return (math.inf, 0.0, 0.0)
        mine = landing[(d, n)]
        steady = sum(1 for k in (n - 2, n + 2) if landing.get((d if k else 1, max(k, 0))) in (mine, "exit"))
        return (float(dist.get(seg.index, 10_000)), -float(steady), -margin)

    best = min(options, key=score)
    d, n, _end, steps, _seg, _margin = best
    if score(best)[0] == math.inf:
        return ("wait", CHUNK)
    if n == 0:
        return ("wait", max(1, min(CHUNK, steps)))
    return (_run(d), min(CHUNK, n))


def win_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> str | Action | None:
    """The next action towards the exit of the last level."""
    if state.get("outcome", "running") != "running" or not {"left", "right", "jump"} <= set(actions):
        return None
    waiting = _waiting(state)
    if waiting:
        return waiting
    world = _world(state, tables)
    if world is None:
        return None
    routes, g, ph, body = world
    if body.on_ground:
        seg = routes.sim.segment_at(g.segs, body.x, body.y + ph.h)
        if seg is not None:
            move = _ground_move(routes, g, ph, body, seg)
            if move is not None:
                return move
            return lose_action(state, actions, tables)  # stranded: a life buys a fresh start
    return _air_move(routes, g, ph, body)


def _death_in(routes: Any, g: Any, ph: Any, body: Any, inputs: list[tuple[bool, bool, bool]]) -> int | None:
    """Steps until holding ``inputs`` (the last one repeated) loses a life; None if it never does."""
    sim = routes.sim
    b = body.copy()
    for i in range(DEATH_STEPS):
        left, right, jump = inputs[min(i, len(inputs) - 1)]
        sim.step(b, left, right, jump, g.level.platforms, g.level.width, ph)
        end = sim.outcome(b, g.level, ph)
        if end in ("pit", "hazard"):
            return i + 1
        if end == "exit":
            return None
    return None


def lose_action(state: dict[str, Any], actions: dict[str, Any], tables: dict[str, Any]) -> str | Action | None:
    """Walk (or jump) into the nearest pit or hazard; with nothing deadly in reach, let the time run out."""
    if state.get("outcome", "running") != "running" or not {"left", "right", "jump"} <= set(actions):
        return None
    waiting = _waiting(state)
    if waiting:
        return waiting
    world = _world(state, tables)
    if world is None:
        return ("wait", CHUNK)
    routes, g, ph, body = world
    plans: list[tuple[int, Action]] = []
    for d in (1, -1):
        run = (d < 0, d > 0, False)
        walk = _death_in(routes, g, ph, body, [run])
        if walk is not None:
            plans.append((walk, (_run(d), min(WALK_CHUNK, walk + 2))))
        if body.on_ground:
            hop = _death_in(routes, g, ph, body, [(False, False, True), run])
            if hop is not None:
                plans.append((hop + 1, ("jump", 1)))
    if not body.on_ground and _death_in(routes, g, ph, body, [(False, False, False)]) is not None:
        plans.append((_death_in(routes, g, ph, body, [(False, False, False)]) or 0, ("wait", CHUNK)))
    if not plans:
        return ("wait", WALK_CHUNK)
    return min(plans, key=lambda p: p[0])[1]
