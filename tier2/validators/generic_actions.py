"""What the generic probe can observe and do on a page: display-list snapshots, controls discovery, and the
actions of the input sweep (keys, clicks, two clicks on adjacent objects, drags, a grid of clicks)."""

from __future__ import annotations

from typing import Any

from tier2.browser import GameSession
from tier2.validators.controls import DISCOVER_JS, Controls, adjacent_pair, motion_axis, parse_controls
from tier2.validators.probing import measure_input
from tier2.validators.trace import InputProbe

__all__ = ["FRAMES_JS", "MISSING_TEXTURES_JS", "SNAPSHOT_JS", "STEP_JS", "act", "discover", "probe_input",
           "rediscover", "scenes_of", "snapshot"]

_IDLE_MS = 150.0
_FRAME_MS = 1000 / 60

# Objects get a stable id (a non-enumerable tag) so a spawned bullet does not shift every other object's key.
SNAPSHOT_JS = """() => {
  const g = window.__tier2Game;
  if (!g || !g.scene) return null;
  window.__t2ids = window.__t2ids || 1;
  const r = (v) => (typeof v === 'number' && isFinite(v)) ? Math.round(v) : null;
  const active = g.scene.getScenes ? g.scene.getScenes(true) : [];
  const objects = {};
  for (const s of active) {
    const list = (s.children && s.children.list) ? s.children.list : [];
    for (const o of list.slice(0, 120)) {
      if (!o.__t2id) Object.defineProperty(o, '__t2id', {value: window.__t2ids++, enumerable: false});
      objects[s.sys.settings.key + '#' + o.__t2id] = {type: o.type, x: r(o.x), y: r(o.y), visible: o.visible ? 1 : 0,
        alpha: r((o.alpha || 0) * 100), text: (typeof o.text === 'string') ? o.text.slice(0, 60) : null,
        frame: (o.frame && o.frame.name !== undefined) ? String(o.frame.name) : null};
    }
  }
  return {scenes: active.map((s) => s.sys.settings.key).join(','), objects};
}"""

STEP_JS = """(ms) => {
  window.__tier2Clock.advance(ms);
  const g = window.__tier2Game;
  return {game: !!g, booted: !!(g && g.isBooted),
          scenes: g && g.scene && g.scene.getScenes ? g.scene.getScenes(true).map((s) => s.sys.settings.key) : [],
          renderer: g && g.renderer ? g.renderer.type : null, frame: g && g.loop ? g.loop.frame : null,
          canvas: !!document.querySelector('canvas')};
}"""

#: visible display objects (containers walked) drawn with Phaser's placeholder for a texture that did not load
MISSING_TEXTURES_JS = """() => {
  const g = window.__tier2Game; let n = 0;
  if (!g || !g.scene || !g.scene.getScenes) return 0;
  const walk = (list) => { for (const o of list.slice(0, 500)) {
    if (o.visible !== false && o.texture && o.texture.key === '__MISSING') n++;
    if (o.list && o.list.length) walk(o.list);
  } };
  for (const s of g.scene.getScenes(true)) walk((s.children && s.children.list) || []);
  return n;
}"""

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
