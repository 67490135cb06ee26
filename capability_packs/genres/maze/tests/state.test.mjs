// Pure rules of the maze template (src/state.js): node --test capability_packs/genres/maze/tests/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  validateTables, createState, move, tick, abandon, snapshot, enemyCell, controlsFor, actionsFor, controlsHint,
  parseMaze, timeLeftMs, START_KEYS,
} from '../template/src/state.js';

const load = (name) => JSON.parse(readFileSync(new URL(`../template/data/${name}.json`, import.meta.url)));
const base = () => ({ theme: load('theme'), mazes: load('mazes'), rules: load('rules') });
const RULES = { lives: 2, gem_score: 10, exit_score: 100, time_bonus_per_s: 1, enemy_step_ms: 500,
  move_repeat_delay_ms: 200, move_repeat_ms: 100 };
//  x: 0123456
const ROWS_A = [
  '#######',
  '#P.G.E#',
  '#.###.#',
  '#..X..#',
  '#######',
];
const ROWS_B = [
  '#######',
  '#P...G#',
  '#.###.#',
  '#....E#',
  '#######',
];
function small(enemies = []) {
  const t = base();
  t.rules = { ...RULES };
  t.mazes = { mazes: [
    { name: 'A', rows: ROWS_A, time_ms: 20000, enemies },
    { name: 'B', rows: ROWS_B, time_ms: 15000, enemies: [] },
  ] };
  return validateTables(t);
}
const walk = (st, dirs) => dirs.forEach((d) => move(st, d));

test('the shipped tables validate', () => {
  assert.doesNotThrow(() => validateTables(base()));
});

test('moving one cell per step; walls block without cost', () => {
  const st = createState(small());
  assert.deepEqual(st.player, { x: 1, y: 1 });
  assert.equal(move(st, 'up').reason, 'wall');
  assert.equal(move(st, 'right').ok, true);
  assert.deepEqual(snapshot(st).player, { x: 2, y: 1 });
  assert.equal(snapshot(st).player_x, 2);
  assert.equal(st.moves, 1);
  assert.equal(move(st, 'sideways').ok, false);
});

test('collecting every gem opens the exit; the exit clears the maze and the last one wins', () => {
  const st = createState(small());
  move(st, 'right');
  move(st, 'right');
  assert.equal(st.gems, 1);
  assert.equal(st.score, 10);
  assert.equal(st.exit_open, true);
  walk(st, ['right', 'right']);
  assert.equal(st.level, 1);
  assert.equal(st.outcome, 'running');
  assert.equal(st.score, 10 + 100 + 20);
  assert.deepEqual(st.player, { x: 1, y: 1 });
  assert.equal(snapshot(st).gems_total, 1);
  walk(st, ['down', 'down', 'right', 'right', 'right', 'right']);
  assert.equal(st.outcome, 'running', 'the exit stays shut until the gem is collected');
  walk(st, ['up', 'up', 'left', 'right']);
  assert.equal(st.gems, 1);
  walk(st, ['down', 'down']);
  assert.equal(st.outcome, 'won');
  assert.equal(move(st, 'left').ok, false);
});

test('a hazard costs a life and sends the player back; the last life loses', () => {
  const st = createState(small());
  walk(st, ['down', 'down', 'right', 'right']);
  assert.equal(st.lives, 1);
  assert.deepEqual(st.player, { x: 1, y: 1 });
  walk(st, ['down', 'down', 'right', 'right']);
  assert.equal(st.outcome, 'lost');
  assert.equal(st.lostReason, 'hazard');
});

test('enemies patrol back and forth on level time; contact costs a life', () => {
  const e = { path: [[5, 1], [5, 2], [5, 3]] };
  assert.deepEqual([0, 499, 500, 1000, 1500, 2000].map((ms) => enemyCell(e, ms, 500)),
    [{ x: 5, y: 1 }, { x: 5, y: 1 }, { x: 5, y: 2 }, { x: 5, y: 3 }, { x: 5, y: 2 }, { x: 5, y: 1 }]);
  assert.deepEqual(enemyCell({ path: [[2, 2]] }, 12345, 500), { x: 2, y: 2 });
  const st = createState(small([{ path: [[4, 3]] }]));
  walk(st, ['down', 'down', 'right']);
  assert.equal(st.lives, 2);
  tick(st, 16);
  assert.deepEqual(snapshot(st).enemies, [{ x: 4, y: 3 }]);
  const s2 = createState(small([{ path: [[1, 3], [2, 3]] }]));
  walk(s2, ['down']);
  tick(s2, 600);  // the enemy steps from (1, 3) to (2, 3); the player at (1, 2) is safe
  assert.equal(s2.lives, 2);
  move(s2, 'down');  // onto (1, 3): free now
  assert.equal(s2.lives, 2);
  tick(s2, 500);  // back onto (1, 3): caught
  assert.equal(s2.lives, 1);
  assert.deepEqual(s2.player, { x: 1, y: 1 });
});

