// Pure game logic of the shop template (contract 2). No Phaser import here:
// everything is plain data so it can be snapshotted, tested and reasoned about.
// Every gameplay number comes from the data tables; this file holds rules only.

const HEX = /^#[0-9a-fA-F]{6}$/;
const BUY_KEYS = ['Digit1', 'Digit2', 'Digit3', 'Digit4', 'Digit5', 'Digit6', 'Digit7', 'Digit8', 'Digit9'];
const CRAFT_KEYS = ['KeyQ', 'KeyW', 'KeyE', 'KeyR', 'KeyT', 'KeyY', 'KeyU', 'KeyI', 'KeyO'];
export const GENRE = 'shop'; // the hook's genre and template id (src/hook.js, shared by the pack)
export const START_KEYS = ['Space', 'Enter'];
export const DELIVER_KEYS = ['Space', 'Enter'];
export const ABANDON_KEYS = ['Escape'];

function fail(file, key, msg) {
  throw new Error(`tier2 data error: ${file} ${key}: ${msg}`);
}
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const isStr = (v) => typeof v === 'string' && v.length > 0;
const isPosInt = (v) => Number.isInteger(v) && v > 0;

function need(cond, file, key, msg) {
  if (!cond) fail(file, key, msg);
}

function validateTheme(theme) {
  const f = 'theme.json';
  need(isObj(theme), f, '(root)', 'missing or not an object');
  for (const k of ['title', 'subtitle', 'shop_name', 'currency', 'customer_noun', 'craft_verb']) {
    need(isStr(theme[k]), f, k, 'missing or not a non-empty string');
  }
  need(isObj(theme.palette), f, 'palette', 'missing or not an object');
  for (const k of ['background', 'panel', 'accent', 'text', 'good', 'bad']) {
    need(HEX.test(String(theme.palette[k])), f, `palette.${k}`, 'missing or not a #rrggbb colour');
  }
  need(isObj(theme.texts), f, 'texts', 'missing or not an object');
  for (const k of ['start_hint', 'order_prompt', 'win', 'lose']) {
    need(isStr(theme.texts[k]), f, `texts.${k}`, 'missing or not a non-empty string');
  }
}

function validateItems(items) {
  const f = 'items.json';
  need(isObj(items) && Array.isArray(items.items), f, 'items', 'missing or not an array');
  need(items.items.length > 0, f, 'items', 'must list at least one item');
  const seen = new Set();
  items.items.forEach((it, i) => {
    const at = `items[${i}]`;
    need(isObj(it), f, at, 'not an object');
    need(isStr(it.id), f, `${at}.id`, 'missing or not a non-empty string');
    need(!seen.has(it.id), f, `${at}.id`, `duplicate item id "${it.id}"`);
    seen.add(it.id);
    need(isStr(it.name), f, `${at}.name`, 'missing or not a non-empty string');
    need(it.kind === 'raw' || it.kind === 'product', f, `${at}.kind`, 'must be "raw" or "product"');
    need(HEX.test(String(it.color)), f, `${at}.color`, 'missing or not a #rrggbb colour');
  });
  const raw = items.items.filter((it) => it.kind === 'raw').length;
  need(raw > 0, f, 'items', 'needs at least one "raw" item (something to buy)');
  need(raw <= BUY_KEYS.length, f, 'items', `has ${raw} raw items; at most ${BUY_KEYS.length} (keys 1..9)`);
  return new Map(items.items.map((it) => [it.id, it]));
}

function needItem(byId, file, key, id) {
  need(isStr(id), file, key, 'missing or not an item id');
  need(byId.has(id), file, key, `unknown item "${id}" (not in items.json)`);
}

