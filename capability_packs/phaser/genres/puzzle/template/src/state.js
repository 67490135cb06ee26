// Pure game rules of the match-3 puzzle (contract 2). No Phaser import, no DOM: plain data that can be
// snapshotted and tested. Every gameplay number comes from the data tables (board.json, goals.json).
//
// Controls: the cursor marks a tile and its swap partner (the neighbour it faces: right at first). Arrows move
// the cursor, R turns the partner clockwise around it, Space swaps the two marked tiles. EVERY swap spends one
// move; a swap that makes no line of 3+ bounces back (the board is unchanged) but its move is still spent.
// Won: score >= target (checked after each swap). Lost: no moves left below the target.
import { randInt, dealBoard, findRuns, swapCells, collapse, hasMove } from './board.js';

export const GENRE = 'puzzle'; // the hook's genre and template id (src/hook.js, shared by the pack)
export const START_KEYS = ['Enter', 'Space'];
export const ACTIONS = {
  start: { keys: START_KEYS, label: 'start' },
  up: { keys: ['ArrowUp', 'KeyW'], label: 'cursor up' },
  left: { keys: ['ArrowLeft', 'KeyA'], label: 'cursor left' },
  down: { keys: ['ArrowDown', 'KeyS'], label: 'cursor down' },
  right: { keys: ['ArrowRight', 'KeyD'], label: 'cursor right' },
  rotate: { keys: ['KeyR', 'KeyE'], label: 'turn the partner' },
  swap: { keys: ['Space', 'KeyX'], label: 'swap the marked pair' },
  abandon: { keys: ['Escape'], label: 'quit to the menu' },
};
export const MOVE_ACTIONS = ['up', 'left', 'down', 'right'];
export const FACINGS = ['right', 'down', 'left', 'up']; // clockwise
const STEP = { right: [1, 0], down: [0, 1], left: [-1, 0], up: [0, -1] };
const OPPOSITE = { right: 'left', left: 'right', up: 'down', down: 'up' };

const KEY_NAMES = { ArrowUp: '↑', ArrowLeft: '←', ArrowDown: '↓', ArrowRight: '→', Escape: 'Esc', Space: 'Space' };
export const keyName = (code) => KEY_NAMES[code] || code.replace(/^Key|^Digit/, '');

// The controls hint, built from ACTIONS: [[keys, what], ...] — one row per control (the move keys share one).
export function controlRows() {
  const moves = [0, 1].map((i) => MOVE_ACTIONS.map((a) => keyName(ACTIONS[a].keys[i])).join(''));
  const rows = [[moves.join(' / '), 'move the cursor']];
  for (const a of ['swap', 'rotate', 'abandon']) rows.push([ACTIONS[a].keys.map(keyName).join(' / '), ACTIONS[a].label]);
  return rows;
}

export const startLine = () => `Press ${START_KEYS.map(keyName).join(' or ')} (or click) to play`;

// __TIER2__.controls(): {action: [keys]}.
export const actionsFor = () => Object.fromEntries(Object.entries(ACTIONS).map(([a, v]) => [a, { keys: [...v.keys], label: v.label }]));

export function controlsFor() {
  return Object.fromEntries(Object.entries(ACTIONS).map(([a, v]) => [a, [...v.keys]]));
}

export function createState(tables) {
  const { board, goals } = tables;
  const holder = { rng: board.seed >>> 0 };
  const grid = board.layout ? board.layout.map((row) => [...row]) : dealBoard(holder, board.size, board.kinds.length);
  const c = Math.floor(board.size / 2);
  return {
    tables,
    rng: holder.rng,
    grid,
    cursor: { x: c, y: c },
    facing: 'right',
    moves_left: goals.moves,
    score: 0,
    matches: 0,
    swaps: 0,
    cascades: 0,
    shuffles: 0,
    elapsed_ms: 0,
    outcome: 'running',
    last: null,
  };
}

const inside = (size, x, y) => x >= 0 && y >= 0 && x < size && y < size;

// The effective facing: the stored one, or its opposite when that neighbour is off the board.
export function effectiveFacing(state) {
  const size = state.grid.length;
  const { x, y } = state.cursor;
  const [dx, dy] = STEP[state.facing];
  return inside(size, x + dx, y + dy) ? state.facing : OPPOSITE[state.facing];
}

// The swap partner of the cursor tile (`selected` in the snapshot).
export function partner(state) {
  const [dx, dy] = STEP[effectiveFacing(state)];
  return { x: state.cursor.x + dx, y: state.cursor.y + dy };
}

const over = (state) => state.outcome !== 'running';

