"""What the generic probe can observe and do on a page: display-list snapshots, controls discovery, and the
actions of the input sweep (keys, clicks, two clicks on adjacent objects, drags, a grid of clicks)."""

from __future__ import annotations

from typing import Any

from tier2.browser import GameSession
from tier2.validators.controls import DISCOVER_JS, Controls, adjacent_pair, motion_axis, parse_controls
from tier2.validators.probing import measure_input
from tier2.validators.trace import InputProbe

__all__ = ["FRAMES_JS", "FRAME_JS", "MISSING_TEXTURES_JS", "SNAPSHOT_JS", "STEP_JS", "act", "discover", "probe_input",
           "rediscover", "scenes_of", "snapshot"]

_IDLE_MS = 150.0
_FRAME_MS = 1000 / 60

# The page's engine adapter (the pack's page.js, `tier2.packs.engine`) reads the game: the active scenes' display
# lists under stable ids (a spawned bullet does not shift every other object's key), boot and loop state, the
# objects drawn with the engine's placeholder for a texture that did not load.
SNAPSHOT_JS = "() => window.__tier2Engine ? window.__tier2Engine.snapshot() : null"

STEP_JS = """(ms) => {
  window.__tier2Clock.advance(ms);
  const e = window.__tier2Engine;
  return e ? e.info() : {game: false, booted: false, scenes: [], renderer: null, frame: null,
                         canvas: !!document.querySelector('canvas')};
}"""

#: visible display objects (containers walked) drawn with the engine's missing-texture placeholder
MISSING_TEXTURES_JS = "() => window.__tier2Engine ? window.__tier2Engine.missingTextures() : 0"

#: the engine's loop frame counter
FRAME_JS = "() => window.__tier2Engine ? window.__tier2Engine.frame() : null"

FRAMES_JS = f"""(n) => {{
  const snap = {SNAPSHOT_JS};
  const out = [];
  for (let i = 0; i < n; i++) {{ window.__tier2Clock.advance(1000 / 60); out.push(snap()); }}
  return out;
}}"""


async def snapshot(s: GameSession) -> Any:
    return await s.evaluate(SNAPSHOT_JS)


def scenes_of(snap: Any) -> set[str]:
    """Active scene keys of a snapshot."""
    return set(filter(None, str((snap or {}).get("scenes") or "").split(",")))


async def discover(s: GameSession, watch_ms: float = 250.0) -> tuple[Controls, str | None]:
    """The game's controls and the axis it moves along by itself over ``watch_ms`` of game time (None: still)."""
    before = await snapshot(s)
    await s.advance(watch_ms)
    after = await snapshot(s)
    return parse_controls(await s.evaluate(DISCOVER_JS)), motion_axis(before, after)


async def rediscover(s: GameSession) -> Controls:
    """The game's input registrations now (one round trip, no clock advance): keys a later scene, a selection or
    a timer registered since the last look."""
    return parse_controls(await s.evaluate(DISCOVER_JS))


async def _canvas_box(s: GameSession) -> dict[str, float]:
    box = await s.canvas_box()
    if not box:
        return {"x": 0, "y": 0, "width": 800, "height": 600}
    return {"x": box["x"], "y": box["y"], "width": box["width"], "height": box["height"]}


async def _click(s: GameSession, x: float, y: float) -> None:
    await s.p.mouse.move(x, y)
    await s.p.mouse.down()
    await s.p.mouse.up()


async def _pointer(s: GameSession, action: str) -> None:
    box = await _canvas_box(s)
    if action == "click-grid":  # a 3x3 grid over the canvas, one frame apart
        for fx in (0.25, 0.5, 0.75):
            for fy in (0.3, 0.5, 0.7):
                await _click(s, box["x"] + box["width"] * fx, box["y"] + box["height"] * fy)
                await s.advance(_FRAME_MS)
        return
    center = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    controls = parse_controls(await s.evaluate(DISCOVER_JS)) if action != "click" else Controls()
    first = controls.interactive[0][:2] if controls.interactive else None
    if action in ("click", "click-interactive"):
        x, y = first or center
        await _click(s, x, y)
        return
    boxes = controls.interactive if len(controls.interactive) >= 2 else controls.objects
    pair = adjacent_pair(boxes, avoid=first) or adjacent_pair(boxes)
    if pair is None:  # no board found: two neighbouring points at the centre
        pair = (center, (center[0] + box["width"] / 10, center[1]))
    (ax, ay), (bx, by) = pair
    if action == "click-pair":  # select, then the neighbour (swap puzzles)
        await _click(s, ax, ay)
        await s.advance(6 * _FRAME_MS)
        await _click(s, bx, by)
    else:  # drag-pair: press on one object, drag it onto its neighbour
        await s.p.mouse.move(ax, ay)
        await s.p.mouse.down()
        await s.advance(2 * _FRAME_MS)
        for i in range(1, 5):
            await s.p.mouse.move(ax + (bx - ax) * i / 4, ay + (by - ay) * i / 4)
            await s.advance(_FRAME_MS)
        await s.p.mouse.up()


async def act(s: GameSession, action: str, down: bool) -> None:
    """Press (``down``) or release one sweep action; pointer actions happen entirely on press."""
    if action.startswith(("click", "drag")):
        if down:
            await _pointer(s, action)
    elif down:
        await s.p.keyboard.down(action)
    else:
        await s.p.keyboard.up(action)


async def probe_input(s: GameSession, action: str) -> InputProbe:
    return await measure_input(s, InputProbe(label=action, key=action), lambda: snapshot(s),
                               lambda: act(s, action, down=True), lambda: act(s, action, down=False), FRAMES_JS,
                               _IDLE_MS)
