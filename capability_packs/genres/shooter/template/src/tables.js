// Validation of the data tables (theme, player, enemies, waves). No Phaser import: main.js and the unit tests use it.
// Throws Error("tier2 data error: <file> <key>: <problem>") on the first problem found.

const HEX = /^#[0-9a-fA-F]{6}$/;
const ID = /^[a-z][a-z0-9_]{0,31}$/;
export const SHAPES = ['dart', 'saucer', 'crab', 'orb', 'wing', 'rock'];
export const PALETTE_KEYS = ['background', 'panel', 'accent', 'text', 'good', 'bad', 'player', 'shot', 'enemy_shot', 'star'];
export const TEXT_KEYS = ['win_title', 'win', 'lose_title', 'lose'];

function fail(file, key, msg) {
  throw new Error(`tier2 data error: ${file} ${key}: ${msg}`);
}
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNum = (v) => typeof v === 'number' && Number.isFinite(v);

function need(cond, file, key, msg) {
  if (!cond) fail(file, key, msg);
}

function str(obj, file, key, max) {
  const v = obj[key];
  need(typeof v === 'string' && v.trim().length > 0, file, key, 'missing or not a non-empty string');
  need(v.length <= max, file, key, `longer than ${max} characters`);
}

// A number in [lo, hi] (an integer when `int`).
function num(obj, file, at, key, lo, hi, int = false) {
  const v = obj[key];
  const where = at ? `${at}.${key}` : key;
  need(isNum(v), file, where, 'missing or not a number');
  need(!int || Number.isInteger(v), file, where, 'must be an integer');
  need(v >= lo && v <= hi, file, where, `must be between ${lo} and ${hi}`);
}

function validateTheme(theme) {
  const f = 'theme.json';
  need(isObj(theme), f, '(root)', 'missing or not an object');
  str(theme, f, 'title', 32);
  str(theme, f, 'subtitle', 80);
  str(theme, f, 'player_name', 24);
  str(theme, f, 'enemy_noun', 24);
  need(isObj(theme.palette), f, 'palette', 'missing or not an object');
  for (const k of PALETTE_KEYS) need(HEX.test(String(theme.palette[k])), f, `palette.${k}`, 'missing or not a #rrggbb colour');
  need(isObj(theme.texts), f, 'texts', 'missing or not an object');
  for (const k of TEXT_KEYS) {
    const v = theme.texts[k];
    need(typeof v === 'string' && v.trim().length > 0, f, `texts.${k}`, 'missing or not a non-empty string');
    need(v.length <= 120, f, `texts.${k}`, 'longer than 120 characters');
  }
}

function validatePlayer(p) {
  const f = 'player.json';
  need(isObj(p), f, '(root)', 'missing or not an object');
  num(p, f, '', 'lives', 1, 9, true);
  num(p, f, '', 'speed', 60, 900);
  num(p, f, '', 'radius', 8, 40);
  num(p, f, '', 'fire_cooldown_ms', 50, 2000);
  num(p, f, '', 'shot_speed', 100, 2000);
  num(p, f, '', 'shot_radius', 2, 12);
  num(p, f, '', 'max_shots', 1, 20, true);
  num(p, f, '', 'invulnerable_ms', 0, 10000);
}

function validateEnemies(en) {
  const f = 'enemies.json';
  need(isObj(en) && Array.isArray(en.enemies), f, 'enemies', 'missing or not an array');
  need(en.enemies.length >= 1 && en.enemies.length <= 6, f, 'enemies', 'must list 1 to 6 enemy types');
  const seen = new Set();
  en.enemies.forEach((e, i) => {
    const at = `enemies[${i}]`;
    need(isObj(e), f, at, 'not an object');
    need(typeof e.id === 'string' && ID.test(e.id), f, `${at}.id`, 'missing or not a lowercase snake_case id');
    need(!seen.has(e.id), f, `${at}.id`, `duplicate enemy id "${e.id}"`);
    seen.add(e.id);
    need(typeof e.name === 'string' && e.name.trim().length > 0 && e.name.length <= 16, f, `${at}.name`,
      'missing or not a string of 1-16 characters');
    need(SHAPES.includes(e.shape), f, `${at}.shape`, `must be one of ${SHAPES.join(', ')}`);
    need(HEX.test(String(e.color)), f, `${at}.color`, 'missing or not a #rrggbb colour');
    num(e, f, at, 'hp', 1, 20, true);
    num(e, f, at, 'radius', 8, 40);
    num(e, f, at, 'speed', 10, 400);
    num(e, f, at, 'score', 0, 100000, true);
    num(e, f, at, 'sway', 0, 120);
    num(e, f, at, 'sway_ms', 200, 20000);
    num(e, f, at, 'homing', 0, 400);
    num(e, f, at, 'fire_ms', 0, 20000);
    need(e.fire_ms === 0 || e.fire_ms >= 300, f, `${at}.fire_ms`, 'must be 0 (never fires) or at least 300');
    num(e, f, at, 'shot_speed', 50, 800);
    num(e, f, at, 'shot_radius', 2, 12);
  });
  return seen;
}

function validateWaves(w, ids) {
  const f = 'waves.json';
  need(isObj(w), f, '(root)', 'missing or not an object');
  num(w, f, '', 'seed', 0, 4294967295, true);
  num(w, f, '', 'start_delay_ms', 0, 20000);
  num(w, f, '', 'gap_ms', 0, 20000);
  need(Array.isArray(w.waves), f, 'waves', 'missing or not an array');
  need(w.waves.length >= 1 && w.waves.length <= 12, f, 'waves', 'must list 1 to 12 waves');
  w.waves.forEach((wave, i) => {
    const at = `waves[${i}]`;
    need(isObj(wave), f, at, 'not an object');
    need(typeof wave.name === 'string' && wave.name.trim().length > 0 && wave.name.length <= 24, f, `${at}.name`,
      'missing or not a string of 1-24 characters');
    num(wave, f, at, 'spawn_ms', 100, 10000);
    num(wave, f, at, 'bonus', 0, 100000, true);
    need(Array.isArray(wave.spawns) && wave.spawns.length >= 1 && wave.spawns.length <= 8, f, `${at}.spawns`,
      'must list 1 to 8 spawns');
    wave.spawns.forEach((s, j) => {
      const sat = `${at}.spawns[${j}]`;
      need(isObj(s), f, sat, 'not an object');
      need(ids.has(s.enemy), f, `${sat}.enemy`, `unknown enemy "${s.enemy}" (not in enemies.json)`);
      num(s, f, sat, 'count', 1, 40, true);
    });
  });
}

export function validateTables(t) {
  need(isObj(t), 'data/*.json', '(tables)', 'no tables given');
  validateTheme(t.theme);
  validatePlayer(t.player);
  const ids = validateEnemies(t.enemies);
  validateWaves(t.waves, ids);
  return t;
}
