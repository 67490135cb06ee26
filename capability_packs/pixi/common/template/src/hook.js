// window.__TIER2__: the test hook of contract 2 (see the pack's docs/genre-kit.md). Never add other hooks.
// Shared by every genre of the pack: what is the genre's comes from its state.js (GENRE, snapshot, controlsFor,
// actionsFor).
import { VERSION } from 'pixi.js';
import { assetReport } from './assets.js';
import { GENRE, snapshot, controlsFor, actionsFor } from './state.js';

const FRAME_MS = 1000 / 60;

export function installHook(game, tables) {
  const controls = controlsFor(tables);
  const actions = actionsFor(tables);
  const scene = () => (game.booted && game.current ? game.current.key : 'Boot');
  const current = () => game.registry.get('state');

  function advance(ms) {
    const step = Math.max(0, Number(ms) || 0);
    const clock = window.__tier2Clock;
    if (clock && typeof clock.advance === 'function') {
      clock.advance(step);
      return game.frames;
    }
    // No virtual clock: tick the app's ticker by hand with manual timestamps
    const ticker = game.app && game.app.ticker;
    if (!game.booted || !ticker) return game.frames;
    let t = Math.max(ticker.lastTime || 0, window.performance.now());
    for (let left = step; left > 0; left -= FRAME_MS) {
      t += Math.min(FRAME_MS, left);
      ticker.update(t);
    }
    return game.frames;
  }

  window.__TIER2__ = {
    contract: 2,
    pack: 'pixi',
    genre: GENRE,
    template: GENRE,
    engineVersion: VERSION,
    game,
    scene,
    state: () => ({ scene: scene(), ...snapshot(current(), tables) }),
    outcome: () => current().outcome,
    frame: () => game.frames,
    controls: () => JSON.parse(JSON.stringify(controls)),
    actions: () => JSON.parse(JSON.stringify(actions)),
    advance,
    assets: () => assetReport(game), // {registered, loaded, failed, roles: {role: [asset ids on screen]}}
  };
  return window.__TIER2__;
}
