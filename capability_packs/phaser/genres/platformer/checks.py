"""The platformer's data checks (L1 data gates ``l1.data.<id>``), computed from the game's own physics numbers.

* ``solvable`` — in every level the exit flag can be reached from the start: every gap on the way is jumpable and
  every step-up reachable under physics.json (gravity, jump_velocity, run_speed, the player's box), found by the
  jump graph of `routes` (the game's integrator replayed in Python, each jump confirmed by a full simulation).
* ``coins`` — every coin is within a jump of ground the player can reach.
* ``time_limits`` — every level's time limit leaves room to run from the start to the exit with a wide margin.
"""

from __future__ import annotations

from typing import Any

from . import routes

__all__ = ["check_tables"]

TIME_MARGIN = 1.5  # the time limit must cover this many times the straight run from start to exit ...
TIME_SLACK_MS = 5000  # ... plus this


def _result(cid: str, findings: list[str], ok: str) -> dict[str, Any]:
    summary = ok if not findings else f"{len(findings)} problem(s): {findings[0]}"
    return {"id": cid, "passed": not findings, "summary": summary[:400], "findings": findings}


def _blocked(g: Any, reached: set[int], ph: Any, routes: Any, name: str) -> str:
    """Where the way to the exit breaks: the farthest reached ground and the nearest ground beyond it."""
    segs = g.segs
    last = max((s for s in segs if s.index in reached), key=lambda s: s.hi)
    ahead = [s for s in segs if s.index not in reached and s.lo > last.lo]
    if not ahead:
        return f"{name}: the exit flag cannot be reached from the start"
    nxt = min(ahead, key=lambda s: (s.lo - last.hi) ** 2 + (s.top - last.top) ** 2)
    gap, rise = nxt.lo + ph.w - last.hi, last.top - nxt.top
    most = routes._max_across(ph, rise) + ph.w if rise < g.reach_up else 0
    return (f"{name}: no jump gets from the ground at x {last.lo + ph.w:.0f}-{last.hi:.0f} (top {last.top:.0f}) to the "
            f"ground at x {nxt.lo + ph.w:.0f}-{nxt.hi:.0f} (top {nxt.top:.0f}): a {gap:.0f} px gap, {rise:.0f} px "
            f"{'up' if rise >= 0 else 'down'}; under gravity {ph.gravity:g}, jump_velocity {ph.jump_velocity:g} and "
            f"run_speed {ph.run_speed:g} a jump rises at most {g.reach_up:.0f} px and at that height clears at most "
            f"{most:.0f} px")


def _coin_problems(g: Any, reached: set[int], lv: Any, ph: Any, radius: float, name: str) -> list[str]:
    out = []
    for j, (cx, cy) in enumerate(lv.coins):
        ok = any(cy >= s.top - ph.h - g.reach_up - radius and cy <= s.top + radius
                 and s.lo - g.reach_across - radius <= cx <= s.hi + ph.w + g.reach_across + radius
                 for s in g.segs if s.index in reached)
        if not ok:
            out.append(f"{name} coins[{j}] at ({cx:.0f}, {cy:.0f}) is out of reach of any ground the player can get to")
    return out


def check_tables(tables: dict[str, Any], options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """``[{id, passed, summary, findings}]`` for the level tables (see the module doc)."""
    sim = routes.sim
    levels: dict[str, Any] = tables.get("levels.json") or {}
    physics: dict[str, Any] = tables.get("physics.json") or {}
    try:
        ph = sim.phys_from(physics)
        lvs = [sim.level_from(levels, i) for i in range(len(levels["levels"]))]
        radius = float(levels["coin_radius"])
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        msg = f"levels.json / physics.json malformed ({type(exc).__name__}: {exc}); the level data gate reports it"
        return [_result("solvable", [msg], "")]
    solvable: list[str] = []
    coins: list[str] = []
    times: list[str] = []
    for lv in lvs:
        name = f"levels.json levels[{lv.index}] ({lv.name})"
        g = routes.graph(levels, physics, lv.index)
        start = sim.segment_at(g.segs, lv.start_x, lv.start_y)
        if start is None:
            solvable.append(f"{name}: the start ({lv.start_x:g}, {lv.start_y:g}) is not on safe ground")
            continue
        reached = g.reachable_from(start.index)
        goals = [s for s in g.segs if s.goal is not None]
        if g.truncated and not any(s.index in reached for s in goals):
            solvable.append(f"{name}: too dense to verify: more than {routes.MAX_PAIRS} pairs of ground within a "
                            f"jump of each other ({len(lv.platforms)} platforms); use fewer, larger platforms")
        elif not goals:
            solvable.append(f"{name}: the exit flag does not touch any ground the player can stand on")
        elif not any(s.index in reached for s in goals):
            solvable.append(_blocked(g, reached, ph, routes, name))
        coins += _coin_problems(g, reached, lv, ph, radius, name)
        run_ms = abs(lv.exit.x - lv.start_x) / ph.run_speed * 1000
        if lv.time_limit_ms < run_ms * TIME_MARGIN + TIME_SLACK_MS:
            times.append(f"{name}: time_limit_ms {lv.time_limit_ms:g} is too short: the straight run to the exit "
                         f"alone takes {run_ms:.0f} ms (needs >= {run_ms * TIME_MARGIN + TIME_SLACK_MS:.0f})")
    n = len(lvs)
    return [_result("solvable", solvable, f"all {n} level(s) solvable: every gap and step on the way to the exit "
                    f"is jumpable (rise <= {routes._reach(ph)[0]:.0f} px, run-jump <= {routes._reach(ph)[1]:.0f} px)"),
            _result("coins", coins, f"every coin of the {n} level(s) is within a jump of reachable ground"),
            _result("time_limits", times, f"the {n} level time limit(s) leave room to reach the exit")]
