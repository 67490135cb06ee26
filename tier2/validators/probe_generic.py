"""Generic-mode probe: any game of a pack's engine (or a plain canvas game) without the tier2 hook.

The game is found by engine introspection (the engine adapter's in-page script, `tier2.packs.engine`, finds the game
object and answers through ``window.__tier2Engine``); state is a snapshot of the active scenes' display lists
(object types, positions, visibility, texts, frames). The game's controls are discovered first (`controls`); a still
title screen gets the start sweep (registered start keys, then Space, Enter, S, a click); then the input sweep tries
the game's controls in an order that gives games that move by themselves a chance (`controls.plan_actions`) — keys,
clicks, two clicks on adjacent objects, drags — until one changes that state beyond what it does on its own. A game
that ended during the sweep is started again from a fresh page, untried actions first.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tier2.browser import BrowserPool, GameSession
from tier2.browser.session import machine_load_factor
from tier2.hostio import ensure_dir
from tier2.packs.engine import EngineAdapter
from tier2.validators.controls import Controls, plan_actions
from tier2.validators.generic_actions import (
    FRAME_JS,
    MISSING_TEXTURES_JS,
    STEP_JS,
    discover,
    probe_input,
    rediscover,
    scenes_of,
    snapshot,
)
from tier2.validators.l1.runtime_gates import input_reaction, reaction, state_delta
from tier2.validators.legibility import collect_legibility
from tier2.validators.pixels import pixel_stats
from tier2.validators.probing import run_bounded
from tier2.validators.trace import InputProbe, PlayTrace

__all__ = ["probe_generic_game", "START_SWEEP"]

START_SWEEP: tuple[str, ...] = ("Space", "Enter", "KeyS", "click")
_MAX_START_STAGES = 3
_MAX_SWEEP_ACTIONS = 24


#: a frame costing more real ms than this (software WebGL, say) makes the probe's idle waits shorter
_SLOW_FRAME_MS = 30.0


def _wait_ms(s: GameSession, ms: float) -> float:
    """An idle wait of ``ms`` of game time, shortened (at least 1 s) for a page whose frames are slow."""
    return ms if (s.frame_ms or 0.0) < _SLOW_FRAME_MS else min(ms, max(1000.0, ms / 3))


async def _pointer_tour(s: GameSession) -> None:
    """What every player does: once intros are over, move the pointer around the screen (hover handlers run)."""
    await s.advance(_wait_ms(s, 2500))
    box = await s.canvas_box() or {"x": 0, "y": 0, "width": 800, "height": 600}
    for fx, fy in ((0.1, 0.1), (0.5, 0.15), (0.9, 0.1), (0.85, 0.5), (0.5, 0.5), (0.15, 0.5), (0.1, 0.9),
                   (0.5, 0.85), (0.9, 0.9), (0.02, 0.5)):
        await s.p.mouse.move(box["x"] + box["width"] * fx, box["y"] + box["height"] * fy, steps=2)
        await s.advance(2 * 1000 / 60)


async def _settle(s: GameSession, trace: PlayTrace, budget_ms: float, real_s: float = 10.0) -> list[str]:
    """Advance until the set of active scenes has been stable for half a second of game time (giving assets,
    which load in real time, at least ``real_s`` seconds)."""
    scenes: list[str] = []
    elapsed = 0.0
    stable = 0
    deadline = time.monotonic() + real_s * machine_load_factor()  # assets load in real time: slower when loaded
    while elapsed < budget_ms or (not scenes and time.monotonic() < deadline):
        info = await s.step(STEP_JS, 100)
        elapsed += 100
        await asyncio.sleep(0.01 if info["scenes"] else 0.05)  # let real-time work (asset loading) progress
        trace.hook_present = info["game"]
        if info["booted"] and info["scenes"]:
            stable = stable + 1 if info["scenes"] == scenes else 0
            scenes = info["scenes"]
            trace.renderer = str(info["renderer"])
            if stable >= 5:  # the same scenes for half a second of game time: past boot/preload
                break
        if s.log.page_errors or await s.latched_errors():
            break
    trace.boot_virtual_ms += elapsed
    return scenes


async def _start_sweep(s: GameSession, trace: PlayTrace, scenes: list[str], controls: Controls,
                       starts: list[str]) -> list[str]:
    """Get past still title / "click to start" screens: start keys the game registered first, then the classic
    Space, Enter, S, click; each one given time to start its scene."""
    order = [k for k in controls.keys if k in START_SWEEP] + [a for a in START_SWEEP if a not in controls.keys]
    for _stage in range(_MAX_START_STAGES):
        for action in order:
            probe = await probe_input(s, action)
            now = await _settle(s, trace, budget_ms=5_000)
            if set(now) - set(scenes):  # a new scene started (a preloader stopping is not progress)
                probe.label = f"start:{action}"
                probe.after = await snapshot(s)  # the transition, once it has settled
                trace.inputs.append(probe)
                trace.notes.append(f"start sweep: {action} moved {scenes} → {now}")
                scenes = now
                starts.append(action)
                break
        else:
            break
    return scenes


def _record(trace: PlayTrace, probe: InputProbe, action: str, after: str | None = None) -> None:
    """One tried action for the controls report (``probe.sweep.tried``): did it react, what it changed."""
    trace.sweep = trace.sweep if trace.sweep is not None else {}
    tried = trace.sweep.setdefault("tried", [])
    changed = sorted(input_reaction(probe))
    entry: dict[str, Any] = {"action": action, "reacted": bool(changed and probe.frames_to_react is not None),
                             "changed": changed[:6], "transient": bool(probe.transient) and not
                             reaction(probe.before, probe.idle_after, probe.after)}
    if after:
        entry["after"] = after
    if len(tried) < 40:
        tried.append(entry)


async def _sweep(s: GameSession, trace: PlayTrace, order: list[str], starts: list[str],
                 tried: list[str]) -> tuple[InputProbe, bool]:
    """Try ``order`` until one action changes the game's state; a new scene started by an action is a start
    transition (recorded, then the new scene's controls are discovered and the sweep goes on). After an action
    that did not react, the game's input registrations are read again: keys registered since (a selected unit's
    commands, a later scene's controls, a "get ready" timer's) are tried next, right after what enabled them
    (select, then act). Returns the last probe and whether the game ended during the sweep (its scenes changed by
    themselves, or what moved froze)."""
    probe = InputProbe(label="none", key="none")
    ended = moved = False
    order = list(order)
    stages = 0
    known = set((trace.controls or {}).get("keys") or [])
    enabled_by: dict[str, str] = {}
    while order and len(tried) < _MAX_SWEEP_ACTIONS:
        action = order.pop(0)
        tried.append(action)
        probe = await probe_input(s, action)
        _record(trace, probe, action, enabled_by.get(action))
        drift = state_delta(probe.before, probe.idle_after)
        moved = moved or bool(drift)
        new_scenes = scenes_of(probe.after) - scenes_of(probe.idle_after)
        if probe.frames_to_react is not None and new_scenes and stages < _MAX_START_STAGES:
            now = await _settle(s, trace, budget_ms=5_000)
            probe.label, probe.after = f"start:{action}", await snapshot(s)
            trace.inputs.append(probe)
            trace.notes.append(f"input sweep: {action} started {sorted(new_scenes)} → {now}")
            starts.append(action)
            stages += 1
            controls, axis = await discover(s)
            _merge_controls(trace, controls)
            known |= set(controls.keys)
            order = plan_actions(controls, axis)
            continue
        if probe.frames_to_react is not None and input_reaction(probe):
            return probe, False
        if scenes_of(probe.before) != scenes_of(probe.idle_after) or (moved and not drift):
            ended = True  # the game changed scene by itself or stopped moving: it may be over
        fresh = [k for k in (await rediscover(s)).keys if k not in known]
        if fresh:  # registered since the last look: enabled by this action (or by time), tried next
            known |= set(fresh)
            _merge_controls(trace, Controls(keys=fresh))
            enabled_by.update({k: action for k in fresh})
            order = fresh + [a for a in order if a not in fresh]
    return probe, ended


def _merge_controls(trace: PlayTrace, controls: Controls) -> None:
    """Keys found by a later look join the controls report (``probe.controls.keys``, with ``found_later``)."""
    report = trace.controls if trace.controls is not None else {}
    keys = list(report.get("keys") or [])
    later = [k for k in controls.keys if k not in keys]
    if later:
        report["keys"] = keys + later
        report["found_later"] = list(report.get("found_later") or []) + later
    trace.controls = report


async def _fresh_start(s: GameSession, trace: PlayTrace, boot_timeout_s: float, starts: list[str]) -> bool:
    """Reload the game and replay the start actions that worked the first time (no idle time in between)."""
    if not await s.load(boot_timeout_s):
        return False
    if not await _settle(s, trace, budget_ms=15_000):
        return False
    for action in starts:
        await probe_input(s, action)
        await _settle(s, trace, budget_ms=5_000)
    return True


async def _explore(s: GameSession, trace: PlayTrace, scenes: list[str], boot_timeout_s: float) -> InputProbe:
    """Discover the controls, get past a still title screen, then sweep in the order `plan_actions` gives; start
    again from a fresh page when the game ended before any action reacted, and give intros 3 s."""
    controls, axis = await discover(s)
    trace.controls = {**controls.evidence(), "moving": axis}
    starts: list[str] = []
    if axis is None:
        scenes = await _start_sweep(s, trace, scenes, controls, starts)
        first = set(controls.keys)
        controls, axis = await discover(s)
        trace.controls = {**controls.evidence(), "moving": axis}
        if later := [k for k in controls.keys if k not in first]:
            trace.controls["found_later"] = later
    tried: list[str] = []
    probe, ended = await _sweep(s, trace, plan_actions(controls, axis), starts, tried)
    if probe.frames_to_react is None and ended:
        trace.notes.append(f"the game ended during the input sweep (after {', '.join(tried[-3:])}); "
                           "started again from a fresh page, untried actions first")
        if await _fresh_start(s, trace, boot_timeout_s, starts):
            controls, axis = await discover(s, watch_ms=50)
            first_try, tried = tried, []
            probe, ended = await _sweep(s, trace, plan_actions(controls, axis, tuple(first_try)), starts, tried)
    if probe.frames_to_react is None:  # intros and "get ready" timers: give the game 3 s and sweep again
        await s.advance(_wait_ms(s, 3000))
        controls, axis = await discover(s)
        _merge_controls(trace, controls)
        probe, _ = await _sweep(s, trace, plan_actions(controls, axis), starts, [])
    trace.sweep = {**(trace.sweep or {}), "order": tried[:12], "starts": starts, "ended_during_sweep": ended}
    return probe


async def _run(s: GameSession, trace: PlayTrace, out_dir: Path, boot_timeout_s: float) -> None:
    t = time.monotonic()
    trace.loaded = await s.load(boot_timeout_s)
    t = trace.lap("load", t)
    if not trace.loaded:
        return
    scenes = await _settle(s, trace, budget_ms=15_000)
    trace.booted, trace.first_scene = bool(scenes), ",".join(scenes) or None
    trace.boot_errors = s.log.page_errors + await s.latched_errors()
    t = trace.lap("boot", t)
    if not trace.booted:
        trace.webgl_refused = bool(await s.evaluate("() => !!window.__tier2WebglRefused"))
        trace.notes.append(f"no {s.engine.title} game found booted" if not trace.hook_present
                           else "game never started a scene")
        return
    trace.frame_ms = round(await s.measure_frame_cost(), 2)
    frame0 = await s.evaluate(FRAME_JS)
    await s.step("(ms) => window.__tier2Clock.advance(ms)", 500)
    trace.frames = [int(frame0), int(await s.evaluate(FRAME_JS))]
    trace.frame_samples.append(("after boot", 500.0, trace.frames[1] - trace.frames[0]))
    path = out_dir / "01-start.png"
    png = await s.screenshot(path)
    trace.pixels.append(pixel_stats(png, str(path)))
    trace.picture_hashes.append(hashlib.sha256(png).hexdigest()[:16])
    trace.screenshots.append(str(path))
    await collect_legibility(s, trace, "01-start")
    trace.missing_textures = max(trace.missing_textures, int(await s.evaluate(MISSING_TEXTURES_JS) or 0))
    t = trace.lap("frames+screenshot", t)
    trace.inputs.append(await _explore(s, trace, scenes, boot_timeout_s))
    await _pointer_tour(s)
    t = trace.lap("input_sweep", t)
    before = int(await s.evaluate(FRAME_JS))
    await s.advance(300)
    trace.frame_samples.append(
        ("after input", 300.0, int(await s.evaluate(FRAME_JS)) - before))
    path = out_dir / "02-play.png"
    png = await s.screenshot(path)
    trace.picture_hashes.append(hashlib.sha256(png).hexdigest()[:16])
    trace.pixels.append(pixel_stats(png, str(path)))
    trace.screenshots.append(str(path))
    await collect_legibility(s, trace, "02-play")
    trace.missing_textures = max(trace.missing_textures, int(await s.evaluate(MISSING_TEXTURES_JS) or 0))
    trace.lap("final_screenshot", t)


async def probe_generic_game(
    pool: BrowserPool, url: str, out_dir: Path, serve_root: Path | Sequence[Path] | None = None,
    boot_timeout_s: float = 15.0, total_timeout_s: float = 45.0, tables: dict[str, Any] | None = None,
    force_canvas: bool = True, engine: EngineAdapter | None = None,
) -> PlayTrace:
    """Load the page at ``url`` and record a generic-mode `PlayTrace`; never raises for game faults (``engine``:
    the adapter that reads the game, None: the configured pack's)."""
    ensure_dir(out_dir)  # under a project's .tier2: no planted link followed (tier2.hostio)
    trace = PlayTrace(mode="generic", url=url)
    async with GameSession(pool, url, serve_root=serve_root, force_canvas=force_canvas, engine=engine) as s:
        work = _run(s, trace, out_dir, boot_timeout_s)
        trace.timed_out, trace.errors, trace.dialogs = await run_bounded(s, work, total_timeout_s, trace=trace)
        trace.blocked = list(s.log.blocked_requests)
    return trace