function validateRecipes(recipes, byId) {
  const f = 'recipes.json';
  need(isObj(recipes) && Array.isArray(recipes.recipes), f, 'recipes', 'missing or not an array');
  need(recipes.recipes.length <= CRAFT_KEYS.length, f, 'recipes', `at most ${CRAFT_KEYS.length} recipes (keys Q..O)`);
  const seen = new Set();
  recipes.recipes.forEach((r, i) => {
    const at = `recipes[${i}]`;
    need(isObj(r), f, at, 'not an object');
    need(isStr(r.id), f, `${at}.id`, 'missing or not a non-empty string');
    need(!seen.has(r.id), f, `${at}.id`, `duplicate recipe id "${r.id}"`);
    seen.add(r.id);
    need(isStr(r.name), f, `${at}.name`, 'missing or not a non-empty string');
    need(Array.isArray(r.inputs) && r.inputs.length > 0, f, `${at}.inputs`, 'missing or empty array');
    r.inputs.forEach((inp, j) => {
      need(isObj(inp), f, `${at}.inputs[${j}]`, 'not an object');
      needItem(byId, f, `${at}.inputs[${j}].item`, inp.item);
      need(isPosInt(inp.qty), f, `${at}.inputs[${j}].qty`, 'must be a positive integer');
    });
    need(isObj(r.output), f, `${at}.output`, 'missing or not an object');
    needItem(byId, f, `${at}.output.item`, r.output.item);
    need(isPosInt(r.output.qty), f, `${at}.output.qty`, 'must be a positive integer');
  });
}

function validateOrders(orders, byId) {
  const f = 'orders.json';
  need(isObj(orders) && Array.isArray(orders.orders), f, 'orders', 'missing or not an array');
  need(orders.orders.length > 0, f, 'orders', 'must list at least one order');
  orders.orders.forEach((o, i) => {
    const at = `orders[${i}]`;
    need(isObj(o), f, at, 'not an object');
    need(isStr(o.id), f, `${at}.id`, 'missing or not a non-empty string');
    need(isStr(o.customer), f, `${at}.customer`, 'missing or not a non-empty string');
    needItem(byId, f, `${at}.item`, o.item);
    need(isPosInt(o.qty), f, `${at}.qty`, 'must be a positive integer');
    need(isNum(o.reward) && o.reward >= 0, f, `${at}.reward`, 'must be a number >= 0');
  });
}

function validatePrices(prices, byId) {
  const f = 'prices.json';
  need(isObj(prices), f, '(root)', 'missing or not an object');
  need(isObj(prices.buy), f, 'buy', 'missing or not an object');
  for (const [id, p] of Object.entries(prices.buy)) {
    needItem(byId, f, `buy.${id}`, id);
    need(byId.get(id).kind === 'raw', f, `buy.${id}`, 'only raw items can be bought');
    need(isNum(p) && p > 0, f, `buy.${id}`, 'price must be a number > 0');
  }
  for (const it of byId.values()) {
    if (it.kind === 'raw') need(prices.buy[it.id] !== undefined, f, `buy.${it.id}`, 'missing price for raw item');
  }
}

function validateEconomy(eco, prices) {
  const f = 'economy.json';
  need(isObj(eco), f, '(root)', 'missing or not an object');
  for (const k of ['start_money', 'goal_money', 'day_length_ms']) {
    need(isNum(eco[k]), f, k, 'missing or not a number');
  }
  need(eco.start_money >= 0, f, 'start_money', 'must be >= 0');
  need(eco.goal_money > eco.start_money, f, 'goal_money', 'must be greater than start_money');
  need(eco.day_length_ms > 0, f, 'day_length_ms', 'must be > 0');
  const cheapest = Math.min(...Object.values(prices.buy));
  need(eco.start_money >= cheapest, f, 'start_money', `${eco.start_money} cannot buy even the cheapest raw item (${cheapest})`);
}

// Throws Error("tier2 data error: <file> <key>: <problem>") on the first problem found.
export function validateTables(t) {
  need(isObj(t), 'data/*.json', '(tables)', 'no tables given');
  validateTheme(t.theme);
  const byId = validateItems(t.items);
  validateRecipes(t.recipes, byId);
  validateOrders(t.orders, byId);
  validatePrices(t.prices, byId);
  validateEconomy(t.economy, t.prices);
  return t;
}

export const itemById = (tables, id) => tables.items.items.find((it) => it.id === id) || null;
export const rawItems = (tables) => tables.items.items.filter((it) => it.kind === 'raw');

// Keyboard map reported by __TIER2__.controls(); the Play scene routes keys through the same map.
export function controlsFor(tables) {
  const buy = {};
  rawItems(tables).forEach((it, i) => { buy[it.id] = BUY_KEYS[i]; });
  const craft = {};
  tables.recipes.recipes.forEach((r, i) => { craft[r.id] = CRAFT_KEYS[i]; });
  return { start: [...START_KEYS], buy, craft, deliver: [...DELIVER_KEYS], abandon: [...ABANDON_KEYS] };
}

