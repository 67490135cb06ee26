// node --test: the shop template's pure rules (src/state.js) on its own data tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  validateTables, createState, buy, craft, deliver, tick, abandon, snapshot, controlsFor, actionsFor, controlsHint,
  currentOrder, orderNeeds, isStartKey, startKeysText, isStuck, keyName, START_KEYS, DELIVER_KEYS, ABANDON_KEYS,
} from '../template/src/state.js';

const load = (name) => JSON.parse(readFileSync(new URL(`../template/data/${name}.json`, import.meta.url)));
const raw = () => ({
  theme: load('theme'), items: load('items'), recipes: load('recipes'), orders: load('orders'),
  prices: load('prices'), economy: load('economy'),
});
const fresh = () => createState(validateTables(raw()));

function recipeFor(tables, item) {
  return tables.recipes.recipes.find((r) => r.output.item === item) || null;
}

// the same greedy plan the genre probe plays: deliver, else craft or buy what the current order needs
function step(state) {
  const order = currentOrder(state);
  const inv = state.inventory;
  if ((inv[order.item] || 0) >= order.qty) return deliver(state);
  const need = (item) => {
    const r = recipeFor(state.tables, item);
    if (!r) return buy(state, item);
    for (const inp of r.inputs) if ((inv[inp.item] || 0) < inp.qty) return need(inp.item);
    return craft(state, r.id);
  };
  return need(order.item);
}

test('the template tables validate and a fresh state is running', () => {
  const s = fresh();
  assert.equal(s.outcome, 'running');
  assert.equal(snapshot(s).money, s.tables.economy.start_money);
  assert.deepEqual(START_KEYS, controlsFor(s.tables).start);
});

test('buying spends money and fills the inventory', () => {
  const s = fresh();
  const item = s.tables.items.items.find((it) => it.kind === 'raw');
  const before = s.money;
  assert.ok(buy(s, item.id).ok);
  assert.equal(s.money, before - s.tables.prices.buy[item.id]);
  assert.equal(s.inventory[item.id], 1);
});

test('planned play reaches the goal: won', () => {
  const s = fresh();
  for (let i = 0; i < 500 && s.outcome === 'running'; i++) {
    step(s);
    tick(s, 50);
  }
  assert.equal(s.outcome, 'won');
  assert.ok(s.money >= s.tables.economy.goal_money);
});

test('the day running out below the goal: lost', () => {
  const s = fresh();
  tick(s, s.tables.economy.day_length_ms + 1);
  assert.equal(s.outcome, 'lost');
  assert.equal(s.lostReason, 'day_over');
});

test('abandon latches and later actions are refused', () => {
  const s = fresh();
  assert.ok(abandon(s).ok);
  assert.equal(s.outcome, 'abandoned');
  assert.equal(buy(s, s.tables.items.items[0].id).ok, false);
  assert.equal(abandon(s).ok, false);
});

test('a broken table is a tier2 data error naming the file and key', () => {
  const t = raw();
  delete t.economy.start_money;
  assert.throws(() => validateTables(t), /tier2 data error: economy\.json start_money/);
  const u = raw();
  u.recipes.recipes[0].inputs[0].item = 'no_such_item';
  assert.throws(() => validateTables(u), /tier2 data error: recipes\.json/);
});

