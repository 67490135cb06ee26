"""Which ground the player can jump to from which, under the level's physics numbers (shared by checks, probe and
builder).

A jump is a fixed pattern of inputs — a one-frame press of jump (one or two frames without running: either must
work), then the run direction held for ``hold`` steps (or to the landing), then nothing. Its flight, relative to
the take-off point, is computed once with `sim.step` (the game's own integrator); for a pair of segments S → T the
take-off points on S from which that flight clears every platform and hazard and lands on T are found exactly by
interval arithmetic, then one take-off point is replayed through the full simulation as a witness.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from . import sim

__all__ = ["Edge", "Graph", "HOLDS", "graph", "jump_inputs", "sim"]

HOLDS: tuple[int | None, ...] = (None, 20, 12, 6)  # run steps after the jump press (None: until landing)
DELAYS = (1, 2)  # frames the jump key is held before the run key: a plan must work for each
MARGIN = 3.0  # px: land at least this far inside the target; cuts are widened by a fraction of it
MIN_WIDTH_STEPS = 2.0  # a usable take-off interval is at least this many run steps wide
MAX_PAIRS = 200  # pairs of ground within a jump of each other examined per level
_TOL = 1e-3
_DROP = 3000.0  # px: flights are followed this far down




def jump_inputs(d: int, delay: int, hold: int | None, n: int) -> list[tuple[bool, bool, bool]]:
    """Per-step (left, right, jump) for a jump pattern, ``n`` steps long."""
    out = []
    for i in range(1, n + 1):
        run = delay < i and (hold is None or i <= delay + hold)
        out.append((run and d < 0, run and d > 0, i <= delay))
    return out


@lru_cache(maxsize=512)
def _flight(ph: Any, d: int, delay: int, hold: int | None, drop: float) -> tuple[tuple[float, float, float], ...]:
    """(dx, dy before the step, dy after it) per step of a jump from flat, open ground, relative to the take-off
    point (dy < 0: above it), until ``drop`` px below it."""
    origin = 1e6
    b = sim.Body(origin, 0.0, 0.0, 0.0, True, ph.coyote_ms, 0.0, False, ph.air_jumps)
    out: list[tuple[float, float, float]] = []
    for left, right, jump in jump_inputs(d, delay, hold, 2000):
        y_before = b.y
        sim.step(b, left, right, jump, (), 2 * origin, ph)
        out.append((b.x - origin, y_before, b.y))
        if b.y > drop:
            break
    return tuple(out)


def _landing_steps(flight: tuple[tuple[float, float, float], ...], y0: float, h: float, top: float) -> list[int]:
    """The step(s) at which a flight from feet height ``y0 + h`` comes down through ``top``: one step, or two when
    the feet pass within float noise of ``top`` (the game may then land on either, so a plan must allow both)."""
    for i, (_dx, yb, ya) in enumerate(flight):
        fa = y0 + ya + h
        if ya > yb and fa > top - _TOL and y0 + yb + h <= top + _TOL:
            return [i, i + 1] if fa < top + _TOL and i + 1 < len(flight) else [i]
    return []


def _takeoffs_at(s: Any, t: Any, lv: Any, ph: Any, flight: tuple[tuple[float, float, float], ...], land: int,
                 rects: tuple[Any, ...], hazards: tuple[Any, ...]) -> list[tuple[float, float]]:
    """Take-off x on ``s`` from which ``flight`` lands on ``t`` at step ``land`` touching nothing else."""
    y0, h, w = s.top - ph.h, ph.h, ph.w
    dx_land = flight[land][0]
    lo, hi = max(s.lo, t.lo + MARGIN - dx_land), min(s.hi, t.hi - MARGIN - dx_land)
    cuts: list[tuple[float, float]] = []
    pad = MARGIN / 3
    # (left, right, top, bottom, is the landing platform) — plain floats: this loop is the checks' hot spot.
    # Float noise at a platform's face decides nothing (the witness replay checks the plan); hazards are kept clear.
    solid = [(r.x - w - pad, r.x + r.w + pad, r.y + _TOL - h, r.y + r.h - _TOL, abs(r.y - t.top) < _TOL)
             for r in rects]
    harm = [(z.x - w - pad, z.x + z.w + pad, z.y - _TOL - h, z.y + z.h + _TOL) for z in hazards]
    for i, (dx, yb, ya) in enumerate(flight[: land + 1]):
        top_b, top_a = y0 + yb, y0 + ya
        if top_a > lv.height:
            return []
        lo, hi = max(lo, -dx), min(hi, lv.width - w - dx)
        y_lo, y_hi = min(top_a, top_b), max(top_a, top_b)
        for left, right, y_top, y_bottom, landing in solid:
            if y_lo < y_bottom and y_hi > y_top:
                over_b = y_top < top_b < y_bottom
                if over_b or (y_top < top_a < y_bottom and not (i == land and landing)):
                    cuts.append((left - dx, right - dx))
        for left, right, y_top, y_bottom in harm:
            if y_lo < y_bottom and y_hi > y_top:
                cuts.append((left - dx, right - dx))
    if hi < lo:
        return []
    out: list[tuple[float, float]] = sim._subtract([(lo, hi)], cuts)
    return out


def _takeoffs(s: Any, t: Any, lv: Any, ph: Any, flight: tuple[tuple[float, float, float], ...],
              rects: tuple[Any, ...], hazards: tuple[Any, ...]) -> list[tuple[float, float]]:
    """Take-off x on ``s`` from which ``flight`` lands on ``t`` touching nothing else (closed intervals)."""
    steps = _landing_steps(flight, s.top - ph.h, ph.h, t.top)
    spans: list[tuple[float, float]] | None = None
    for land in steps:
        got = _takeoffs_at(s, t, lv, ph, flight, land, rects, hazards)
        spans = got if spans is None else _intersect(spans, got)
    return spans or []


def _intersect(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out = []
    for lo1, hi1 in a:
        for lo2, hi2 in b:
            lo, hi = max(lo1, lo2), min(hi1, hi2)
            if lo <= hi:
                out.append((lo, hi))
    return out


@dataclass(frozen=True)
class Edge:
    src: int
    dst: int
    d: int  # run direction of the jump
    hold: int | None
    spans: tuple[tuple[float, float], ...]  # usable take-off intervals on src (box left edge)


@dataclass
class Graph:
    level: Any
    segs: list[Any]
    edges: dict[int, list[Edge]]
    reach_up: float  # highest rise of a jump (px), for messages
    reach_across: float  # farthest run-jump to the same height (px), for messages
    truncated: bool = False  # more pairs of ground within a jump of each other than MAX_PAIRS: not all examined

    @cached_property
    def dist_to_goal(self) -> dict[int, int]:
        """Jumps still needed from each segment to one that touches the exit (absent: cannot get there)."""
        back: dict[int, list[int]] = {}
        for src, es in self.edges.items():
            for e in es:
                back.setdefault(e.dst, []).append(src)
        dist = {s.index: 0 for s in self.segs if s.goal is not None}
        todo = deque(dist)
        while todo:
            cur = todo.popleft()
            for prev in back.get(cur, []):
                if prev not in dist:
                    dist[prev] = dist[cur] + 1
                    todo.append(prev)
        return dist

    def reachable_from(self, start: int) -> set[int]:
        seen, todo = {start}, [start]
        while todo:
            for e in self.edges.get(todo.pop(), []):
                if e.dst not in seen:
                    seen.add(e.dst)
                    todo.append(e.dst)
        return seen


def _reach(ph: Any) -> tuple[float, float]:
    """(highest rise, farthest run-jump back to the same height) of a jump, in px."""
    flight = _flight(ph, 1, 1, None, _DROP)
    up = -min(ya for _dx, _yb, ya in flight)
    return up, next((dx for dx, yb, ya in flight if ya > yb and ya >= 0), flight[-1][0])


def _max_across(ph: Any, rise: float) -> float:
    """Farthest a run-jump gets horizontally before its feet come down to ``rise`` px above the take-off."""
    flight = _flight(ph, 1, 1, None, _DROP)
    return next((dx for dx, yb, ya in flight if ya > yb and ya >= -rise), flight[-1][0])


def _edge(s: Any, t: Any, lv: Any, ph: Any, rects: tuple[Any, ...], hazards: tuple[Any, ...], d: int,
          hold: int | None) -> Edge | None:
    spans: list[tuple[float, float]] | None = None
    for delay in DELAYS:
        got = _takeoffs(s, t, lv, ph, _flight(ph, d, delay, hold, _DROP), rects, hazards)
        spans = got if spans is None else _intersect(spans, got)
    wide = [(lo, hi) for lo, hi in spans or [] if hi - lo >= MIN_WIDTH_STEPS * ph.walk_px]
    return Edge(s.index, t.index, d, hold, tuple(wide)) if wide else None


def _witness(e: Edge, s: Any, t: Any, lv: Any, ph: Any, rects: tuple[Any, ...], hazards: tuple[Any, ...]) -> bool:
    """Replay the middle of the widest take-off interval through the full simulation, for every delay (with the
    platforms and hazards near the pair: the flight cannot reach the others before it lands)."""
    lo, hi = max(e.spans, key=lambda sp: sp[1] - sp[0])
    for delay in DELAYS:
        body = sim.Body((lo + hi) / 2, s.top - ph.h, 0.0, 0.0, True, ph.coyote_ms, 0.0, False, ph.air_jumps)
        end, _n, b = sim.simulate(body, jump_inputs(e.d, delay, e.hold, 600), lv, ph, 600, rects, hazards)
        if end == "exit":
            continue
        if end != "landed" or sim.segment_at([t], b.x, b.y + ph.h) is None:
            return False
    return True


@lru_cache(maxsize=64)
def _graph(lv: Any, ph: Any) -> Graph:
    segs = sim.segments(lv, ph)
    up, across = _reach(ph)
    edges: dict[int, list[Edge]] = {}
    pairs = 0
    for s in segs:
        for t in segs:
            if t.index == s.index or t.top <= s.top - up:
                continue
            reach = _max_across(ph, s.top - t.top) + MARGIN
            if t.lo > s.hi + reach or t.hi < s.lo - reach:
                continue
            pairs += 1
            if pairs > MAX_PAIRS:  # hostile or absurdly dense data: stop, and say so (checks fail the level)
                return Graph(lv, segs, edges, up, across, truncated=True)
            x_lo, x_hi = min(s.lo, t.lo) - reach, max(s.hi, t.hi) + reach + ph.w
            rects = tuple(r for r in lv.platforms if r.r > x_lo and r.x < x_hi)
            hazards = tuple(z for z in lv.hazards if z.r > x_lo and z.x < x_hi)
            best = None
            for d in (-1,) if t.hi < s.lo else (1,) if t.lo > s.hi else (1, -1):
                options = [e for e in (_edge(s, t, lv, ph, rects, hazards, d, hold) for hold in HOLDS) if e is not None]
                options.sort(key=lambda e: -max(hi - lo for lo, hi in e.spans))
                best = next((e for e in options[:3] if _witness(e, s, t, lv, ph, rects, hazards)), None)
                if best is not None:
                    break
            if best is not None:
                edges.setdefault(s.index, []).append(best)
    return Graph(lv, segs, edges, up, across)


def graph(levels: dict[str, Any], physics: dict[str, Any], index: int) -> Graph:
    """The jump graph of level ``index`` (cached per level and physics)."""
    return _graph(sim.level_from(levels, index), sim.phys_from(physics))
