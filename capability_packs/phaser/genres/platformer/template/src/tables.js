// Validation of the data tables (data/*.json). main.js calls validateTables before building the game; a broken
// table throws Error("tier2 data error: <file> <key>: <reason>") — the shape rules of schemas/*.schema.json plus
// what a schema cannot say (the start stands on ground, nothing tunnels through a platform).

const HEX = /^#[0-9a-fA-F]{6}$/;
const PALETTE = ['background', 'panel', 'accent', 'text', 'good', 'bad', 'ground', 'ground_top', 'hazard', 'coin',
  'player', 'flag', 'far'];
const TEXTS = ['win_title', 'win', 'lose_title', 'lose'];
const MIN_TIME_MS = 10000; // idling must never end a game: every level gives at least this long

function fail(file, key, msg) {
  throw new Error(`tier2 data error: ${file} ${key}: ${msg}`);
}
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const isStr = (v) => typeof v === 'string' && v.trim().length > 0;
function need(cond, file, key, msg) {
  if (!cond) fail(file, key, msg);
}

function validateTheme(t) {
  const f = 'theme.json';
  need(isObj(t), f, '(root)', 'missing or not an object');
  for (const k of ['title', 'subtitle', 'hero', 'coin_name']) need(isStr(t[k]), f, k, 'missing or not a non-empty string');
  need(t.title.length <= 40, f, 'title', 'longer than 40 characters');
  need(isObj(t.palette), f, 'palette', 'missing or not an object');
  for (const k of PALETTE) need(HEX.test(String(t.palette[k])), f, `palette.${k}`, 'missing or not a #rrggbb colour');
  need(isObj(t.texts), f, 'texts', 'missing or not an object');
  for (const k of TEXTS) need(isStr(t.texts[k]), f, `texts.${k}`, 'missing or not a non-empty string');
}

function validatePhysics(p) {
  const f = 'physics.json';
  need(isObj(p), f, '(root)', 'missing or not an object');
  for (const k of ['steps_per_second', 'gravity', 'run_speed', 'jump_velocity', 'max_fall_speed']) {
    need(isNum(p[k]) && p[k] > 0, f, k, 'missing or not a number > 0');
  }
  need(p.steps_per_second >= 30 && p.steps_per_second <= 240, f, 'steps_per_second', 'must be within 30..240');
  for (const k of ['coyote_ms', 'jump_buffer_ms', 'respawn_ms']) need(isNum(p[k]) && p[k] >= 0, f, k, 'missing or not a number >= 0');
  need(Number.isInteger(p.air_jumps) && p.air_jumps >= 0 && p.air_jumps <= 2, f, 'air_jumps', 'must be 0, 1 (double jump) or 2');
  need(isObj(p.player), f, 'player', 'missing or not an object');
  for (const k of ['w', 'h']) need(isNum(p.player[k]) && p.player[k] >= 8 && p.player[k] <= 96, f, `player.${k}`, 'must be a number within 8..96');
}

function rect(r, f, at, minH) {
  need(isObj(r), f, at, 'not an object');
  for (const k of ['x', 'y', 'w', 'h']) need(isNum(r[k]), f, `${at}.${k}`, 'missing or not a number');
  need(r.w > 0, f, `${at}.w`, 'must be > 0');
  need(r.h >= minH, f, `${at}.h`, `must be >= ${minH}`);
}

const overlap = (a, b) => a.x < b.x + b.w && a.x + a.w > b.x && a.y < b.y + b.h && a.y + a.h > b.y;

