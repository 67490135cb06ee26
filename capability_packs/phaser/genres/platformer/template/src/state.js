// Pure game rules of the platformer template (contract 2). No Phaser, no DOM, no randomness, no clock: time
// only arrives through tick(state, tables, dtMs, input). Every gameplay number comes from data/*.json.
import { bodyAtStart, stepBody, bodyOutcome, touchesCoin } from './physics.js';

export const GENRE = 'platformer'; // the hook's genre and template id (src/hook.js, shared by the pack)
export const actionsFor = () => JSON.parse(JSON.stringify(ACTIONS));
export { validateTables } from './tables.js';

// The one start-key constant: Menu and GameOver listen to it, the hook reports it.
export const START_KEYS = ['Enter', 'Space'];
export const ABANDON_KEYS = ['Escape'];
// The action vocabulary (window.__TIER2__.actions()); keys are KeyboardEvent.code names, keys[0] is pressed by
// the validator. The controls hints are built from this table.
export const ACTIONS = {
  left: { keys: ['ArrowLeft', 'KeyA'], label: 'run left' },
  right: { keys: ['ArrowRight', 'KeyD'], label: 'run right' },
  jump: { keys: ['Space', 'ArrowUp', 'KeyW'], label: 'jump' },
  start: { keys: START_KEYS, label: 'start' },
  abandon: { keys: ABANDON_KEYS, label: 'quit to menu' },
};
const PLAY_ACTIONS = ['left', 'right', 'jump', 'abandon'];
const MAX_STEPS_PER_FRAME = 5; // after a long stall, catch up at most this many physics steps
const STEP_EPS_MS = 1e-3; // frame deltas of 16.6666… ms must still give one step of 1000/60 ms

export const controlsFor = () => Object.fromEntries(Object.entries(ACTIONS).map(([k, a]) => [k, [...a.keys]]));
export const playActions = () => PLAY_ACTIONS.map((k) => ({ name: k, ...ACTIONS[k] }));

export const levelOf = (st, tables) => tables.levels.levels[st.level_index];

function enterLevel(st, tables, index) {
  const lv = tables.levels.levels[index];
  st.level_index = index;
  st.body = bodyAtStart(lv, tables.physics);
  st.facing = 1;
  st.time_left_ms = lv.time_limit_ms;
  st.taken = lv.coins.map(() => false);
  st.respawn_ms = 0;
}

export function createState(tables) {
  const st = {
    level_index: 0, lives: tables.levels.lives, coins: 0, score: 0, deaths: 0, levels_cleared: 0,
    elapsed_ms: 0, outcome: 'running', lost_reason: null, acc_ms: 0, jump_seen: false,
  };
  enterLevel(st, tables, 0);
  return st;
}

function lose(st, reason, events) {
  st.outcome = 'lost';
  st.lost_reason = reason;
  events.push({ type: 'lost', reason });
}

function die(st, tables, reason, events) {
  st.lives -= 1;
  st.deaths += 1;
  events.push({ type: 'death', reason });
  if (st.lives <= 0) {
    lose(st, reason, events);
    return;
  }
  st.respawn_ms = tables.physics.respawn_ms;
  if (st.respawn_ms <= 0) respawn(st, tables, events);
}

function respawn(st, tables, events) {
  st.respawn_ms = 0;
  st.body = bodyAtStart(levelOf(st, tables), tables.physics);
  events.push({ type: 'respawn' });
}

function clearLevel(st, tables, events) {
  const rules = tables.levels;
  st.score += rules.exit_score + Math.floor(st.time_left_ms / 1000) * rules.time_bonus_per_s;
  st.levels_cleared += 1;
  if (st.level_index + 1 >= rules.levels.length) {
    st.outcome = 'won';
    events.push({ type: 'won' });
    return;
  }
  enterLevel(st, tables, st.level_index + 1);
  events.push({ type: 'level', index: st.level_index });
}