export function moveCursor(state, dir) {
  if (over(state) || !STEP[dir]) return false;
  const [dx, dy] = STEP[dir];
  const x = state.cursor.x + dx;
  const y = state.cursor.y + dy;
  if (!inside(state.grid.length, x, y)) return false;
  state.cursor = { x, y };
  return true;
}

// Put the cursor on (x, y) (a click); false when off the board.
export function setCursor(state, x, y) {
  if (over(state) || !Number.isInteger(x) || !Number.isInteger(y) || !inside(state.grid.length, x, y)) return false;
  state.cursor = { x, y };
  return true;
}

// Turn the partner clockwise to the next neighbour on the board.
export function rotate(state) {
  if (over(state)) return false;
  const size = state.grid.length;
  const { x, y } = state.cursor;
  let i = FACINGS.indexOf(effectiveFacing(state));
  for (let n = 0; n < 4; n++) {
    i = (i + 1) % 4;
    const [dx, dy] = STEP[FACINGS[i]];
    if (inside(size, x + dx, y + dy)) break;
  }
  state.facing = FACINGS[i];
  return true;
}

// Face the neighbour (x, y) of the cursor; false when it is not a neighbour.
export function faceTowards(state, x, y) {
  const dir = FACINGS.find((f) => state.cursor.x + STEP[f][0] === x && state.cursor.y + STEP[f][1] === y);
  if (over(state) || !dir || !inside(state.grid.length, x, y)) return false;
  state.facing = dir;
  return true;
}

function evaluate(state) {
  if (over(state)) return;
  if (state.score >= state.tables.goals.target_score) state.outcome = 'won';
  else if (state.moves_left <= 0) state.outcome = 'lost';
}

// Swap the cursor tile with its partner, spending one move. A swap that makes no line bounces back.
// Then clear lines, let tiles fall, refill, repeat (cascades) and redeal if no matching swap is left.
// Returns {ok, matched, a, b, steps: [{cleared: [[x, y]], fallen: [per column], points, cascade}], shuffled}.
export function swap(state) {
  if (over(state)) return { ok: false, matched: false, steps: [], reason: 'game over' };
  const { goals, board } = state.tables;
  const a = { ...state.cursor };
  const b = partner(state);
  const grid = state.grid;
  swapCells(grid, a, b);
  state.moves_left -= 1;
  state.swaps += 1;
  const steps = [];
  let runs = findRuns(grid);
  if (!runs.length) swapCells(grid, a, b);
  const holder = { rng: state.rng };
  while (runs.length) {
    const cascade = steps.length;
    const cells = new Map();
    for (const r of runs) for (const [x, y] of r.cells) cells.set(`${x},${y}`, [x, y]);
    const cleared = [...cells.values()];
    const points = cleared.length * goals.points_per_tile + cascade * goals.cascade_bonus;
    state.score += points;
    state.matches += runs.length;
    if (cascade > 0) state.cascades += 1;
    const fallen = collapse(holder, grid, cleared, board.kinds.length);
    steps.push({ cleared, fallen, points, cascade });
    runs = findRuns(grid);
  }
  let shuffled = false;
  if (steps.length && !hasMove(grid)) {
    state.grid = dealBoard(holder, board.size, board.kinds.length);
    state.shuffles += 1;
    shuffled = true;
  }
  state.rng = holder.rng;
  state.last = { matched: steps.length > 0, points: steps.reduce((s, st) => s + st.points, 0), chain: steps.length };
  evaluate(state);
  return { ok: true, matched: steps.length > 0, a, b, steps, shuffled, reason: null };
}

export function tick(state, dtMs) {
  if (over(state)) return;
  if (Number.isFinite(dtMs) && dtMs > 0) state.elapsed_ms += dtMs;
}

export function abandon(state) {
  if (over(state)) return false;
  state.outcome = 'abandoned';
  return true;
}

// JSON-only snapshot for window.__TIER2__.state() (the hook adds `scene`).
export function snapshot(state) {
  return {
    outcome: state.outcome,
    elapsed_ms: Math.round(state.elapsed_ms),
    score: state.score,
    target: state.tables.goals.target_score,
    moves_left: state.moves_left,
    matches: state.matches,
    swaps: state.swaps,
    cascades: state.cascades,
    shuffles: state.shuffles,
    grid: state.grid.map((row) => [...row]),
    cursor: { ...state.cursor },
    facing: effectiveFacing(state),
    selected: partner(state),
  };
}

export function fillText(template, vars) {
  return String(template).replace(/\{(\w+)\}/g, (m, k) => (vars[k] !== undefined ? String(vars[k]) : m));
}

export const hexToInt = (hex) => parseInt(String(hex).slice(1), 16);
