"""The platformer's physics in Python: a line-by-line mirror of ``template/src/physics.js`` (same float operations
in the same order, so the same numbers), plus the level geometry the checks, the probe and the builder share.

One physics step (``step``) moves the player's box: run speed from the held direction (full air control), a jump
on a fresh press while on the ground (or within ``coyote_ms`` after leaving it, or ``jump_buffer_ms`` before
landing; or in the air, ``air_jumps`` times per flight), gravity capped at ``max_fall_speed``, then a swept move
along x and one along y against the solid platforms. ``outcome`` says whether the box fell into a pit, touches a
hazard or the exit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Body", "Level", "Phys", "Rect", "Segment", "body_at_start", "level_from", "outcome", "phys_from",
           "segment_at", "segments", "simulate", "step"]


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float

    @property
    def r(self) -> float:
        return self.x + self.w

    @property
    def b(self) -> float:
        return self.y + self.h


@dataclass(frozen=True)
class Phys:
    sps: float
    gravity: float
    run_speed: float
    jump_velocity: float
    max_fall_speed: float
    w: float
    h: float
    coyote_ms: float
    jump_buffer_ms: float
    air_jumps: int = 0

    @property
    def dt(self) -> float:
        return 1 / self.sps

    @property
    def step_ms(self) -> float:
        return 1000 / self.sps

    @property
    def walk_px(self) -> float:
        """Distance run in one physics step."""
        return self.run_speed * self.dt


@dataclass(frozen=True)
class Level:
    index: int
    name: str
    width: float
    height: float
    platforms: tuple[Rect, ...]
    hazards: tuple[Rect, ...]
    exit: Rect
    start_x: float
    start_y: float  # the ground under the player's feet at the start
    coins: tuple[tuple[float, float], ...]
    time_limit_ms: float


@dataclass
class Body:
    x: float
    y: float
    vx: float = 0.0
    vy: float = 0.0
    on_ground: bool = True
    coyote_ms: float = 0.0
    buffer_ms: float = 0.0
    jump_held: bool = False
    air_jumps: int = 0

    def copy(self) -> Body:
        return Body(self.x, self.y, self.vx, self.vy, self.on_ground, self.coyote_ms, self.buffer_ms, self.jump_held,
                    self.air_jumps)


@dataclass(frozen=True)
class Segment:
    """A stretch of ground the player can stand on: feet at ``top``, the box's left edge anywhere in [lo, hi]."""

    index: int
    top: float
    lo: float
    hi: float
    goal: tuple[float, float] | None = field(default=None)  # where standing touches the exit, if anywhere


def phys_from(physics: dict[str, Any]) -> Phys:
    p = physics["player"]
    return Phys(float(physics["steps_per_second"]), float(physics["gravity"]), float(physics["run_speed"]),
                float(physics["jump_velocity"]), float(physics["max_fall_speed"]), float(p["w"]), float(p["h"]),
                float(physics["coyote_ms"]), float(physics["jump_buffer_ms"]), int(physics.get("air_jumps", 0)))


def _rect(d: dict[str, Any]) -> Rect:
    return Rect(float(d["x"]), float(d["y"]), float(d["w"]), float(d["h"]))


def level_from(levels: dict[str, Any], index: int) -> Level:
    lv = levels["levels"][index]
    return Level(index, str(lv.get("name", f"Level {index + 1}")), float(lv["width"]), float(lv["height"]),
                 tuple(_rect(p) for p in lv["platforms"]), tuple(_rect(z) for z in lv["hazards"]), _rect(lv["exit"]),
                 float(lv["start"]["x"]), float(lv["start"]["y"]),
                 tuple((float(c["x"]), float(c["y"])) for c in lv["coins"]), float(lv["time_limit_ms"]))


def body_at_start(lv: Level, ph: Phys) -> Body:
    return Body(lv.start_x, lv.start_y - ph.h, 0.0, 0.0, True, ph.coyote_ms, 0.0, False, ph.air_jumps)


def step(b: Body, left: bool, right: bool, jump: bool, solids: tuple[Rect, ...], width: float, ph: Phys) -> bool:
    """One physics step (mirrors ``stepBody`` in physics.js); True when the player jumped in it."""
    dt = 1 / ph.sps
    ms = 1000 / ph.sps
    w, h = ph.w, ph.h
    d = (1 if right else 0) - (1 if left else 0)
    b.vx = d * ph.run_speed
    pressed = jump and not b.jump_held
    if pressed:
        b.buffer_ms = ph.jump_buffer_ms
    b.jump_held = jump
    jumped = False
    if b.buffer_ms > 0 and (b.on_ground or b.coyote_ms > 0):
        b.vy = -ph.jump_velocity
        b.buffer_ms = 0
        b.coyote_ms = 0
        b.on_ground = False
        b.air_jumps = ph.air_jumps
        jumped = True
    elif pressed and b.air_jumps > 0:
        b.vy = -ph.jump_velocity
        b.buffer_ms = 0
        b.air_jumps -= 1
        jumped = True
    else:
        b.buffer_ms = max(0, b.buffer_ms - ms)
    b.vy = min(b.vy + ph.gravity * dt, ph.max_fall_speed)
    nx = min(max(b.x + b.vx * dt, 0), width - w)
    for s in solids:
        if b.y < s.y + s.h and b.y + h > s.y:
            if b.vx > 0 and b.x + w <= s.x and nx + w > s.x:
                nx = min(nx, s.x - w)
            elif b.vx < 0 and b.x >= s.x + s.w and nx < s.x + s.w:
                nx = max(nx, s.x + s.w)
    b.x = nx
    ny = b.y + b.vy * dt
    landed = False
    bumped = False
    for s in solids:
        if b.x < s.x + s.w and b.x + w > s.x:
            if b.vy > 0 and b.y + h <= s.y and ny + h > s.y:
                ny = min(ny, s.y - h)
                landed = True
            elif b.vy < 0 and b.y >= s.y + s.h and ny < s.y + s.h:
                ny = max(ny, s.y + s.h)
                bumped = True
    b.y = ny
    if landed:
        b.vy = 0
        b.on_ground = True
        b.air_jumps = ph.air_jumps
    else:
        b.on_ground = False
        if bumped:
            b.vy = 0
    b.coyote_ms = ph.coyote_ms if b.on_ground else max(0, b.coyote_ms - ms)
    return jumped