// The action vocabulary reported by __TIER2__.actions() (contract 2): one entry per control, keys as
// KeyboardEvent.code names, labels in the theme's words (its craft verb).
export function actionsFor(tables) {
  const c = controlsFor(tables);
  const verb = tables.theme.craft_verb.toLowerCase();
  const out = {
    start: { keys: c.start, label: 'start' },
    deliver: { keys: c.deliver, label: 'deliver' },
    abandon: { keys: c.abandon, label: 'close the shop' },
  };
  for (const it of rawItems(tables)) out[`buy_${it.id}`] = { keys: [c.buy[it.id]], label: `buy ${it.name}` };
  for (const r of tables.recipes.recipes) out[`craft_${r.id}`] = { keys: [c.craft[r.id]], label: `${verb} ${r.name}` };
  return out;
}

const KEY_NAMES = { Escape: 'Esc' };
// "Digit1" → "1", "KeyQ" → "Q", "Escape" → "Esc": how a key is named on screen.
export const keyName = (code) => KEY_NAMES[code] || code.replace(/^Digit/, '').replace(/^Key/, '');
const keyList = (keys) => keys.map(keyName).join('/');
// "1-4", "Q W E": the keys of a group of actions, a range when they are consecutive digits.
function keyGroup(keys) {
  const names = keys.map(keyName);
  const digits = names.every((n) => /^\d$/.test(n)) && names.every((n, i) => i === 0 || +n === +names[i - 1] + 1);
  return digits && names.length > 1 ? `${names[0]}-${names[names.length - 1]}` : names.join(' ');
}

// "1-4 buy  ·  Q W E bake  ·  Space/Enter deliver  ·  Esc close the shop": the controls hint, built from the
// action table and the theme's craft verb (never typed by hand).
export function controlsHint(tables) {
  const acts = actionsFor(tables);
  const group = (prefix) => Object.keys(acts).filter((a) => a.startsWith(prefix)).map((a) => acts[a].keys[0]);
  const parts = [];
  const buys = group('buy_');
  const crafts = group('craft_');
  if (buys.length) parts.push(`${keyGroup(buys)} buy`);
  if (crafts.length) parts.push(`${keyGroup(crafts)} ${tables.theme.craft_verb.toLowerCase()}`);
  for (const a of ['deliver', 'abandon']) parts.push(`${keyList(acts[a].keys)} ${acts[a].label}`);
  return parts.join('  ·  ');
}

// "Space / Enter or click: back to the menu": the start keys named from START_KEYS.
export const startKeysText = () => START_KEYS.map(keyName).join(' / ');

// The key names of an input event as the controls name them (the numpad counts as the main keys).
export const eventCode = (ev) => ev.code.replace(/^Numpad(\d)$/, 'Digit$1').replace('NumpadEnter', 'Enter');
export const isStartKey = (ev) => !ev.repeat && START_KEYS.includes(eventCode(ev));

export function createState(tables) {
  const inventory = {};
  for (const it of tables.items.items) inventory[it.id] = 0;
  return {
    tables,
    money: tables.economy.start_money,
    inventory,
    orderIndex: 0,
    ordersDone: 0,
    crafted: 0,
    bought: 0,
    elapsed_ms: 0,
    outcome: 'running',
    lostReason: null,
  };
}

export function currentOrder(state) {
  const list = state.tables.orders.orders;
  return list.length ? list[state.orderIndex % list.length] : null;
}

export const remainingMs = (state) => Math.max(0, state.tables.economy.day_length_ms - state.elapsed_ms);

export function canCraft(state, recipe) {
  return recipe.inputs.every((inp) => (state.inventory[inp.item] || 0) >= inp.qty);
}

export function canDeliver(state) {
  const o = currentOrder(state);
  return !!o && (state.inventory[o.item] || 0) >= o.qty;
}

// How many of `itemId` the current order asks for (0 when it asks for another item): the inventory marks it.
export function orderNeeds(state, itemId) {
  const o = currentOrder(state);
  return o && o.item === itemId ? o.qty : 0;
}

export function canAfford(state, itemId) {
  const p = state.tables.prices.buy[itemId];
  return p !== undefined && state.money >= p;
}

