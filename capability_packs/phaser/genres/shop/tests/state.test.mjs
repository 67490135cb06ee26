// node --test: the shop template's pure rules (src/state.js) on its own data tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  validateTables, createState, buy, craft, deliver, tick, abandon, snapshot, controlsFor, currentOrder, START_KEYS,
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
