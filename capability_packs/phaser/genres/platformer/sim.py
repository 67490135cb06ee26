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

__all__ = ["FRAME_MS", "PLAY_ACTIONS", "Body", "Level", "Phys", "Play", "Rect", "Segment", "body_at_start",
           "level_from", "outcome", "phys_from", "segment_at", "segments", "simulate", "step", "touches_coin"]


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


# --- the Play scene: template/src/state.js, driven as the validator's latch play drives the page ----------------

#: state.js ``ACTIONS``: the action vocabulary the game's hook reports
PLAY_ACTIONS: dict[str, dict[str, Any]] = {
    "left": {"keys": ["ArrowLeft", "KeyA"], "label": "run left"},
    "right": {"keys": ["ArrowRight", "KeyD"], "label": "run right"},
    "jump": {"keys": ["Space", "ArrowUp", "KeyW"], "label": "jump"},
    "start": {"keys": ["Enter", "Space"], "label": "start"},
    "abandon": {"keys": ["Escape"], "label": "quit to menu"},
}
_MAX_STEPS_PER_FRAME = 5
_STEP_EPS_MS = 1e-3
FRAME_MS = 1000 / 60


def _js_round(x: float) -> int:
    """JavaScript's ``Math.round`` (halves up, not to even)."""
    return int((x + 0.5) // 1)


def touches_coin(b: Body, ph: Phys, c: tuple[float, float], r: float) -> bool:
    """physics.js ``touchesCoin``: the coin circle touches the player's box."""
    px = min(max(c[0], b.x), b.x + ph.w)
    py = min(max(c[1], b.y), b.y + ph.h)
    return bool((c[0] - px) ** 2 + (c[1] - py) ** 2 < r * r)


class Play:
    """state.js ``createState`` … ``snapshot`` (the genre's mirror for `tier2.validators.builder_gates`): an action
    holds its input ``frames`` frames of 1000/60 ms, then one frame passes with nothing held (the release)."""

    def __init__(self, tables: dict[str, Any]) -> None:
        self.tables = tables
        self.rules = tables["levels.json"]
        self.ph = phys_from(tables["physics.json"])
        self.levels = [level_from(self.rules, i) for i in range(len(self.rules["levels"]))]
        self.start()

    def actions(self) -> dict[str, Any]:
        return PLAY_ACTIONS

    def _enter(self, index: int) -> None:
        lv = self.levels[index]
        self.level_index, self.body, self.facing = index, body_at_start(lv, self.ph), 1
        self.time_left_ms, self.taken, self.respawn_ms = lv.time_limit_ms, [False] * len(lv.coins), 0.0

    def start(self) -> dict[str, Any]:
        self.lives, self.coins, self.score, self.deaths, self.levels_cleared = int(self.rules["lives"]), 0, 0, 0, 0
        self.elapsed_ms, self.outcome, self.acc_ms, self.jump_seen = 0.0, "running", 0.0, False
        self.lost_reason: str | None = None
        self._enter(0)
        return self.snapshot()

    def _lose(self, reason: str) -> None:
        self.outcome, self.lost_reason = "lost", reason

    def _die(self, reason: str) -> None:
        self.lives -= 1
        self.deaths += 1
        if self.lives <= 0:
            self._lose(reason)
            return
        self.respawn_ms = float(self.tables["physics.json"]["respawn_ms"])
        if self.respawn_ms <= 0:
            self._respawn()

    def _respawn(self) -> None:
        self.respawn_ms = 0.0
        self.body = body_at_start(self.levels[self.level_index], self.ph)

    def _clear(self) -> None:
        self.score += self.rules["exit_score"] + int(self.time_left_ms // 1000) * self.rules["time_bonus_per_s"]
        self.levels_cleared += 1
        if self.level_index + 1 >= len(self.levels):
            self.outcome = "won"
            return
        self._enter(self.level_index + 1)

    def _step_once(self, left: bool, right: bool, jump: bool, ms: float) -> None:
        lv = self.levels[self.level_index]
        self.elapsed_ms += ms
        self.time_left_ms = max(0.0, self.time_left_ms - ms)
        if self.time_left_ms <= 0:
            self._lose("time")
            return
        if self.respawn_ms > 0:
            self.respawn_ms = max(0.0, self.respawn_ms - ms)
            if self.respawn_ms <= 0:
                self._respawn()
            return
        b = self.body
        step(b, left, right, jump, lv.platforms, lv.width, self.ph)
        if left != right:
            self.facing = 1 if right else -1
        for i, c in enumerate(lv.coins):
            if not self.taken[i] and touches_coin(b, self.ph, c, float(self.rules["coin_radius"])):
                self.taken[i] = True
                self.coins += 1
                self.score += self.rules["coin_score"]
        end = outcome(b, lv, self.ph)
        if end in ("pit", "hazard"):
            self._die(str(end))
        elif end == "exit":
            self._clear()

    def _tick(self, dt_ms: float, left: bool = False, right: bool = False, jump: bool = False) -> None:
        if self.outcome != "running":
            return
        if jump:
            self.jump_seen = True
        ms = 1000 / self.ph.sps
        self.acc_ms = min(self.acc_ms + max(0.0, dt_ms), ms * _MAX_STEPS_PER_FRAME)
        while self.acc_ms >= ms - _STEP_EPS_MS and self.outcome == "running":
            self.acc_ms -= ms
            self._step_once(left, right, jump or self.jump_seen, ms)
            self.jump_seen = False

    def snapshot(self) -> dict[str, Any]:
        lv, b = self.levels[self.level_index], self.body
        scene = "Play" if self.outcome == "running" else "Menu" if self.outcome == "abandoned" else "GameOver"
        return {
            "scene": scene, "outcome": self.outcome, "lost_reason": self.lost_reason,
            "elapsed_ms": _js_round(self.elapsed_ms), "score": self.score, "coins": self.coins,
            "coins_total": sum(len(x.coins) for x in self.levels), "coins_left": self.taken.count(False),
            "lives": self.lives, "deaths": self.deaths, "level": self.level_index + 1, "levels": len(self.levels),
            "level_name": lv.name, "levels_cleared": self.levels_cleared, "time_left_ms": _js_round(self.time_left_ms),
            "respawn_ms": self.respawn_ms,
            "player": {"x": b.x, "y": b.y, "vx": b.vx, "vy": b.vy, "on_ground": b.on_ground, "w": self.ph.w,
                       "h": self.ph.h, "facing": self.facing, "coyote_ms": b.coyote_ms, "buffer_ms": b.buffer_ms,
                       "jump_held": b.jump_held, "air_jumps": b.air_jumps},
            "player_y": b.y,
            "exit": {"x": lv.exit.x, "y": lv.exit.y, "w": lv.exit.w, "h": lv.exit.h},
        }

    def act(self, name: str, frames: int) -> dict[str, Any]:
        if name == "abandon":
            if self.outcome == "running":
                self.outcome = "abandoned"
        held = {"left": name == "left", "right": name == "right", "jump": name == "jump"}
        for _ in range(frames):
            self._tick(FRAME_MS, **held)
        if name != "wait":
            self._tick(FRAME_MS)
        return self.snapshot()

    def advance(self, ms: float) -> dict[str, Any]:
        for _ in range(_js_round(ms / FRAME_MS)):
            self._tick(FRAME_MS)
        return self.snapshot()

    def abandon(self) -> dict[str, Any]:
        return self.act("abandon", 4)
