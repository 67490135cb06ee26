// Data-table validation: throws "tier2 data error: <file> <key>: <reason>" on the first problem found.
// The JSON Schemas in the genre's schemas/ folder describe the same shapes.
import { findRuns, hasMove } from './board.js';

const HEX = /^#[0-9a-fA-F]{6}$/;
const ID = /^[a-z][a-z0-9_]*$/;
export const SHAPES = ['circle', 'diamond', 'square', 'triangle', 'hexagon', 'star', 'ring', 'cross'];
export const SCHEMA_RANGES = { size: [5, 10], kinds: [4, SHAPES.length] }; // as schemas/board.schema.json
const PALETTE = ['background', 'panel', 'accent', 'text', 'good', 'bad'];
const TEXTS = ['win', 'lose', 'no_match', 'cascade'];

function fail(file, key, msg) {
  throw new Error(`tier2 data error: ${file} ${key}: ${msg}`);
}
function need(cond, file, key, msg) {
  if (!cond) fail(file, key, msg);
}
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isStr = (v, max = 80) => typeof v === 'string' && v.trim().length > 0 && v.length <= max;
const isInt = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;

function validateTheme(theme) {
  const f = 'theme.json';
  need(isObj(theme), f, '(root)', 'missing or not an object');
  need(isStr(theme.title, 32), f, 'title', 'missing or not a string of 1-32 characters');
  need(isStr(theme.subtitle, 80), f, 'subtitle', 'missing or not a string of 1-80 characters');
  need(isObj(theme.palette), f, 'palette', 'missing or not an object');
  for (const k of PALETTE) need(HEX.test(String(theme.palette[k])), f, `palette.${k}`, 'missing or not a #rrggbb colour');
  need(isObj(theme.texts), f, 'texts', 'missing or not an object');
  for (const k of TEXTS) need(isStr(theme.texts[k], 90), f, `texts.${k}`, 'missing or not a string of 1-90 characters');
}

function validateBoard(board) {
  const f = 'board.json';
  need(isObj(board), f, '(root)', 'missing or not an object');
  need(isInt(board.size, ...SCHEMA_RANGES.size), f, 'size', `must be an integer ${SCHEMA_RANGES.size.join('-')}`);
  need(isInt(board.seed, 0, 4294967295), f, 'seed', 'must be an integer 0-4294967295');
  need(Array.isArray(board.kinds), f, 'kinds', 'missing or not an array');
  need(isInt(board.kinds.length, ...SCHEMA_RANGES.kinds), f, 'kinds', `must list ${SCHEMA_RANGES.kinds.join('-')} tile kinds`);
  const ids = new Set();
  board.kinds.forEach((k, i) => {
    const at = `kinds[${i}]`;
    need(isObj(k), f, at, 'not an object');
    need(typeof k.id === 'string' && ID.test(k.id), f, `${at}.id`, 'missing or not a lower-case id');
    need(!ids.has(k.id), f, `${at}.id`, `duplicate tile id "${k.id}"`);
    ids.add(k.id);
    need(isStr(k.name, 20), f, `${at}.name`, 'missing or not a string of 1-20 characters');
    need(HEX.test(String(k.color)), f, `${at}.color`, 'missing or not a #rrggbb colour');
    need(SHAPES.includes(k.shape), f, `${at}.shape`, `must be one of ${SHAPES.join(', ')}`);
  });
  if (board.layout === undefined) return;
  const n = board.size;
  need(Array.isArray(board.layout) && board.layout.length === n, f, 'layout', `must be ${n} rows`);
  board.layout.forEach((row, y) => {
    need(Array.isArray(row) && row.length === n, f, `layout[${y}]`, `must be ${n} tile indices`);
    row.forEach((v, x) => need(isInt(v, 0, board.kinds.length - 1), f, `layout[${y}][${x}]`,
      `must be a tile index 0-${board.kinds.length - 1}`));
  });
  const runs = findRuns(board.layout);
  need(!runs.length, f, 'layout', `starts with a line of ${runs[0]?.cells.length} at ${JSON.stringify(runs[0]?.cells[0])}`);
  need(hasMove(board.layout), f, 'layout', 'has no swap that makes a line');
}

function validateGoals(goals) {
  const f = 'goals.json';
  need(isObj(goals), f, '(root)', 'missing or not an object');
  need(isInt(goals.moves, 1, 99), f, 'moves', 'must be an integer 1-99');
  need(isInt(goals.target_score, 1, 1000000), f, 'target_score', 'must be an integer 1-1000000');
  need(isInt(goals.points_per_tile, 1, 1000), f, 'points_per_tile', 'must be an integer 1-1000');
  need(isInt(goals.cascade_bonus, 0, 10000), f, 'cascade_bonus', 'must be an integer 0-10000');
}

export function validateTables(t) {
  need(isObj(t), 'data/*.json', '(tables)', 'no tables given');
  validateTheme(t.theme);
  validateBoard(t.board);
  validateGoals(t.goals);
  return t;
}
