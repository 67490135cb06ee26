// Pure game rules of the clicker template (contract 2). No Phaser import, no DOM: plain data only, so the state
// can be snapshotted, unit-tested and reasoned about. Every gameplay number comes from data/; rules live here.

const HEX = /^#[0-9a-fA-F]{6}$/;
const ID = /^[a-z][a-z0-9_]*$/;
export const GENRE = 'clicker'; // the hook's genre and template id (src/hook.js, shared by the pack)
export const BUY_KEYS = ['Digit1', 'Digit2', 'Digit3', 'Digit4', 'Digit5', 'Digit6', 'Digit7', 'Digit8', 'Digit9'];
export const START_KEYS = ['Enter'];
export const CLICK_KEYS = ['Space'];
export const ABANDON_KEYS = ['Escape'];
export const NAME_MAX = 20;
const PALETTE_KEYS = ['background', 'panel', 'accent', 'text', 'good', 'bad'];
const TEXT_KEYS = ['goal_prompt', 'win', 'lose'];

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
  for (const k of ['title', 'subtitle', 'currency', 'button_label']) need(isStr(theme[k]), f, k, 'missing or not a non-empty string');
  need(isObj(theme.palette), f, 'palette', 'missing or not an object');
  for (const k of PALETTE_KEYS) need(HEX.test(String(theme.palette[k])), f, `palette.${k}`, 'missing or not a #rrggbb colour');
  need(isObj(theme.texts), f, 'texts', 'missing or not an object');
  for (const k of TEXT_KEYS) need(isStr(theme.texts[k]), f, `texts.${k}`, 'missing or not a non-empty string');
}

function validateUpgrades(upgrades) {
  const f = 'upgrades.json';
  need(isObj(upgrades) && Array.isArray(upgrades.upgrades), f, 'upgrades', 'missing or not an array');
  const list = upgrades.upgrades;
  need(list.length > 0, f, 'upgrades', 'must list at least one upgrade');
  need(list.length <= BUY_KEYS.length, f, 'upgrades', `has ${list.length}; at most ${BUY_KEYS.length} (keys 1..9)`);
  const seen = new Set();
  list.forEach((u, i) => {
    const at = `upgrades[${i}]`;
    need(isObj(u), f, at, 'not an object');
    need(typeof u.id === 'string' && ID.test(u.id), f, `${at}.id`, 'missing or not a snake_case id');
    need(!seen.has(u.id), f, `${at}.id`, `duplicate upgrade id "${u.id}"`);
    seen.add(u.id);
    need(isStr(u.name) && u.name.length <= NAME_MAX, f, `${at}.name`, `missing or longer than ${NAME_MAX} characters`);
    need(isNum(u.cost) && u.cost > 0, f, `${at}.cost`, 'must be a number > 0');
    need(isNum(u.cost_growth) && u.cost_growth >= 1 && u.cost_growth <= 5, f, `${at}.cost_growth`, 'must be a number in [1, 5]');
    need(isNum(u.per_click) && u.per_click >= 0, f, `${at}.per_click`, 'must be a number >= 0');
    need(isNum(u.per_second) && u.per_second >= 0, f, `${at}.per_second`, 'must be a number >= 0');
    need(u.per_click > 0 || u.per_second > 0, f, at, 'raises neither per_click nor per_second');
  });
}

function validateEconomy(eco) {
  const f = 'economy.json';
  need(isObj(eco), f, '(root)', 'missing or not an object');
  for (const k of ['start_currency', 'goal', 'time_limit_ms', 'click_value', 'seed']) need(isNum(eco[k]), f, k, 'missing or not a number');
  need(eco.start_currency >= 0, f, 'start_currency', 'must be >= 0');
  need(eco.goal > eco.start_currency, f, 'goal', 'must be greater than start_currency');
  need(eco.time_limit_ms >= 10000, f, 'time_limit_ms', 'must be >= 10000 (idling 2 s must never end the game)');
  need(eco.click_value > 0, f, 'click_value', 'must be > 0 (a click must earn something)');
  need(Number.isInteger(eco.seed) && eco.seed >= 0, f, 'seed', 'must be an integer >= 0');
}

// Throws Error("tier2 data error: <file> <key>: <problem>") on the first problem found.
export function validateTables(t) {
  need(isObj(t), 'data/*.json', '(tables)', 'no tables given');
  validateTheme(t.theme);
  validateUpgrades(t.upgrades);
  validateEconomy(t.economy);
  return t;
}

// Keyboard map reported by __TIER2__.controls(); Play routes keys through the same map.
export function controlsFor(tables) {
  const buy = {};
  tables.upgrades.upgrades.forEach((u, i) => { buy[u.id] = BUY_KEYS[i]; });
  return { start: [...START_KEYS], click: [...CLICK_KEYS], buy, abandon: [...ABANDON_KEYS] };
}

// The action vocabulary (contract 2): one entry per control, keys as KeyboardEvent.code names.
export function actionsFor(tables) {
  const c = controlsFor(tables);
  const out = { start: { keys: c.start, label: 'start' }, click: { keys: c.click, label: 'click' } };
  for (const u of tables.upgrades.upgrades) out[`buy_${u.id}`] = { keys: [c.buy[u.id]], label: `buy ${u.name}` };
  out.abandon = { keys: c.abandon, label: 'quit' };
  return out;
}

const keyName = (code) => code.replace(/^Digit/, '').replace(/^Key/, '').replace('Escape', 'Esc');

