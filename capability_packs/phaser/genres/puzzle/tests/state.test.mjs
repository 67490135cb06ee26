// node --test: the pure rules of the puzzle template (state.js, board.js, validate.js).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  createState, swap, rotate, moveCursor, setCursor, faceTowards, partner, abandon, tick, snapshot, controlRows,
  controlsFor, ACTIONS, START_KEYS,
} from '../template/src/state.js';
import { findRuns, hasMove, fillBoard, dealBoard, validSwaps, collapse } from '../template/src/board.js';
import { validateTables } from '../template/src/validate.js';

const load = (name) => JSON.parse(readFileSync(new URL(`../template/data/${name}.json`, import.meta.url)));
const base = () => ({ theme: load('theme'), board: load('board'), goals: load('goals') });

// 5×5, 4 kinds, no line; swapping (2,2) down makes 0 0 0 on row 2, whose fall makes 2 2 2 (a cascade).
const CASCADE = [
  [1, 3, 0, 1, 3],
  [2, 1, 2, 3, 0],
  [0, 0, 1, 2, 2],
  [3, 2, 0, 1, 3],
  [1, 3, 2, 0, 1],
];

function withLayout(layout, goals = {}) {
  const t = base();
  t.board = { ...t.board, size: layout.length, kinds: t.board.kinds.slice(0, 4), layout };
  t.goals = { ...t.goals, ...goals };
  return validateTables(t);
}

test('the template tables validate', () => {
  assert.doesNotThrow(() => validateTables(base()));
});

test('broken tables throw "tier2 data error: <file> <key>"', () => {
  const cases = [
    [(t) => { t.board.kinds[0].color = 'red'; }, /^Error: tier2 data error: board\.json kinds\[0\]\.color:/],
    [(t) => { t.board.kinds[1].id = t.board.kinds[0].id; }, /board\.json kinds\[1\]\.id: duplicate/],
    [(t) => { t.board.kinds[0].shape = 'blob'; }, /board\.json kinds\[0\]\.shape/],
    [(t) => { t.board.kinds = t.board.kinds.slice(0, 3); }, /board\.json kinds: must list 4-8/],
    [(t) => { t.board.size = 4; }, /board\.json size/],
    [(t) => { delete t.goals.moves; }, /goals\.json moves/],
    [(t) => { t.goals.points_per_tile = 0; }, /goals\.json points_per_tile/],
    [(t) => { t.theme.palette.text = '#fff'; }, /theme\.json palette\.text/],
    [(t) => { delete t.theme.texts.no_match; }, /theme\.json texts\.no_match/],
    [(t) => { t.board.layout = [[0]]; }, /board\.json layout: must be 7 rows/],
  ];
  for (const [edit, re] of cases) {
    const t = base();
    edit(t);
    assert.throws(() => validateTables(t), re);
  }
});

test('a layout with a line, or with no matching swap, is refused', () => {
  const lined = CASCADE.map((r) => [...r]);
  lined[0][2] = 1; lined[0][1] = 1; lined[0][0] = 1;
  assert.throws(() => withLayout(lined), /board\.json layout: starts with a line/);
  const stuck = [0, 1, 2, 3, 4].map((y) => [0, 1, 2, 3, 4].map((x) => (x + 2 * y) % 4));
  assert.equal(findRuns(stuck).length, 0);
  assert.throws(() => withLayout(stuck), /board\.json layout: has no swap that makes a line/);
});

test('the dealt board is deterministic, has no line and has a matching swap', () => {
  const a = createState(base());
  const b = createState(base());
  assert.deepEqual(a.grid, b.grid);
  assert.equal(findRuns(a.grid).length, 0);
  assert.ok(hasMove(a.grid));
  const t = base();
  t.board.seed += 1;
  assert.notDeepEqual(createState(t).grid, a.grid);
  for (let seed = 0; seed < 40; seed++) {
    const grid = dealBoard({ rng: seed }, 8, 6);
    assert.equal(findRuns(grid).length, 0);
    assert.ok(hasMove(grid));
  }
});

test('a planted deal keeps its presets, has no line and the planted move matches', () => {
  const holder = { rng: 7 };
  const grid = fillBoard(holder, 6, 4, { '0,0': 0, '1,0': 0, '2,1': 0 });
  assert.deepEqual([grid[0][0], grid[0][1], grid[1][2]], [0, 0, 0]);
  assert.equal(findRuns(grid).length, 0);
  assert.ok(validSwaps(grid).some(({ a, b }) => a.x === 2 && a.y === 0 && b.x === 2 && b.y === 1));
});

test('collapse drops tiles and refills from the top', () => {
  const grid = [[0, 1, 2, 3, 0], [1, 2, 3, 0, 1], [2, 3, 0, 1, 2], [3, 0, 1, 2, 3], [0, 1, 2, 3, 0]];
  const fallen = collapse({ rng: 1 }, grid, [[0, 4], [0, 3]], 4);
  assert.deepEqual(fallen, [2, 0, 0, 0, 0]);
  assert.deepEqual([grid[2][0], grid[3][0], grid[4][0]], [0, 1, 2]);
  assert.ok(grid.every((row) => row.every((k) => Number.isInteger(k) && k >= 0 && k < 4)));
});