function validateLevel(lv, i, phys) {
  const f = 'levels.json';
  const at = `levels[${i}]`;
  const { w, h } = phys.player;
  need(isObj(lv), f, at, 'not an object');
  need(isStr(lv.id), f, `${at}.id`, 'missing or not a non-empty string');
  need(isStr(lv.name), f, `${at}.name`, 'missing or not a non-empty string');
  need(isNum(lv.width) && lv.width >= 800, f, `${at}.width`, 'must be a number >= 800 (the screen width)');
  need(isNum(lv.height) && lv.height >= 600, f, `${at}.height`, 'must be a number >= 600 (the screen height)');
  need(isNum(lv.time_limit_ms) && lv.time_limit_ms >= MIN_TIME_MS, f, `${at}.time_limit_ms`, `must be >= ${MIN_TIME_MS}`);
  const thick = phys.max_fall_speed / phys.steps_per_second;
  need(Array.isArray(lv.platforms) && lv.platforms.length > 0, f, `${at}.platforms`, 'missing or empty array');
  lv.platforms.forEach((p, j) => {
    rect(p, f, `${at}.platforms[${j}]`, Math.ceil(thick));
    need(p.x >= 0 && p.x + p.w <= lv.width, f, `${at}.platforms[${j}]`, 'outside the level width');
  });
  need(Array.isArray(lv.hazards), f, `${at}.hazards`, 'missing or not an array');
  lv.hazards.forEach((z, j) => rect(z, f, `${at}.hazards[${j}]`, 1));
  need(Array.isArray(lv.coins), f, `${at}.coins`, 'missing or not an array');
  lv.coins.forEach((c, j) => {
    need(isObj(c) && isNum(c.x) && isNum(c.y), f, `${at}.coins[${j}]`, 'must be {x, y} numbers');
    need(c.x >= 0 && c.x <= lv.width && c.y >= 0 && c.y <= lv.height, f, `${at}.coins[${j}]`, 'outside the level');
  });
  need(isObj(lv.start) && isNum(lv.start.x) && isNum(lv.start.y), f, `${at}.start`, 'must be {x, y} numbers');
  const box = { x: lv.start.x, y: lv.start.y - h, w, h };
  need(box.x >= 0 && box.x + w <= lv.width, f, `${at}.start.x`, 'the player would start outside the level');
  need(lv.platforms.some((p) => p.y === lv.start.y && box.x < p.x + p.w && box.x + w > p.x), f, `${at}.start`,
    'the player must start standing on a platform (start.y = a platform top under start.x)');
  need(!lv.platforms.some((p) => overlap(box, p)), f, `${at}.start`, 'the player would start inside a platform');
  need(!lv.hazards.some((z) => overlap(box, z)), f, `${at}.start`, 'the player would start on a hazard');
  rect(lv.exit, f, `${at}.exit`, 1);
  need(lv.exit.x >= 0 && lv.exit.x + lv.exit.w <= lv.width, f, `${at}.exit`, 'outside the level width');
  need(!overlap(box, lv.exit), f, `${at}.exit`, 'touches the start (the level would end at once)');
}

function validateLevels(t, phys) {
  const f = 'levels.json';
  need(isObj(t), f, '(root)', 'missing or not an object');
  need(Number.isInteger(t.lives) && t.lives >= 1 && t.lives <= 9, f, 'lives', 'must be an integer within 1..9');
  for (const k of ['coin_score', 'exit_score', 'time_bonus_per_s']) need(isNum(t[k]) && t[k] >= 0, f, k, 'missing or not a number >= 0');
  need(isNum(t.coin_radius) && t.coin_radius > 0, f, 'coin_radius', 'missing or not a number > 0');
  need(Array.isArray(t.levels) && t.levels.length >= 1, f, 'levels', 'must list at least one level');
  const ids = new Set();
  t.levels.forEach((lv, i) => {
    validateLevel(lv, i, phys);
    need(!ids.has(lv.id), f, `levels[${i}].id`, `duplicate level id "${lv.id}"`);
    ids.add(lv.id);
  });
}

// Throws on the first problem found; returns the tables unchanged.
export function validateTables(t) {
  need(isObj(t), 'data/*.json', '(tables)', 'no tables given');
  validateTheme(t.theme);
  validatePhysics(t.physics);
  validateLevels(t.levels, t.physics);
  return t;
}