// "Space click · 1-4 buy · Esc quit": the controls hint, built from the action table (never typed by hand).
export function controlsHint(tables) {
  const acts = actionsFor(tables);
  const buys = Object.keys(acts).filter((a) => a.startsWith('buy_')).map((a) => keyName(acts[a].keys[0]));
  const parts = [`${acts.click.keys.map(keyName).join('/')} or click: ${acts.click.label}`];
  if (buys.length) parts.push(`${buys.length > 1 ? `${buys[0]}-${buys[buys.length - 1]}` : buys[0]}: buy`);
  parts.push(`${acts.abandon.keys.map(keyName).join('/')}: ${acts.abandon.label}`);
  return parts.join('   ·   ');
}
export const startHint = () => `Press ${START_KEYS.map(keyName).join(' / ')} or click to start`;

// Seeded PRNG (mulberry32): reseeded per Play from economy.seed; drives the sparkles around the button.
export function makeRng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function createState(tables) {
  const eco = tables.economy;
  const upgrades = {};
  for (const u of tables.upgrades.upgrades) upgrades[u.id] = 0;
  return {
    tables,
    currency: eco.start_currency,
    earned: 0,
    per_click: eco.click_value,
    per_second: 0,
    upgrades,
    clicks: 0,
    bought: 0,
    elapsed_ms: 0,
    outcome: 'running',
    rng: makeRng(eco.seed),
  };
}

export const upgradeById = (tables, id) => tables.upgrades.upgrades.find((u) => u.id === id) || null;

// Price of the next level: each level multiplies the previous price by cost_growth, rounded up (one
// multiplication per level, so Python's checks.py computes the very same integers).
export function upgradeCost(upgrade, level) {
  let cost = Math.ceil(upgrade.cost - 1e-9);
  for (let i = 0; i < level; i++) cost = Math.ceil(cost * upgrade.cost_growth - 1e-9);
  return cost;
}

export const costOf = (state, id) => upgradeCost(upgradeById(state.tables, id), state.upgrades[id]);
export const canAfford = (state, id) => state.currency >= costOf(state, id);
export const timeLeftMs = (state) => Math.max(0, state.tables.economy.time_limit_ms - state.elapsed_ms);
export const score = (state) => Math.floor(state.earned);

function evaluate(state) {
  if (state.outcome !== 'running') return;
  if (state.currency >= state.tables.economy.goal) state.outcome = 'won';
  else if (state.elapsed_ms >= state.tables.economy.time_limit_ms) state.outcome = 'lost';
}

const over = (state) => (state.outcome !== 'running' ? { ok: false, reason: 'game over' } : null);

export function click(state) {
  const o = over(state); if (o) return o;
  state.currency += state.per_click;
  state.earned += state.per_click;
  state.clicks += 1;
  evaluate(state);
  return { ok: true, reason: null, gained: state.per_click };
}

export function buy(state, id) {
  const o = over(state); if (o) return o;
  const u = upgradeById(state.tables, id);
  if (!u) return { ok: false, reason: `unknown upgrade "${id}"` };
  const cost = costOf(state, id);
  if (state.currency < cost) return { ok: false, reason: `${u.name} costs ${cost}` };
  state.currency -= cost;
  state.upgrades[id] += 1;
  state.per_click += u.per_click;
  state.per_second += u.per_second;
  state.bought += 1;
  evaluate(state);
  return { ok: true, reason: null };
}

// Income per second accrues on game time (the scene's update delta).
export function tick(state, dtMs) {
  if (state.outcome !== 'running') return;
  if (isNum(dtMs) && dtMs > 0) {
    const dt = Math.min(dtMs, state.tables.economy.time_limit_ms - state.elapsed_ms);
    state.elapsed_ms += dt;
    state.currency += (state.per_second * dt) / 1000;
    state.earned += (state.per_second * dt) / 1000;
  }
  evaluate(state);
}

export function abandon(state) {
  if (state.outcome !== 'running') return { ok: false, reason: 'game over' };
  state.outcome = 'abandoned';
  return { ok: true, reason: null };
}

// JSON-only snapshot for window.__TIER2__.state() (the hook adds `scene`). Currency is floored: what is shown.
export function snapshot(state) {
  return {
    currency: Math.floor(state.currency + 1e-9),
    per_click: state.per_click,
    per_second: Math.round(state.per_second * 100) / 100,
    upgrades: { ...state.upgrades },
    clicks: state.clicks,
    bought: state.bought,
    goal: state.tables.economy.goal,
    time_left_ms: Math.round(timeLeftMs(state)),
    elapsed_ms: Math.round(state.elapsed_ms),
    score: score(state),
    outcome: state.outcome,
  };
}

// Presentation helpers (pure): 999 → "999", 12_345 → "12.3K", 4_500_000 → "4.50M".
export function formatNumber(n) {
  const v = Math.floor(n + 1e-9);
  if (v < 10000) return String(v);
  if (v < 1e6) return `${(v / 1e3).toFixed(1)}K`;
  if (v < 1e9) return `${(v / 1e6).toFixed(2)}M`;
  return `${(v / 1e9).toFixed(2)}B`;
}

export function formatRate(n) {
  return Number.isInteger(n) ? formatNumber(n) : n.toFixed(1);
}

export function fillText(template, vars) {
  return String(template).replace(/\{(\w+)\}/g, (m, k) => (vars[k] !== undefined ? String(vars[k]) : m));
}

export const hexToInt = (hex) => parseInt(String(hex).slice(1), 16);

// WCAG relative luminance and contrast ratio of two #rrggbb colours.
export function luminance(hex) {
  const n = hexToInt(hex);
  const lin = (c) => { const v = c / 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * lin((n >> 16) & 255) + 0.7152 * lin((n >> 8) & 255) + 0.0722 * lin(n & 255);
}
export function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
// Of the candidate colours, the one that reads best on `bg` (e.g. the big button's label on the accent face).
export const readableOn = (bg, ...candidates) => candidates.reduce((best, c) => (contrast(c, bg) > contrast(best, bg) ? c : best));
