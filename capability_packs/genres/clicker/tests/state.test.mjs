// Pure rules of the clicker template (src/state.js): node --test capability_packs/genres/clicker/tests/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  validateTables, createState, click, buy, tick, abandon, snapshot, upgradeCost, costOf, controlsFor, actionsFor,
  controlsHint, makeRng, formatNumber, contrast, readableOn, START_KEYS,
} from '../template/src/state.js';

const load = (name) => JSON.parse(readFileSync(new URL(`../template/data/${name}.json`, import.meta.url)));
const base = () => ({ theme: load('theme'), upgrades: load('upgrades'), economy: load('economy') });
function small() {
  const t = base();
  t.economy = { start_currency: 0, goal: 50, time_limit_ms: 20000, click_value: 2, seed: 7 };
  t.upgrades = { upgrades: [
    { id: 'tap', name: 'Tap', cost: 10, cost_growth: 1.5, per_click: 3, per_second: 0 },
    { id: 'auto', name: 'Auto', cost: 20, cost_growth: 1.15, per_click: 0, per_second: 4 },
  ] };
  return validateTables(t);
}

test('the shipped tables validate', () => {
  assert.doesNotThrow(() => validateTables(base()));
});

test('a click earns per_click and counts', () => {
  const st = createState(small());
  assert.equal(click(st).ok, true);
  assert.equal(st.currency, 2);
  assert.equal(st.clicks, 1);
  assert.equal(snapshot(st).score, 2);
});

test('buying spends the price, raises income and the next price by cost_growth', () => {
  const st = createState(small());
  for (let i = 0; i < 5; i++) click(st);
  assert.equal(buy(st, 'tap').ok, true);
  assert.equal(st.currency, 0);
  assert.equal(st.per_click, 5);
  assert.equal(st.upgrades.tap, 1);
  assert.equal(costOf(st, 'tap'), 15);
  const res = buy(st, 'tap');
  assert.equal(res.ok, false);
  assert.match(res.reason, /costs 15/);
  assert.equal(buy(st, 'nope').ok, false);
});

test('upgrade prices compound one rounded-up multiplication per level', () => {
  const u = { cost: 10, cost_growth: 1.15 };
  assert.deepEqual([0, 1, 2, 3, 4].map((l) => upgradeCost(u, l)), [10, 12, 14, 17, 20]);
});

test('per-second income accrues on game time only', () => {
  const st = createState(small());
  for (let i = 0; i < 10; i++) click(st);
  buy(st, 'auto');
  assert.equal(st.currency, 0);
  tick(st, 500);
  assert.equal(st.currency, 2);
  tick(st, 0);
  tick(st, -100);
  tick(st, NaN);
  assert.equal(st.currency, 2);
});

test('reaching the goal wins and freezes the state', () => {
  const st = createState(small());
  for (let i = 0; i < 25; i++) click(st);
  assert.equal(st.outcome, 'won');
  assert.equal(click(st).ok, false);
  tick(st, 100000);
  assert.equal(st.outcome, 'won');
});

test('the clock running out below the goal loses; idling 2 s does not', () => {
  const st = createState(small());
  tick(st, 2000);
  assert.equal(st.outcome, 'running');
  assert.equal(snapshot(st).time_left_ms, 18000);
  tick(st, 18000);
  assert.equal(st.outcome, 'lost');
  assert.equal(snapshot(st).time_left_ms, 0);
});

test('abandon only while running', () => {
  const st = createState(small());
  assert.equal(abandon(st).ok, true);
  assert.equal(st.outcome, 'abandoned');
  assert.equal(abandon(st).ok, false);
});

test('createState resets everything (a fresh Play)', () => {
  const t = small();
  const a = createState(t);
  click(a); buy(a, 'tap'); tick(a, 1000);
  const b = createState(t);
  assert.deepEqual(snapshot(b), { currency: 0, per_click: 2, per_second: 0, upgrades: { tap: 0, auto: 0 }, clicks: 0,
    bought: 0, goal: 50, time_left_ms: 20000, elapsed_ms: 0, score: 0, outcome: 'running' });
});

test('the snapshot is JSON only and floors the currency', () => {
  const st = createState(small());
  for (let i = 0; i < 10; i++) click(st);
  buy(st, 'auto');
  tick(st, 100);
  const snap = snapshot(st);
  assert.deepEqual(JSON.parse(JSON.stringify(snap)), snap);
  assert.equal(snap.currency, 0);
});

test('controls and actions: start from one constant, digits buy, hint from the table', () => {
  const t = small();
  assert.deepEqual(controlsFor(t).buy, { tap: 'Digit1', auto: 'Digit2' });
  const acts = actionsFor(t);
  assert.deepEqual(acts.start.keys, START_KEYS);
  assert.deepEqual(acts.click.keys, ['Space']);
  assert.deepEqual(acts.buy_auto.keys, ['Digit2']);
  assert.deepEqual(acts.abandon.keys, ['Escape']);
  assert.ok(!('wait' in acts));
  assert.equal(controlsHint(t), 'Space or click: click   ·   1-2: buy   ·   Esc: quit');
});

test('the PRNG is seeded: same seed, same sequence', () => {
  const a = makeRng(42);
  const b = makeRng(42);
  const xs = [a(), a(), a()];
  assert.deepEqual(xs, [b(), b(), b()]);
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  assert.notDeepEqual(xs, [makeRng(43)(), 0, 0]);
});

test('number formatting and readable colours', () => {
  assert.equal(formatNumber(999.9), '999');
  assert.equal(formatNumber(12345), '12.3K');
  assert.equal(formatNumber(4500000), '4.50M');
  assert.ok(contrast('#000000', '#ffffff') > 20);
  assert.equal(readableOn('#f2a541', '#24170f', '#fdf3e1'), '#24170f');
});

const broken = [
  ['theme.json palette.accent', (t) => { t.theme.palette.accent = 'orange'; }],
  ['theme.json texts.goal_prompt', (t) => { delete t.theme.texts.goal_prompt; }],
  ['upgrades.json upgrades', (t) => { t.upgrades.upgrades = []; }],
  ['upgrades.json upgrades[0].cost', (t) => { t.upgrades.upgrades[0].cost = 0; }],
  ['upgrades.json upgrades[1].id', (t) => { t.upgrades.upgrades[1].id = t.upgrades.upgrades[0].id; }],
  ['upgrades.json upgrades[0]:', (t) => { t.upgrades.upgrades[0].per_click = 0; t.upgrades.upgrades[0].per_second = 0; }],
  ['upgrades.json upgrades[0].name', (t) => { t.upgrades.upgrades[0].name = 'x'.repeat(40); }],
  ['economy.json goal', (t) => { t.economy.goal = t.economy.start_currency; }],
  ['economy.json time_limit_ms', (t) => { t.economy.time_limit_ms = 1500; }],
  ['economy.json click_value', (t) => { t.economy.click_value = 0; }],
  ['economy.json seed', (t) => { t.economy.seed = 1.5; }],
];
for (const [where, breakIt] of broken) {
  test(`a broken table names the file and key: ${where}`, () => {
    const t = small();
    breakIt(t);
    assert.throws(() => validateTables(t), (e) => e.message.startsWith(`tier2 data error: ${where}`));
  });
}
