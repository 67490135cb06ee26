"""Controls discovery for generic mode: what a game listens to, and in which order to try it.

The page is asked (one ``evaluate`` of the engine adapter's in-page ``discover()``) for the keys the game
registered with the engine's keyboard input (key objects, per-key listeners), the key names its keyboard listeners
compare against (DOM ``keydown`` listeners and the engine's generic key handlers, read from their source by the
init script), whether the scenes listen to the pointer, and the page positions of interactive objects (plus other
display objects, to find neighbours on a board). `plan_actions` turns that into an order that gives a game that
moves by itself a chance: directions perpendicular to the motion first, then start keys, then the other keys the
game registered, then pointer moves (one click, two clicks on ADJACENT objects, a drag between them), then generic
keys nobody registered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Controls", "DISCOVER_JS", "GENERIC_KEYS", "START_KEYS", "adjacent_pair", "motion_axis", "plan_actions",
           "parse_controls"]

#: keys tried when the game registered none (and after the registered ones otherwise)
GENERIC_KEYS: tuple[str, ...] = ("ArrowRight", "Space", "ArrowLeft", "ArrowUp", "KeyW", "KeyD", "Enter", "KeyA",
                                 "ArrowDown")
START_KEYS: tuple[str, ...] = ("Space", "Enter")
_HORIZONTAL = ("ArrowLeft", "ArrowRight", "KeyA", "KeyD")
_VERTICAL = ("ArrowUp", "ArrowDown", "KeyW", "KeyS")
_LAST = ("Escape", "Shift", "Control", "Alt", "Tab", "Backspace")  # pause/quit/modifiers: tried last
_KEYCODE_NAMES = {8: "Backspace", 9: "Tab", 13: "Enter", 16: "Shift", 17: "Control", 18: "Alt", 27: "Escape",
                  32: "Space", 37: "ArrowLeft", 38: "ArrowUp", 39: "ArrowRight", 40: "ArrowDown"}

#: the engine adapter's answer (the pack's page.js, `tier2.packs.engine`): interactive objects and other sizeable
#: display objects in page coordinates, scene-level key/pointer listeners, the keys the keyboard plugins hold —
#: key names already as ``KeyboardEvent.code`` names (or ``#<keyCode>``), key codes as numbers
DISCOVER_JS = "() => window.__tier2Engine ? window.__tier2Engine.discover() : null"


@dataclass
class Controls:
    """What the game listens to (see `DISCOVER_JS`)."""

    keys: list[str] = field(default_factory=list)
    pointer: bool = False
    interactive: list[tuple[float, float, float, float]] = field(default_factory=list)
    objects: list[tuple[float, float, float, float]] = field(default_factory=list)

    def evidence(self) -> dict[str, Any]:
        return {"keys": self.keys, "pointer": self.pointer, "interactive_objects": len(self.interactive)}


def _key_name(raw: str | int) -> str | None:
    if isinstance(raw, int):
        if 65 <= raw <= 90:
            return f"Key{chr(raw)}"
        if 48 <= raw <= 57:
            return f"Digit{raw - 48}"
        return _KEYCODE_NAMES.get(raw)
    if raw.startswith("#") and raw[1:].isdigit():
        return _key_name(int(raw[1:]))
    return raw


def parse_controls(raw: dict[str, Any] | None) -> Controls:
    """`Controls` from the page's answer to `DISCOVER_JS` (None when no game was found)."""
    if not raw:
        return Controls()
    keys: list[str] = []
    for item in [*raw.get("names", []), *raw.get("codes", [])]:
        name = _key_name(item)
        if name and name not in keys:
            keys.append(name)
    as_boxes = [tuple(float(v) for v in p) for p in raw.get("interactive", [])]
    objects = [tuple(float(v) for v in p) for p in raw.get("objects", [])]
    return Controls(keys=keys, pointer=bool(raw.get("pointer")) or bool(as_boxes),
                    interactive=as_boxes, objects=objects)  # type: ignore[arg-type]