// "Stuck" (bankrupt): cannot afford the cheapest raw item, nothing is craftable and the order cannot be delivered.
export function isStuck(state) {
  const cheapest = Math.min(...Object.values(state.tables.prices.buy));
  if (state.money >= cheapest) return false;
  if (state.tables.recipes.recipes.some((r) => canCraft(state, r))) return false;
  return !canDeliver(state);
}

function evaluate(state) {
  if (state.outcome !== 'running') return;
  const eco = state.tables.economy;
  if (state.money >= eco.goal_money) {
    state.outcome = 'won';
  } else if (state.elapsed_ms >= eco.day_length_ms) {
    state.outcome = 'lost';
    state.lostReason = 'day_over';
  } else if (isStuck(state)) {
    state.outcome = 'lost';
    state.lostReason = 'bankrupt';
  }
}

const over = (state) => (state.outcome !== 'running' ? { ok: false, reason: 'game over' } : null);

export function buy(state, itemId) {
  const o = over(state); if (o) return o;
  const item = itemById(state.tables, itemId);
  if (!item) return { ok: false, reason: `unknown item "${itemId}"` };
  if (item.kind !== 'raw') return { ok: false, reason: `${item.name} cannot be bought` };
  if (!canAfford(state, itemId)) return { ok: false, reason: `not enough money for ${item.name}` };
  state.money -= state.tables.prices.buy[itemId];
  state.inventory[itemId] += 1;
  state.bought += 1;
  evaluate(state);
  return { ok: true, reason: null };
}

export function craft(state, recipeId) {
  const o = over(state); if (o) return o;
  const r = state.tables.recipes.recipes.find((x) => x.id === recipeId);
  if (!r) return { ok: false, reason: `unknown recipe "${recipeId}"` };
  const missing = r.inputs.filter((inp) => (state.inventory[inp.item] || 0) < inp.qty);
  if (missing.length) {
    const names = missing.map((m) => `${m.qty} ${itemById(state.tables, m.item).name}`).join(', ');
    return { ok: false, reason: `need ${names}` };
  }
  for (const inp of r.inputs) state.inventory[inp.item] -= inp.qty;
  state.inventory[r.output.item] += r.output.qty;
  state.crafted += 1;
  evaluate(state);
  return { ok: true, reason: null };
}

export function deliver(state) {
  const o = over(state); if (o) return o;
  const order = currentOrder(state);
  if (!order) return { ok: false, reason: 'no order' };
  if (!canDeliver(state)) {
    return { ok: false, reason: `need ${order.qty} ${itemById(state.tables, order.item).name}` };
  }
  state.inventory[order.item] -= order.qty;
  state.money += order.reward;
  state.ordersDone += 1;
  state.orderIndex += 1;
  evaluate(state);
  return { ok: true, reason: null };
}

export function tick(state, dtMs) {
  if (state.outcome !== 'running') return;
  if (isNum(dtMs) && dtMs > 0) state.elapsed_ms += dtMs;
  evaluate(state);
}

export function abandon(state) {
  if (state.outcome !== 'running') return { ok: false, reason: 'game over' };
  state.outcome = 'abandoned';
  return { ok: true, reason: null };
}

// JSON-serialisable snapshot for window.__TIER2__.state() (the hook adds `scene`).
export function snapshot(state) {
  const o = currentOrder(state);
  return {
    money: state.money,
    inventory: { ...state.inventory },
    order: o ? { id: o.id, item: o.item, qty: o.qty, reward: o.reward } : null,
    ordersDone: state.ordersDone,
    crafted: state.crafted,
    bought: state.bought,
    elapsed_ms: Math.round(state.elapsed_ms),
    outcome: state.outcome,
  };
}

// Presentation helpers (pure).
export function formatMoney(theme, n) {
  const v = Number.isInteger(n) ? String(n) : n.toFixed(2);
  return theme.currency.length === 1 ? `${theme.currency}${v}` : `${v} ${theme.currency}`;
}

export function fillText(template, vars) {
  return String(template).replace(/\{(\w+)\}/g, (m, k) => (vars[k] !== undefined ? String(vars[k]) : m));
}

export const hexToInt = (hex) => parseInt(String(hex).slice(1), 16);
