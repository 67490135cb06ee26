"""Contract-mode probe: boot the game on the virtual clock, play a short script, record what happened.

Each step is bounded in wall-clock time; a page that stops answering (an infinite loop, a dialog, a dead
renderer) ends the probe with ``timed_out`` set instead of hanging.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tier2.browser import BrowserPool, GameSession
from tier2.hostio import ensure_dir
from tier2.packs import EngineAdapter, Genre
from tier2.validators.latch import play_latches
from tier2.validators.legibility import collect_legibility
from tier2.validators.pixels import pixel_stats
from tier2.validators.probing import measure_input, run_bounded
from tier2.validators.trace import InputProbe, PlayTrace

__all__ = ["probe_contract_game", "BOOT_SCENES", "GenreResolver"]

#: (hook genre, hook contract) -> the pack's genre to play it as, or None
GenreResolver = Callable[[str | None, int | None], Genre | None]
BOOT_SCENES = frozenset({"Boot", "Preload"})
_HOOK = "window.__TIER2__"
_IDLE_MS = 150.0
#: at most this many actions are probed one by one after start
MAX_PROBED_ACTIONS = 4
_NOT_PROBED = frozenset({"start", "abandon", "wait"})


async def _state(s: GameSession) -> dict[str, Any] | None:
    expr = f"() => {_HOOK} ? JSON.parse(JSON.stringify({_HOOK}.state())) : null"
    state: dict[str, Any] | None = await s.evaluate(expr)
    return state


async def _scene(s: GameSession) -> str | None:
    scene: str | None = await s.evaluate(f"() => {_HOOK} ? {_HOOK}.scene() : null")
    return scene


_BOOT_STEP_JS = f"""(ms) => {{
  window.__tier2Clock.advance(ms);
  const h = {_HOOK};
  const e = h && h.game && window.__tier2Engine ? window.__tier2Engine.info(h.game) : null;
  return {{hook: !!h, booted: !!(e && e.booted), scene: h ? h.scene() : null, renderer: e ? e.renderer : null}};
}}"""

# One round trip per input probe: advance frame by frame, recording a snapshot after each frame.
_FRAMES_JS = f"""(n) => {{
  const out = [];
  for (let i = 0; i < n; i++) {{
    window.__tier2Clock.advance(1000 / 60);
    out.push(JSON.parse(JSON.stringify({_HOOK}.state())));
  }}
  return out;
}}"""


async def _boot(s: GameSession, trace: PlayTrace, boot_budget_ms: float) -> None:
    elapsed = 0.0
    while elapsed < boot_budget_ms:
        info = await s.step(_BOOT_STEP_JS, 100)
        elapsed += 100
        trace.hook_present = bool(info["hook"])
        if info["booted"] and info["scene"] and info["scene"] not in BOOT_SCENES:
            trace.booted, trace.first_scene = True, info["scene"]
            trace.renderer = str(info["renderer"])
            break
        if s.log.page_errors or await s.latched_errors():
            break
    trace.boot_virtual_ms = elapsed


async def _input_probe(s: GameSession, label: str, key: str) -> InputProbe:
    return await measure_input(s, InputProbe(label=label, key=key), lambda: _state(s),
                               lambda: s.p.keyboard.down(key), lambda: s.p.keyboard.up(key), _FRAMES_JS, _IDLE_MS)


async def _shot(s: GameSession, trace: PlayTrace, out_dir: Path, name: str) -> None:
    path = out_dir / f"{name}.png"
    png = await s.screenshot(path)
    trace.picture_hashes.append(hashlib.sha256(png).hexdigest()[:16])
    trace.screenshots.append(str(path))
    trace.pixels.append(pixel_stats(png, str(path)))
    await collect_legibility(s, trace, name)
    await _assets(s, trace, name)


_ASSETS_JS = (f"() => {{ try {{ return {_HOOK} && typeof {_HOOK}.assets === 'function' ? "
              f"JSON.parse(JSON.stringify({_HOOK}.assets())) : null; }} "
              "catch (e) { return {error: String(e)}; } }")


async def _assets(s: GameSession, trace: PlayTrace, screen: str) -> None:
    """Merge the game's asset report (`window.__TIER2__.assets()`, pack games since the asset pool) into the trace:
    what loaded or failed, and which texture key each role's display objects use on this screen."""
    raw = await s.evaluate(_ASSETS_JS)
    if not isinstance(raw, dict):
        return
    if "error" in raw:
        trace.notes.append(f"__TIER2__.assets() threw on screen {screen}: {str(raw['error'])[:200]}")
        return
    out = trace.assets or {"registered": [], "loaded": [], "failed": [], "roles": {}}
    for k in ("registered", "loaded", "failed"):
        vals = raw.get(k)
        if isinstance(vals, list):
            out[k] = list(dict.fromkeys([*out[k], *(str(v)[:100] for v in vals[:64])]))
    roles = raw.get("roles")
    if isinstance(roles, dict):
        for role, keys in list(roles.items())[:16]:
            if isinstance(keys, list):
                seen = out["roles"].setdefault(str(role)[:32], {})
                for key in keys[:32]:
                    screens = seen.setdefault(str(key)[:100], [])
                    if screen not in screens:
                        screens.append(screen)
    trace.assets = out


def _first_key(actions: dict[str, Any], name: str) -> str | None:
    keys = (actions.get(name) or {}).get("keys")
    return str(keys[0]) if isinstance(keys, list) and keys else None


