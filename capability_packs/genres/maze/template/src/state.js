// Pure game rules of the maze template (contract 2). No Phaser import, no DOM: plain data only, so the state can
// be snapshotted, unit-tested and reasoned about. Every gameplay number comes from data/; rules live here.
// Grid: '#' wall, '.' floor, 'P' start, 'E' exit, 'G' gem, 'X' hazard. Enemies patrol their path back and forth,
// one cell every rules.enemy_step_ms of level time, so where an enemy is depends on the level clock only.

const HEX = /^#[0-9a-fA-F]{6}$/;
export const GENRE = 'maze'; // the hook's genre and template id (src/hook.js, shared by the pack)
export const START_KEYS = ['Enter', 'Space'];
export const ABANDON_KEYS = ['Escape'];
export const MOVES = {
  up: { keys: ['ArrowUp', 'KeyW'], dx: 0, dy: -1 },
  down: { keys: ['ArrowDown', 'KeyS'], dx: 0, dy: 1 },
  left: { keys: ['ArrowLeft', 'KeyA'], dx: -1, dy: 0 },
  right: { keys: ['ArrowRight', 'KeyD'], dx: 1, dy: 0 },
};
const PALETTE_KEYS = ['background', 'panel', 'accent', 'text', 'good', 'bad'];
const RULE_KEYS = ['lives', 'gem_score', 'exit_score', 'time_bonus_per_s', 'enemy_step_ms', 'move_repeat_delay_ms',
  'move_repeat_ms'];
export const GRID = { minSide: 5, maxW: 31, maxH: 19, maxMazes: 3 };

function fail(file, key, msg) {
  throw new Error(`tier2 data error: ${file} ${key}: ${msg}`);
}
function need(cond, file, key, msg) {
  if (!cond) fail(file, key, msg);
}
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const isStr = (v) => typeof v === 'string' && v.trim().length > 0;

function validateTheme(theme) {
  const f = 'theme.json';
  need(isObj(theme), f, '(root)', 'missing or not an object');
  for (const k of ['title', 'subtitle', 'hero', 'gem_name']) need(isStr(theme[k]), f, k, 'missing or not a non-empty string');
  need(isObj(theme.palette), f, 'palette', 'missing or not an object');
  for (const k of PALETTE_KEYS) need(HEX.test(String(theme.palette[k])), f, `palette.${k}`, 'missing or not a #rrggbb colour');
  need(isObj(theme.texts), f, 'texts', 'missing or not an object');
  for (const k of ['goal_prompt', 'win', 'lose']) need(isStr(theme.texts[k]), f, `texts.${k}`, 'missing or not a non-empty string');
}

export function parseMaze(rows) {
  const cells = { P: [], E: [], G: [], X: [] };
  rows.forEach((row, y) => [...row].forEach((c, x) => { if (cells[c]) cells[c].push({ x, y }); }));
  return { w: rows[0].length, h: rows.length, start: cells.P[0], exit: cells.E[0], gems: cells.G, hazards: cells.X };
}

export const cellAt = (rows, x, y) => (y >= 0 && y < rows.length && x >= 0 && x < rows[y].length ? rows[y][x] : '#');