function stepOnce(st, tables, input, events, ms) {
  const lv = levelOf(st, tables);
  const phys = tables.physics;
  st.elapsed_ms += ms;
  st.time_left_ms = Math.max(0, st.time_left_ms - ms);
  if (st.time_left_ms <= 0) {
    lose(st, 'time', events);
    return;
  }
  if (st.respawn_ms > 0) {
    st.respawn_ms = Math.max(0, st.respawn_ms - ms);
    if (st.respawn_ms <= 0) respawn(st, tables, events);
    return;
  }
  const b = st.body;
  const wasGround = b.on_ground;
  if (stepBody(b, input, lv.platforms, lv.width, phys)) events.push({ type: 'jump' });
  if (b.on_ground && !wasGround) events.push({ type: 'land' });
  if (input.left !== input.right) st.facing = input.right ? 1 : -1;
  lv.coins.forEach((c, i) => {
    if (!st.taken[i] && touchesCoin(b, phys, c, tables.levels.coin_radius)) {
      st.taken[i] = true;
      st.coins += 1;
      st.score += tables.levels.coin_score;
      events.push({ type: 'coin', index: i });
    }
  });
  const end = bodyOutcome(b, lv, phys);
  if (end === 'pit' || end === 'hazard') die(st, tables, end, events);
  else if (end === 'exit') clearLevel(st, tables, events);
}

// Advance game time by dtMs with the held input {left, right, jump}: whole physics steps of
// 1000 / steps_per_second ms (the remainder carries over). Returns the events of the steps run
// ({type: 'jump' | 'land' | 'coin' | 'death' | 'respawn' | 'level' | 'won' | 'lost', ...}).
export function tick(st, tables, dtMs, input = {}) {
  const events = [];
  if (st.outcome !== 'running') return events;
  if (input.jump) st.jump_seen = true; // a press shorter than one step still jumps
  const ms = 1000 / tables.physics.steps_per_second;
  const dt = typeof dtMs === 'number' && Number.isFinite(dtMs) ? Math.max(0, dtMs) : 0;
  st.acc_ms = Math.min(st.acc_ms + dt, ms * MAX_STEPS_PER_FRAME);
  while (st.acc_ms >= ms - STEP_EPS_MS && st.outcome === 'running') {
    st.acc_ms -= ms;
    stepOnce(st, tables, { left: !!input.left, right: !!input.right, jump: !!input.jump || st.jump_seen }, events, ms);
    st.jump_seen = false;
  }
  return events;
}

export function abandon(st) {
  if (st.outcome !== 'running') return false;
  st.outcome = 'abandoned';
  return true;
}

export const coinsTotal = (tables) => tables.levels.levels.reduce((n, lv) => n + lv.coins.length, 0);

// JSON-only snapshot for window.__TIER2__.state() (the hook adds `scene`).
export function snapshot(st, tables) {
  const lv = levelOf(st, tables);
  const b = st.body;
  const { w, h } = tables.physics.player;
  return {
    outcome: st.outcome, lost_reason: st.lost_reason, elapsed_ms: Math.round(st.elapsed_ms), score: st.score,
    coins: st.coins, coins_total: coinsTotal(tables), coins_left: st.taken.filter((t) => !t).length,
    lives: st.lives, deaths: st.deaths, level: st.level_index + 1, levels: tables.levels.levels.length,
    level_name: lv.name, levels_cleared: st.levels_cleared, time_left_ms: Math.round(st.time_left_ms),
    respawn_ms: st.respawn_ms,
    player: {
      x: b.x, y: b.y, vx: b.vx, vy: b.vy, on_ground: b.on_ground, w, h, facing: st.facing,
      coyote_ms: b.coyote_ms, buffer_ms: b.buffer_ms, jump_held: b.jump_held, air_jumps: b.air_jumps,
    },
    player_y: b.y,
    exit: { x: lv.exit.x, y: lv.exit.y, w: lv.exit.w, h: lv.exit.h },
  };
}