def _probe_order(actions: dict[str, Any], genre: Genre | None) -> list[str]:
    """The game's actions to probe one by one (each must change the state, `input_changes_state`): the genre's
    witness actions (the genre gate reads them), or the first action when the genre is unknown. Other actions may
    rightly do nothing in the opening state (deliver with nothing in stock); the latch plays press them all."""
    names = [a for a in actions if a not in _NOT_PROBED]
    chosen: list[str] = []
    for rule in genre.spec.observe if genre else []:
        hit = next((a for a in names if a == rule.action or a.startswith(rule.action + "_")), None)
        if hit and hit not in chosen:
            chosen.append(hit)
    return chosen or names[:1]


async def _actions(s: GameSession, controls: dict[str, Any], genre: Genre | None) -> dict[str, Any]:
    """The game's action vocabulary: ``actions()`` (contract 2), else its contract-1 controls translated by the
    genre's probe module (``actions_from_controls``)."""
    raw = await s.evaluate(f"() => {_HOOK}.actions ? JSON.parse(JSON.stringify({_HOOK}.actions())) : null")
    if isinstance(raw, dict):
        return {str(k): v for k, v in raw.items() if isinstance(v, dict) and isinstance(v.get("keys"), list)
                and v["keys"] and all(isinstance(k, str) and 0 < len(k) <= 32 for k in v["keys"])}
    convert = genre.code.actions_from_controls if genre else None
    return dict(convert(controls)) if convert is not None else {}


async def _run(s: GameSession, trace: PlayTrace, out_dir: Path, boot_timeout_s: float,
               tables: dict[str, Any] | None, genre: Genre | None, resolve_genre: GenreResolver | None) -> None:
    t = time.monotonic()
    trace.loaded = await s.load(boot_timeout_s)
    t = trace.lap("load", t)
    if not trace.loaded:
        return
    await _boot(s, trace, boot_budget_ms=5000)
    t = trace.lap("boot", t)
    if not trace.booted:
        return
    trace.frames.append(int(await s.evaluate(f"() => {_HOOK}.frame()")))
    await s.advance(500)
    trace.frames.append(int(await s.evaluate(f"() => {_HOOK}.frame()")))
    trace.frame_samples.append(("after boot", 500.0, trace.frames[1] - trace.frames[0]))
    await _shot(s, trace, out_dir, "01-menu")
    t = trace.lap("frames+screenshot", t)
    controls = await s.evaluate(f"() => {_HOOK}.controls ? {_HOOK}.controls() : null") or {}
    if genre is None and resolve_genre is not None:
        info = await s.evaluate(f"() => ({{genre: {_HOOK}.genre, contract: {_HOOK}.contract}})") or {}
        named, contract = info.get("genre"), info.get("contract")
        genre = resolve_genre(named if isinstance(named, str) else None,
                              contract if isinstance(contract, int) else None)
    actions = await _actions(s, controls, genre)
    trace.controls = {"actions": actions} if actions else trace.controls
    start_key = _first_key(actions, "start") or str((controls.get("start") or ["Space"])[0])
    trace.inputs.append(await _input_probe(s, "start", start_key))
    await s.advance(300)
    scene = await _scene(s)
    if scene == "Play":
        for name in _probe_order(actions, genre)[:MAX_PROBED_ACTIONS]:
            key = _first_key(actions, name)
            if key:
                trace.inputs.append(await _input_probe(s, name, key))
    else:
        trace.notes.append(f"start key {start_key!r} left the game in scene {scene!r}")
    t = trace.lap("inputs", t)
    before = int(await s.evaluate(f"() => {_HOOK}.frame()"))
    await s.advance(200)
    trace.frame_samples.append(("after input", 200.0, int(await s.evaluate(f"() => {_HOOK}.frame()")) - before))
    await _shot(s, trace, out_dir, "02-play")
    t = trace.lap("final_screenshot", t)
    if scene == "Play":
        latch = await play_latches(s, actions, genre, tables, observe=lambda screen: _assets(s, trace, screen))
        trace.latch = asdict(latch)
        trace.latch.update(idle=latch.idle_outcome, abandon=latch.abandon_outcome, win=latch.win_outcome,
                           lose=latch.lose_outcome)
        await _shot(s, trace, out_dir, "03-end")
        trace.lap("latch_split", t)


async def probe_contract_game(
    pool: BrowserPool, url: str, out_dir: Path, serve_root: Path | Sequence[Path] | None = None,
    boot_timeout_s: float = 15.0,
    total_timeout_s: float = 45.0, tables: dict[str, Any] | None = None, force_canvas: bool = True,
    genre: Genre | None = None, resolve_genre: GenreResolver | None = None, engine: EngineAdapter | None = None,
) -> PlayTrace:
    """Load the built game at ``url`` and record a `PlayTrace`; never raises for game faults. ``genre`` (the
    pack's genre of the project; else ``resolve_genre`` maps the hook's ``genre`` and ``contract`` to one) and
    ``tables`` (the game's data) let the latch split win and lose by playing; ``engine``: the pack's engine adapter
    (None: the configured pack's)."""
    ensure_dir(out_dir)  # under a project's .tier2: no planted link followed (tier2.hostio)
    trace = PlayTrace(mode="contract", url=url)
    async with GameSession(pool, url, serve_root=serve_root, force_canvas=force_canvas, engine=engine) as s:
        work = _run(s, trace, out_dir, boot_timeout_s, tables, genre, resolve_genre)
        trace.timed_out, trace.errors, trace.dialogs = await run_bounded(s, work, total_timeout_s, trace=trace)
        trace.blocked = list(s.log.blocked_requests)
    return trace