function validateMaze(m, i) {
  const f = 'mazes.json';
  const at = `mazes[${i}]`;
  need(isObj(m), f, at, 'not an object');
  need(isStr(m.name), f, `${at}.name`, 'missing or not a non-empty string');
  need(Array.isArray(m.rows) && m.rows.length >= GRID.minSide && m.rows.length <= GRID.maxH, f, `${at}.rows`,
    `must be ${GRID.minSide}-${GRID.maxH} strings`);
  const w = typeof m.rows[0] === 'string' ? m.rows[0].length : 0;
  need(w >= GRID.minSide && w <= GRID.maxW, f, `${at}.rows[0]`, `must be ${GRID.minSide}-${GRID.maxW} characters`);
  m.rows.forEach((r, y) => {
    need(typeof r === 'string' && r.length === w, f, `${at}.rows[${y}]`, `every row must be ${w} characters`);
    need(/^[#.PEGX]*$/.test(r), f, `${at}.rows[${y}]`, 'only # . P E G X are allowed');
  });
  const count = (c) => m.rows.join('').split(c).length - 1;
  need(count('P') === 1, f, `${at}.rows`, `needs exactly one P (start), has ${count('P')}`);
  need(count('E') === 1, f, `${at}.rows`, `needs exactly one E (exit), has ${count('E')}`);
  need(count('G') >= 1, f, `${at}.rows`, 'needs at least one G (gem)');
  need(isNum(m.time_ms) && m.time_ms >= 10000, f, `${at}.time_ms`, 'must be a number >= 10000');
  need(Array.isArray(m.enemies), f, `${at}.enemies`, 'missing or not an array (may be empty)');
  m.enemies.forEach((e, j) => {
    const ek = `${at}.enemies[${j}].path`;
    need(isObj(e) && Array.isArray(e.path) && e.path.length >= 1, f, ek, 'missing or empty list of [x, y] cells');
    e.path.forEach((c, k) => {
      need(Array.isArray(c) && c.length === 2 && c.every(Number.isInteger), f, `${ek}[${k}]`, 'not an [x, y] pair');
      const ch = cellAt(m.rows, c[0], c[1]);
      need(ch !== '#' && ch !== 'X', f, `${ek}[${k}]`, `cell (${c[0]}, ${c[1]}) is a wall or hazard`);
      if (k > 0) {
        const [px, py] = e.path[k - 1];
        need(Math.abs(c[0] - px) + Math.abs(c[1] - py) === 1, f, `${ek}[${k}]`, 'not next to the previous cell');
      }
    });
  });
}

function validateRules(rules) {
  const f = 'rules.json';
  need(isObj(rules), f, '(root)', 'missing or not an object');
  for (const k of RULE_KEYS) need(isNum(rules[k]) && rules[k] >= 0, f, k, 'missing or not a number >= 0');
  need(Number.isInteger(rules.lives) && rules.lives >= 1, f, 'lives', 'must be an integer >= 1');
  need(rules.enemy_step_ms >= 50, f, 'enemy_step_ms', 'must be >= 50');
  need(rules.move_repeat_ms >= 30, f, 'move_repeat_ms', 'must be >= 30');
}

// Throws Error("tier2 data error: <file> <key>: <problem>") on the first problem found.
export function validateTables(t) {
  need(isObj(t), 'data/*.json', '(tables)', 'no tables given');
  validateTheme(t.theme);
  need(isObj(t.mazes) && Array.isArray(t.mazes.mazes), 'mazes.json', 'mazes', 'missing or not an array');
  need(t.mazes.mazes.length >= 1 && t.mazes.mazes.length <= GRID.maxMazes, 'mazes.json', 'mazes',
    `must list 1-${GRID.maxMazes} mazes`);
  t.mazes.mazes.forEach(validateMaze);
  validateRules(t.rules);
  return t;
}

export function controlsFor() {
  const out = { start: [...START_KEYS] };
  for (const [name, m] of Object.entries(MOVES)) out[name] = [...m.keys];
  out.abandon = [...ABANDON_KEYS];
  return out;
}

export function actionsFor() {
  const out = { start: { keys: [...START_KEYS], label: 'start' } };
  for (const [name, m] of Object.entries(MOVES)) out[name] = { keys: [...m.keys], label: `move ${name}` };
  out.abandon = { keys: [...ABANDON_KEYS], label: 'quit' };
  return out;
}

const keyName = (code) => code.replace(/^Arrow/, '').replace(/^Key/, '').replace('Escape', 'Esc');
// "Arrows / WASD: move · Esc: quit", built from the action table (never typed by hand).
export function controlsHint() {
  const acts = actionsFor();
  const arrows = Object.keys(MOVES).every((n) => acts[n].keys[0].startsWith('Arrow'));
  const letters = Object.keys(MOVES).map((n) => keyName(acts[n].keys[1] || '')).join('');
  return `${arrows ? 'Arrows' : 'Arrow keys'} / ${letters}: move   ·   ${acts.abandon.keys.map(keyName).join('/')}: quit`;
}
export const startHint = () => `Press ${START_KEYS.map(keyName).join(' / ')} or click to start`;

// Where enemy `e` is after `ms` of level time: back and forth along its path, one cell per step.
export function enemyCell(e, ms, stepMs) {
  const n = e.path.length;
  if (n === 1) return { x: e.path[0][0], y: e.path[0][1] };
  const period = 2 * (n - 1);
  const k = Math.floor(ms / stepMs) % period;
  const [x, y] = e.path[k < n ? k : period - k];
  return { x, y };
}

function loadLevel(state, index) {
  const maze = state.tables.mazes.mazes[index];
  const m = parseMaze(maze.rows);
  Object.assign(state, {
    level: index, rows: maze.rows, player: { ...m.start }, start: { ...m.start }, exitCell: m.exit,
    gemsLeft: m.gems.map((g) => ({ ...g })), gems: 0, gems_total: m.gems.length, exit_open: false, level_ms: 0,
  });
  state.enemies = maze.enemies.map((e) => enemyCell(e, 0, state.tables.rules.enemy_step_ms));
}

export function createState(tables) {
  const state = { tables, lives: tables.rules.lives, score: 0, moves: 0, hits: 0, elapsed_ms: 0, outcome: 'running',
    lostReason: null, event: null };
  loadLevel(state, 0);
  return state;
}

export const currentMaze = (state) => state.tables.mazes.mazes[state.level];
export const timeLeftMs = (state) => Math.max(0, currentMaze(state).time_ms - state.level_ms);
const touching = (state) => state.enemies.some((e) => e.x === state.player.x && e.y === state.player.y);

// Hazard or enemy contact: one life; back to the start of this maze (its gems stay collected).
function hit(state, cause) {
  state.lives -= 1;
  state.hits += 1;
  state.event = cause;
  if (state.lives <= 0) {
    state.outcome = 'lost';
    state.lostReason = cause;
  } else {
    state.player = { ...state.start };
  }
}

function completeLevel(state) {
  const rules = state.tables.rules;
  state.score += rules.exit_score + Math.floor(timeLeftMs(state) / 1000) * rules.time_bonus_per_s;
  if (state.level + 1 >= state.tables.mazes.mazes.length) {
    state.outcome = 'won';
    state.event = 'won';
  } else {
    loadLevel(state, state.level + 1);
    state.event = 'level';
  }
}

// One step in a direction. Walls block (no time or life lost). Returns {ok, reason}.
export function move(state, dir) {
  if (state.outcome !== 'running') return { ok: false, reason: 'game over' };
  const d = MOVES[dir];
  if (!d) return { ok: false, reason: `unknown direction "${dir}"` };
  const x = state.player.x + d.dx;
  const y = state.player.y + d.dy;
  const c = cellAt(state.rows, x, y);
  if (c === '#') return { ok: false, reason: 'wall' };
  state.player = { x, y };
  state.moves += 1;
  state.event = null;
  if (c === 'X') {
    hit(state, 'hazard');
    return { ok: true, reason: null };
  }
  const gi = state.gemsLeft.findIndex((g) => g.x === x && g.y === y);
  if (gi >= 0) {
    state.gemsLeft.splice(gi, 1);
    state.gems += 1;
    state.score += state.tables.rules.gem_score;
    state.event = 'gem';
    if (state.gemsLeft.length === 0) { state.exit_open = true; state.event = 'exit_open'; }
  }
  if (touching(state)) hit(state, 'enemy');
  else if (c === 'E' && state.exit_open) completeLevel(state);
  return { ok: true, reason: null };
}

// Level time passes: enemies step along their paths, contact costs a life, the clock running out loses.
export function tick(state, dtMs) {
  if (state.outcome !== 'running' || !isNum(dtMs) || dtMs <= 0) return;
  state.elapsed_ms += dtMs;
  state.level_ms += dtMs;
  const step = state.tables.rules.enemy_step_ms;
  state.enemies = currentMaze(state).enemies.map((e) => enemyCell(e, state.level_ms, step));
  if (touching(state)) hit(state, 'enemy');
  if (state.outcome === 'running' && state.level_ms >= currentMaze(state).time_ms) {
    state.outcome = 'lost';
    state.lostReason = 'time';
  }
}

export function abandon(state) {
  if (state.outcome !== 'running') return { ok: false, reason: 'game over' };
  state.outcome = 'abandoned';
  return { ok: true, reason: null };
}

// JSON-only snapshot for window.__TIER2__.state() (the hook adds `scene`).
export function snapshot(state) {
  return {
    player: { ...state.player },
    player_x: state.player.x,
    player_y: state.player.y,
    gems: state.gems,
    gems_total: state.gems_total,
    gems_left: state.gemsLeft.map((g) => ({ ...g })),
    exit_open: state.exit_open,
    enemies: state.enemies.map((e) => ({ ...e })),
    lives: state.lives,
    level: state.level,
    levels: state.tables.mazes.mazes.length,
    time_left_ms: Math.round(timeLeftMs(state)),
    elapsed_ms: Math.round(state.elapsed_ms),
    moves: state.moves,
    score: state.score,
    outcome: state.outcome,
  };
}

export function fillText(template, vars) {
  return String(template).replace(/\{(\w+)\}/g, (m, k) => (vars[k] !== undefined ? String(vars[k]) : m));
}

export const hexToInt = (hex) => parseInt(String(hex).slice(1), 16);