def motion_axis(before: Any, after: Any) -> str | None:
    """``"x"``/``"y"`` when objects that exist in both snapshots mostly moved along that axis, else None."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return None
    b, a = before.get("objects") or {}, after.get("objects") or {}
    nx = ny = 0
    for key in set(b) & set(a):
        x0, y0, x1, y1 = b[key].get("x"), b[key].get("y"), a[key].get("x"), a[key].get("y")
        if None in (x0, y0, x1, y1):
            continue
        dx, dy = abs(x1 - x0), abs(y1 - y0)
        nx += dx > dy
        ny += dy > dx
    if nx == ny:
        return None if nx == 0 else "xy"
    return "x" if nx > ny else "y"


def adjacent_pair(boxes: list[tuple[float, float, float, float]], avoid: tuple[float, float] | None = None,
                  ) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """Two neighbouring objects of similar size (a board's tiles): the closest aligned pair, preferring pairs that
    do not involve ``avoid`` (the object a single click already selected)."""
    best: tuple[float, tuple[float, float], tuple[float, float]] | None = None
    pts = [b for b in boxes if b[2] > 0 and b[3] > 0][:80]
    for i, (x0, y0, w0, h0) in enumerate(pts):
        for x1, y1, w1, h1 in pts[i + 1:]:
            d = math.hypot(x1 - x0, y1 - y0)
            aligned = abs(x1 - x0) <= 2 or abs(y1 - y0) <= 2
            similar = 0.5 <= (w0 * h0) / max(1.0, w1 * h1) <= 2.0
            if d < 4 or not aligned or not similar or d > 2.5 * max(w0, h0, w1, h1):
                continue
            touches_avoid = avoid is not None and any(abs(px - avoid[0]) <= 2 and abs(py - avoid[1]) <= 2
                                                      for px, py in ((x0, y0), (x1, y1)))
            score = d + (10_000 if touches_avoid else 0)
            if best is None or score < best[0]:
                best = (score, (x0, y0), (x1, y1))
    return (best[1], best[2]) if best else None


def plan_actions(controls: Controls, axis: str | None, tried: tuple[str, ...] = ()) -> list[str]:
    """The order of the input sweep. ``axis`` is the game's own motion (`motion_axis`); ``tried`` actions (from an
    earlier attempt that ended the game) go last."""
    registered = list(controls.keys)
    directions = [k for k in (*_VERTICAL, *_HORIZONTAL) if k in registered]
    if axis and not directions:  # moving by itself and no key registered: the arrows are the best guess
        directions = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"]
    if axis == "y":
        directions.sort(key=lambda k: k not in _HORIZONTAL)
    order: list[str] = []
    pointer: list[str] = []
    if controls.interactive:
        pointer.append("click-interactive")
    if len(controls.interactive) >= 2 or (controls.pointer and len(controls.objects) >= 2):
        pointer += ["click-pair", "drag-pair"]
    pointer.append("click-grid")
    start = [k for k in START_KEYS if k in registered]
    others = [k for k in registered if k not in directions and k not in start and k not in _LAST]
    if axis:  # moving by itself: turn first (the perpendicular pair), then start keys, then the rest
        perpendicular = [k for k in directions if k in (_VERTICAL if axis in ("x", "xy") else _HORIZONTAL)]
        order += perpendicular + start + others + [k for k in directions if k not in perpendicular] + pointer
    elif registered:
        order += start + directions + others + pointer
    else:
        order += pointer[:1] + ["ArrowRight", "Space"] + pointer[1:]
    order += [k for k in GENERIC_KEYS if k not in order] + [k for k in registered if k in _LAST]
    seen: list[str] = []
    for a in order:
        if a not in seen:
            seen.append(a)
    return [a for a in seen if a not in tried] + [a for a in seen if a in tried]
