"""Generic-mode probe: any Phaser (or plain canvas) game without the tier2 hook.

The game is found by engine introspection (the virtual-clock init script captures the Phaser.Game when it binds
its step function); state is a snapshot of the active scenes' display lists (object types, positions,
visibility, texts, frames). A start sweep (Space, Enter, S, a click) gets past a title screen; then keyboard and
pointer bursts, including clicks on the game's interactive objects, must change that state beyond what it does
on its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path
from typing import Any

from tier2.browser import BrowserPool, GameSession
from tier2.validators.pixels import pixel_stats
from tier2.validators.probing import measure_input, run_bounded
from tier2.validators.trace import InputProbe, PlayTrace

__all__ = ["probe_generic_game", "START_SWEEP", "INPUT_SWEEP"]

START_SWEEP: tuple[str, ...] = ("Space", "Enter", "KeyS", "click")
INPUT_SWEEP: tuple[str, ...] = ("click-interactive", "ArrowRight", "Space", "click-grid", "ArrowLeft", "ArrowUp",
                                "KeyW", "KeyD", "Enter", "KeyA", "ArrowDown")
_MAX_START_STAGES = 3
_IDLE_MS = 150.0

# Objects get a stable id (a non-enumerable tag) so a spawned bullet does not shift every other object's key.
_SNAPSHOT_JS = """() => {
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

_STEP_JS = """(ms) => {
  window.__tier2Clock.advance(ms);
  const g = window.__tier2Game;
  return {game: !!g, booted: !!(g && g.isBooted),
          scenes: g && g.scene && g.scene.getScenes ? g.scene.getScenes(true).map((s) => s.sys.settings.key) : [],
          renderer: g && g.renderer ? g.renderer.type : null, frame: g && g.loop ? g.loop.frame : null,
          canvas: !!document.querySelector('canvas')};
}"""

_FRAMES_JS = f"""(n) => {{
  const snap = {_SNAPSHOT_JS};
  const out = [];
  for (let i = 0; i < n; i++) {{ window.__tier2Clock.advance(1000 / 60); out.push(snap()); }}
  return out;
}}"""

# Page coordinates of interactive game objects (world position scaled to the canvas's on-page box).
_INTERACTIVE_JS = """() => {
  const g = window.__tier2Game; const c = g && g.canvas;
  if (!g || !c) return [];
  const box = c.getBoundingClientRect();
  const sx = box.width / g.scale.width, sy = box.height / g.scale.height;
  const out = [];
  for (const s of g.scene.getScenes(true)) {
    for (const o of (s.children ? s.children.list : [])) {
      if (o.input && o.input.enabled && o.visible && typeof o.x === 'number') {
        const cam = s.cameras && s.cameras.main;
        const x = o.x - (cam ? cam.scrollX : 0), y = o.y - (cam ? cam.scrollY : 0);
        if (x >= 0 && y >= 0 && x <= g.scale.width && y <= g.scale.height)
          out.push([box.left + x * sx, box.top + y * sy]);
      }
    }
  }
  return out.slice(0, 5);
}"""


async def _snapshot(s: GameSession) -> Any:
    return await s.evaluate(_SNAPSHOT_JS)


async def _center(s: GameSession) -> tuple[float, float]:
    box = await s.canvas_box() or {"x": 0, "y": 0, "width": 800, "height": 600}
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


async def _act(s: GameSession, action: str, down: bool) -> None:
    if action.startswith("click"):
        if not down:
            return
        if action == "click-grid":  # a 3x3 grid over the canvas, one frame apart
            box = await s.canvas_box() or {"x": 0, "y": 0, "width": 800, "height": 600}
            for fx in (0.25, 0.5, 0.75):
                for fy in (0.3, 0.5, 0.7):
                    await s.p.mouse.click(box["x"] + box["width"] * fx, box["y"] + box["height"] * fy)
                    await s.advance(1000 / 60)
            return
        points = await s.evaluate(_INTERACTIVE_JS) if action == "click-interactive" else []
        x, y = points[0] if points else await _center(s)
        await s.p.mouse.move(x, y)
        await s.p.mouse.down()
        await s.p.mouse.up()
    elif down:
        await s.p.keyboard.down(action)
    else:
        await s.p.keyboard.up(action)


async def _probe_input(s: GameSession, action: str) -> InputProbe:
    return await measure_input(s, InputProbe(label=action, key=action), lambda: _snapshot(s),
                               lambda: _act(s, action, down=True), lambda: _act(s, action, down=False), _FRAMES_JS,
                               _IDLE_MS)


async def _pointer_tour(s: GameSession) -> None:
    """What every player does: once intros are over, move the pointer around the screen (hover handlers run)."""
    await s.advance(2500)
    box = await s.canvas_box() or {"x": 0, "y": 0, "width": 800, "height": 600}
    for fx, fy in ((0.1, 0.1), (0.5, 0.15), (0.9, 0.1), (0.85, 0.5), (0.5, 0.5), (0.15, 0.5), (0.1, 0.9),
                   (0.5, 0.85), (0.9, 0.9), (0.02, 0.5)):
        await s.p.mouse.move(box["x"] + box["width"] * fx, box["y"] + box["height"] * fy, steps=2)
        await s.advance(2 * 1000 / 60)


async def _sweep(s: GameSession) -> InputProbe:
    probe = InputProbe(label="none", key="none")
    for action in INPUT_SWEEP:
        probe = await _probe_input(s, action)
        if probe.frames_to_react is not None:
            break
    return probe


async def _settle(s: GameSession, trace: PlayTrace, budget_ms: float, real_s: float = 10.0) -> list[str]:
    """Advance until the set of active scenes has been stable for half a second of game time (giving assets,
    which load in real time, at least ``real_s`` seconds)."""
    scenes: list[str] = []
    elapsed = 0.0
    stable = 0
    deadline = time.monotonic() + real_s
    while elapsed < budget_ms or (not scenes and time.monotonic() < deadline):
        info = await s.evaluate(_STEP_JS, 100)
        elapsed += 100
        await asyncio.sleep(0.01 if info["scenes"] else 0.05)  # let real-time work (asset loading) progress
        trace.hook_present = info["game"]
        if info["booted"] and info["scenes"]:
            stable = stable + 1 if info["scenes"] == scenes else 0
            scenes = info["scenes"]
            trace.renderer = {1: "canvas", 2: "webgl"}.get(info["renderer"], str(info["renderer"]))
            if stable >= 5:  # the same scenes for half a second of game time: past boot/preload
                break
        if s.log.page_errors or await s.latched_errors():
            break
    trace.boot_virtual_ms += elapsed
    return scenes


async def _run(s: GameSession, trace: PlayTrace, out_dir: Path, boot_timeout_s: float) -> None:
    t = time.monotonic()
    trace.loaded = await s.load(boot_timeout_s)
    t = trace.lap("load", t)
    if not trace.loaded:
        return
    scenes = await _settle(s, trace, budget_ms=15_000)
    trace.booted, trace.first_scene = bool(scenes), ",".join(scenes) or None
    t = trace.lap("boot", t)
    if not trace.booted:
        trace.notes.append("no Phaser game found booted" if not trace.hook_present else "game never started a scene")
        return
    frame0 = await s.evaluate("() => window.__tier2Game.loop.frame")
    await s.advance(500)
    trace.frames = [int(frame0), int(await s.evaluate("() => window.__tier2Game.loop.frame"))]
    trace.frame_samples.append(("after boot", 500.0, trace.frames[1] - trace.frames[0]))
    path = out_dir / "01-start.png"
    png = await s.screenshot(path)
    trace.pixels.append(pixel_stats(png, str(path)))
    trace.picture_hashes.append(hashlib.sha256(png).hexdigest()[:16])
    trace.screenshots.append(str(path))
    t = trace.lap("frames+screenshot", t)
    for _stage in range(_MAX_START_STAGES):  # get past title / "click to start" screens
        for action in START_SWEEP:
            probe = await _probe_input(s, action)
            now = await _settle(s, trace, budget_ms=5_000)
            if set(now) - set(scenes):  # a new scene started (a preloader stopping is not progress)
                probe.label = f"start:{action}"
                probe.after = await _snapshot(s)  # the transition, once it has settled
                trace.inputs.append(probe)
                trace.notes.append(f"start sweep: {action} moved {scenes} → {now}")
                scenes = now
                break
        else:
            break
    t = trace.lap("start_sweep", t)
    probe = await _sweep(s)
    if probe.frames_to_react is None:  # intros and "get ready" timers: give the game 3 s and sweep again
        await s.advance(3000)
        probe = await _sweep(s)
    trace.inputs.append(probe)
    await _pointer_tour(s)
    t = trace.lap("input_sweep", t)
    before = int(await s.evaluate("() => window.__tier2Game.loop.frame"))
    await s.advance(300)
    trace.frame_samples.append(
        ("after input", 300.0, int(await s.evaluate("() => window.__tier2Game.loop.frame")) - before))
    path = out_dir / "02-play.png"
    png = await s.screenshot(path)
    trace.picture_hashes.append(hashlib.sha256(png).hexdigest()[:16])
    trace.pixels.append(pixel_stats(png, str(path)))
    trace.screenshots.append(str(path))
    trace.lap("final_screenshot", t)


async def probe_generic_game(
    pool: BrowserPool, url: str, out_dir: Path, serve_root: Path | None = None, boot_timeout_s: float = 15.0,
    total_timeout_s: float = 45.0, tables: dict[str, Any] | None = None, force_canvas: bool = True,
) -> PlayTrace:
    out_dir.mkdir(parents=True, exist_ok=True)
    trace = PlayTrace(mode="generic", url=url)
    async with GameSession(pool, url, serve_root=serve_root, force_canvas=force_canvas) as s:
        work = _run(s, trace, out_dir, boot_timeout_s)
        trace.timed_out, trace.errors, trace.dialogs = await run_bounded(s, work, total_timeout_s)
    return trace