test('the controls hint is built from the action table and the craft verb', () => {
  const t = validateTables(raw());
  const hint = controlsHint(t);
  assert.equal(hint, '1-4 buy  ·  Q W E bake  ·  Space/Enter deliver  ·  Esc close the shop');
  // every key of every action but start is named in it, in the words of the theme
  const acts = actionsFor(t);
  for (const [name, a] of Object.entries(acts)) {
    if (name !== 'start' && !name.startsWith('buy_')) for (const k of a.keys) assert.ok(hint.includes(keyName(k)), k);
  }
  // it follows the tables: another verb, fewer raw items, one more recipe
  const u = raw();
  u.theme.craft_verb = 'Brew';
  u.items.items = u.items.items.filter((it) => it.id !== 'berries');
  delete u.prices.buy.berries;
  u.recipes.recipes = u.recipes.recipes.filter((r) => r.id !== 'bake_tart');
  u.recipes.recipes.push({ id: 'bake_buns', name: 'Buns', inputs: [{ item: 'flour', qty: 1 }], output: { item: 'bread', qty: 2 } },
    { id: 'bake_rolls', name: 'Rolls', inputs: [{ item: 'egg', qty: 1 }], output: { item: 'bread', qty: 1 } });
  u.orders.orders = u.orders.orders.filter((o) => o.item !== 'tart');
  assert.equal(controlsHint(validateTables(u)), '1-3 buy  ·  Q W E R brew  ·  Space/Enter deliver  ·  Esc close the shop');
  // a single raw item is one key, not a range
  const v = raw();
  v.items.items = v.items.items.filter((it) => it.kind === 'product' || it.id === 'flour');
  v.prices.buy = { flour: 2 };
  v.recipes.recipes = [v.recipes.recipes[0]];
  v.orders.orders = v.orders.orders.filter((o) => o.item === 'bread');
  assert.match(controlsHint(validateTables(v)), /^1 buy {2}· {2}Q bake {2}·/);
});

test('the action table names every control once, the hook reports it', () => {
  const t = validateTables(raw());
  const acts = actionsFor(t);
  const c = controlsFor(t);
  assert.deepEqual(acts.start.keys, START_KEYS);
  assert.deepEqual(acts.deliver.keys, DELIVER_KEYS);
  assert.deepEqual(acts.abandon.keys, ABANDON_KEYS);
  assert.deepEqual(acts.buy_flour, { keys: [c.buy.flour], label: 'buy Flour' });
  assert.deepEqual(acts.craft_bake_tart, { keys: ['KeyE'], label: 'bake Berry Tart' });
  assert.equal(Object.keys(acts).length, 3 + 4 + 3);
});

test('start keys come from START_KEYS: the menu and game-over checks and their text', () => {
  const ev = (code, repeat = false) => ({ code, repeat });
  for (const k of START_KEYS) assert.ok(isStartKey(ev(k)), k);
  assert.ok(isStartKey(ev('NumpadEnter')));
  assert.equal(isStartKey(ev('KeyS')), false);
  assert.equal(isStartKey(ev(START_KEYS[0], true)), false); // a held key does not start twice
  assert.equal(startKeysText(), START_KEYS.map(keyName).join(' / '));
});

test('the tables carry no sell prices, no max_orders_missed and no typed controls hint', () => {
  const t = raw();
  assert.deepEqual(Object.keys(t.prices), ['buy']);
  assert.equal('max_orders_missed' in t.economy, false);
  assert.equal('controls_hint' in t.theme.texts, false);
  // old (contract-1) tables that still carry them validate: the rules never read them
  const old = raw();
  old.prices.sell = { bread: 9 };
  old.economy.max_orders_missed = 3;
  old.theme.texts.controls_hint = '1-4 buy';
  assert.doesNotThrow(() => validateTables(old));
});

test('only order rewards pay: delivering earns the reward, products have no sale value', () => {
  const s = fresh();
  const order = currentOrder(s);
  s.inventory[order.item] = order.qty;
  const before = s.money;
  assert.ok(deliver(s).ok);
  assert.equal(s.money, before + order.reward);
  assert.equal(s.inventory[order.item], 0);
});

test('the inventory marks what the current order needs', () => {
  const s = fresh();
  const order = currentOrder(s);
  assert.equal(orderNeeds(s, order.item), order.qty);
  const other = s.tables.items.items.find((it) => it.id !== order.item);
  assert.equal(orderNeeds(s, other.id), 0);
  s.inventory[order.item] = order.qty;
  deliver(s);
  assert.equal(orderNeeds(s, currentOrder(s).item), currentOrder(s).qty);
});

test('broke with nothing to craft or deliver: lost (bankrupt)', () => {
  const s = fresh();
  // berries and sugar only: the tart also needs flour, cookies need an egg, the first order wants bread
  for (const id of ['berries', 'sugar']) {
    while (s.outcome === 'running' && s.money >= s.tables.prices.buy[id]) assert.ok(buy(s, id).ok);
  }
  assert.ok(isStuck(s));
  assert.equal(s.outcome, 'lost');
  assert.equal(s.lostReason, 'bankrupt');
});