test('time runs out per maze: idling 2 s is safe, the limit loses', () => {
  const st = createState(small());
  tick(st, 2000);
  assert.equal(st.outcome, 'running');
  assert.equal(timeLeftMs(st), 18000);
  tick(st, 18000);
  assert.equal(st.outcome, 'lost');
  assert.equal(st.lostReason, 'time');
  tick(st, NaN);
  assert.equal(st.outcome, 'lost');
});

test('abandon only while running; createState resets everything', () => {
  const t = small();
  const st = createState(t);
  walk(st, ['right', 'right']);
  assert.equal(abandon(st).ok, true);
  assert.equal(st.outcome, 'abandoned');
  assert.equal(abandon(st).ok, false);
  const fresh = snapshot(createState(t));
  assert.equal(fresh.gems, 0);
  assert.equal(fresh.level, 0);
  assert.equal(fresh.lives, 2);
  assert.equal(fresh.outcome, 'running');
  assert.deepEqual(JSON.parse(JSON.stringify(fresh)), fresh);
});

test('controls, actions and hint come from one table', () => {
  const acts = actionsFor();
  assert.deepEqual(acts.start.keys, START_KEYS);
  assert.deepEqual(acts.right.keys, ['ArrowRight', 'KeyD']);
  assert.deepEqual(acts.abandon.keys, ['Escape']);
  assert.ok(!('wait' in acts));
  assert.deepEqual(controlsFor().up, ['ArrowUp', 'KeyW']);
  assert.equal(controlsHint(), 'Arrows / WSAD: move   ·   Esc: quit');
  assert.deepEqual(parseMaze(ROWS_A).hazards, [{ x: 3, y: 3 }]);
});

const broken = [
  ['theme.json palette.bad', (t) => { t.theme.palette.bad = 'red'; }],
  ['theme.json gem_name', (t) => { t.theme.gem_name = ''; }],
  ['mazes.json mazes', (t) => { t.mazes.mazes = []; }],
  ['mazes.json mazes[0].rows[2]', (t) => { t.mazes.mazes[0].rows = [...ROWS_A]; t.mazes.mazes[0].rows[2] = '#.###'; }],
  ['mazes.json mazes[0].rows[1]', (t) => { t.mazes.mazes[0].rows = [...ROWS_A]; t.mazes.mazes[0].rows[1] = '#P.G.E?'; }],
  ['mazes.json mazes[0].rows', (t) => { t.mazes.mazes[0].rows = ROWS_A.map((r) => r.replace('P', '.')); }],
  ['mazes.json mazes[1].rows', (t) => { t.mazes.mazes[1].rows = ROWS_B.map((r) => r.replace('G', '.')); }],
  ['mazes.json mazes[0].time_ms', (t) => { t.mazes.mazes[0].time_ms = 500; }],
  ['mazes.json mazes[0].enemies[0].path[0]', (t) => { t.mazes.mazes[0].enemies = [{ path: [[0, 0]] }]; }],
  ['mazes.json mazes[0].enemies[0].path[1]', (t) => { t.mazes.mazes[0].enemies = [{ path: [[1, 1], [5, 3]] }]; }],
  ['rules.json lives', (t) => { t.rules.lives = 0; }],
  ['rules.json enemy_step_ms', (t) => { t.rules.enemy_step_ms = 10; }],
];
for (const [where, breakIt] of broken) {
  test(`a broken table names the file and key: ${where}`, () => {
    const t = small();
    breakIt(t);
    assert.throws(() => validateTables(t), (e) => e.message.startsWith(`tier2 data error: ${where}`));
  });
}
