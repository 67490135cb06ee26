// window.__TIER2__: the test hook of contract 2 (see the pack's docs/genre-kit.md). Never add other hooks.
// Shared by every genre of the pack: what is the genre's comes from its state.js (GENRE, snapshot, controlsFor,
// actionsFor).
import Phaser from 'phaser';
import { assetReport } from './assets.js';
import { GENRE, snapshot, controlsFor, actionsFor } from './state.js';

const SCENE_KEYS = ['Boot', 'Preload', 'Menu', 'Play', 'GameOver'];
const FRAME_MS = 1000 / 60;

export function installHook(game, tables) {
  const controls = controlsFor(tables);
  const actions = actionsFor(tables);

  function scene() {
    const mgr = game.scene;
    if (!mgr || !mgr.isBooted) return 'Boot';
    const active = mgr.getScenes(true, true).map((s) => s.sys.settings.key).filter((k) => SCENE_KEYS.includes(k));
    return active.length ? active[0] : 'Boot';
  }

  const current = () => game.registry.get('state');

  function advance(ms) {
    const step = Math.max(0, Number(ms) || 0);
    const clock = window.__tier2Clock;
    if (clock && typeof clock.advance === 'function') {
      clock.advance(step);
      return game.loop.frame;
    }
    // No virtual clock: drive the loop by hand with manual timestamps
    // (TimeStep.step(t) calls game.step(t, delta) and counts the frame).
    const loop = game.loop;
    if (!loop || !loop.started) return loop ? loop.frame : 0;
    let t = Math.max(loop.lastTime || 0, window.performance.now());
    for (let left = step; left > 0; left -= FRAME_MS) {
      t += Math.min(FRAME_MS, left);
      loop.step(t);
    }
    return loop.frame;
  }

  window.__TIER2__ = {
    contract: 2,
    pack: 'phaser',
    genre: GENRE,
    template: GENRE,
    phaserVersion: Phaser.VERSION,
    game,
    scene,
    state: () => ({ scene: scene(), ...snapshot(current(), tables) }),
    outcome: () => current().outcome,
    frame: () => game.loop.frame,
    controls: () => JSON.parse(JSON.stringify(controls)),
    actions: () => JSON.parse(JSON.stringify(actions)),
    advance,
    assets: () => assetReport(game), // {registered, loaded, failed, roles: {role: [texture keys on screen]}}
  };
  return window.__TIER2__;
}