test('a swap without a line bounces back and still spends a move', () => {
  const st = createState(withLayout(CASCADE));
  const before = JSON.stringify(st.grid);
  st.cursor = { x: 0, y: 0 }; // (0,0)↔(1,0): 3 1 0 1 3 / column 0 of 3s? no line
  const res = swap(st);
  assert.equal(res.matched, false);
  assert.equal(JSON.stringify(st.grid), before);
  assert.equal(st.moves_left, st.tables.goals.moves - 1);
  assert.equal(st.score, 0);
  assert.equal(st.swaps, 1);
});

test('a matching swap clears, scores per tile, cascades with the cascade bonus', () => {
  const t = withLayout(CASCADE, { target_score: 10000, moves: 20, points_per_tile: 10, cascade_bonus: 25 });
  const st = createState(t);
  assert.deepEqual(st.cursor, { x: 2, y: 2 });
  rotate(st);
  assert.deepEqual(partner(st), { x: 2, y: 3 });
  const res = swap(st);
  assert.equal(res.matched, true);
  assert.deepEqual(res.steps[0].cleared.sort(), [[0, 2], [1, 2], [2, 2]]);
  assert.equal(res.steps[0].points, 30);
  assert.ok(res.steps.length >= 2, 'the fall makes 2 2 2 on row 2');
  res.steps.forEach((s, i) => assert.equal(s.points, s.cleared.length * 10 + i * 25));
  assert.equal(st.score, res.steps.reduce((s, x) => s + x.points, 0));
  assert.ok(st.matches >= 2);
  assert.ok(st.cascades >= 1);
  assert.equal(st.moves_left, 19);
  assert.equal(findRuns(st.grid).length, 0, 'the board settles');
  assert.ok(hasMove(st.grid), 'a matching swap is always left');
});

test('reaching the target wins; the game is then over', () => {
  const st = createState(withLayout(CASCADE, { target_score: 30 }));
  rotate(st);
  swap(st);
  assert.equal(st.outcome, 'won');
  assert.equal(swap(st).ok, false);
  assert.equal(moveCursor(st, 'left'), false);
});

test('running out of moves below the target loses; idling never ends the game', () => {
  const st = createState(withLayout(CASCADE, { moves: 2, target_score: 100 }));
  tick(st, 5000);
  assert.equal(st.outcome, 'running');
  st.cursor = { x: 0, y: 0 };
  swap(st);
  assert.equal(st.outcome, 'running');
  swap(st);
  assert.equal(st.moves_left, 0);
  assert.equal(st.outcome, 'lost');
});

test('cursor, partner and rotation stay on the board', () => {
  const st = createState(withLayout(CASCADE));
  for (let i = 0; i < 9; i++) moveCursor(st, 'right');
  assert.deepEqual(st.cursor, { x: 4, y: 2 });
  assert.deepEqual(partner(st), { x: 3, y: 2 }, 'facing right at the right edge: the left neighbour');
  const seen = new Set();
  for (let i = 0; i < 3; i++) { rotate(st); seen.add(JSON.stringify(partner(st))); }
  assert.equal(seen.size, 3);
  assert.equal(setCursor(st, 0, 0), true);
  assert.equal(setCursor(st, 5, 0), false);
  assert.equal(faceTowards(st, 0, 1), true);
  assert.deepEqual(partner(st), { x: 0, y: 1 });
  assert.equal(faceTowards(st, 2, 2), false);
});

test('abandon latches and a fresh state resets everything', () => {
  const t = withLayout(CASCADE);
  const st = createState(t);
  st.cursor = { x: 0, y: 0 };
  swap(st);
  assert.equal(abandon(st), true);
  assert.equal(st.outcome, 'abandoned');
  assert.equal(abandon(st), false);
  const fresh = createState(t);
  assert.equal(fresh.outcome, 'running');
  assert.equal(fresh.moves_left, t.goals.moves);
  assert.equal(fresh.score, 0);
  assert.deepEqual(fresh.grid, CASCADE);
});

test('the snapshot is plain JSON with the genre fields', () => {
  const st = createState(base());
  const snap = snapshot(st);
  assert.deepEqual(JSON.parse(JSON.stringify(snap)), snap);
  for (const k of ['grid', 'cursor', 'selected', 'moves_left', 'score', 'matches', 'target', 'outcome', 'elapsed_ms']) {
    assert.ok(k in snap, k);
  }
  assert.equal(snap.target, st.tables.goals.target_score);
  snap.grid[0][0] = 99;
  assert.notEqual(st.grid[0][0], 99);
});

test('controls and their hint come from the ACTIONS table', () => {
  const c = controlsFor();
  assert.deepEqual(c.start, START_KEYS);
  assert.deepEqual(c.swap, ACTIONS.swap.keys);
  assert.ok(!('wait' in c));
  const rows = controlRows();
  assert.equal(rows[0][0], '↑←↓→ / WASD');
  assert.ok(rows.some(([keys, what]) => keys === 'Space / X' && what === ACTIONS.swap.label));
});