def _touches(b: Body, ph: Phys, r: Rect) -> bool:
    return b.x < r.x + r.w and b.x + ph.w > r.x and b.y < r.y + r.h and b.y + ph.h > r.y


def outcome(b: Body, lv: Level, ph: Phys, hazards: tuple[Rect, ...] | None = None) -> str | None:
    """'pit' / 'hazard' (a life lost), 'exit' (level cleared) or None — checked in this order, as state.js does.
    ``hazards``: the level's hazards near the player, when the caller knows them (all of them by default)."""
    if b.y > lv.height:
        return "pit"
    if any(_touches(b, ph, z) for z in (lv.hazards if hazards is None else hazards)):
        return "hazard"
    if _touches(b, ph, lv.exit):
        return "exit"
    return None


def simulate(b: Body, inputs: list[tuple[bool, bool, bool]], lv: Level, ph: Phys, max_steps: int,
             solids: tuple[Rect, ...] | None = None, hazards: tuple[Rect, ...] | None = None) -> tuple[str, int, Body]:
    """Run ``inputs`` (then no input) from a copy of ``b`` until it lands after being airborne ('landed'), dies
    ('pit'/'hazard'), touches the exit ('exit') or ``max_steps`` pass ('timeout'). Returns (result, steps, body).
    ``solids`` / ``hazards``: the ones near enough to matter, when the caller knows (all of the level's by default)."""
    body = b.copy()
    solids = lv.platforms if solids is None else solids
    airborne = not body.on_ground
    idle = (False, False, False)
    for i in range(max_steps):
        left, right, jump = inputs[i] if i < len(inputs) else idle
        step(body, left, right, jump, solids, lv.width, ph)
        end = outcome(body, lv, ph, hazards)
        if end is not None:
            return end, i + 1, body
        if body.on_ground and airborne:
            return "landed", i + 1, body
        airborne = airborne or not body.on_ground
    return "timeout", max_steps, body


# --- where the player can stand ----------------------------------------------------------------------------------

_EPS = 1e-6


def _subtract(base: list[tuple[float, float]], cuts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Closed intervals ``base`` minus the open intervals ``cuts``."""
    out = base
    for a, b in cuts:
        nxt: list[tuple[float, float]] = []
        for lo, hi in out:
            if b <= lo or a >= hi:
                nxt.append((lo, hi))
                continue
            if a >= lo:
                nxt.append((lo, a))
            if b <= hi:
                nxt.append((b, hi))
        out = [(lo, hi) for lo, hi in nxt if hi >= lo]
    return out


def _union(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def segments(lv: Level, ph: Phys) -> list[Segment]:
    """Every stretch of safe standing ground: platform tops (joined when level and touching) minus the places
    where the standing box would overlap another platform (a wall, a ceiling) or a hazard, within the world."""
    w, h = ph.w, ph.h
    tops = sorted({p.y for p in lv.platforms})
    out: list[Segment] = []
    for top in tops:
        support = _union([(p.x - w + _EPS, p.r - _EPS) for p in lv.platforms if p.y == top])
        cuts = [(r.x - w, r.r) for r in (*lv.platforms, *lv.hazards) if r.y < top and r.b > top - h]
        e = lv.exit
        for lo, hi in _subtract([(max(lo, 0.0), min(hi, lv.width - w)) for lo, hi in support], cuts):
            goal = None
            if e.y < top and e.b > top - h and e.x - w < hi and e.r > lo:
                goal = (max(lo, e.x - w + 1), min(hi, e.r - 1))
                goal = goal if goal[0] <= goal[1] else None
            out.append(Segment(len(out), top, lo, hi, goal))
    return out


def segment_at(segs: list[Segment], x: float, feet: float, tol: float = 0.5) -> Segment | None:
    """The segment the player stands on (feet at ``feet``, box left edge at ``x``)."""
    for s in segs:
        if abs(s.top - feet) <= tol and s.lo - tol <= x <= s.hi + tol:
            return s
    return None
