// node --test: the platformer template's pure rules (src/state.js, src/physics.js, src/tables.js) on its own data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  validateTables, createState, tick, abandon, snapshot, controlsFor, levelOf, ACTIONS, START_KEYS,
} from '../template/src/state.js';
import { stepBody } from '../template/src/physics.js';

const load = (name) => JSON.parse(readFileSync(new URL(`../template/data/${name}.json`, import.meta.url)));
const raw = () => ({ theme: load('theme'), levels: load('levels'), physics: load('physics') });
const FRAME = 1000 / 60;
const frames = (st, t, n, input = {}) => {
  const events = [];
  for (let i = 0; i < n; i++) events.push(...tick(st, t, FRAME, input));
  return events;
};
const fresh = () => {
  const t = validateTables(raw());
  return { t, st: createState(t) };
};
// stand the player on the ground right next to a rectangle (left of it)
const placeBefore = (st, t, r) => {
  const lv = levelOf(st, t);
  const ground = lv.platforms.find((p) => p.x < r.x && p.x + p.w >= r.x && p.y >= r.y);
  st.body.x = r.x - t.physics.player.w - 2;
  st.body.y = ground.y - t.physics.player.h;
};

test('the template tables validate; a fresh state stands on the ground at the start', () => {
  const { t, st } = fresh();
  const s = snapshot(st, t);
  const lv = t.levels.levels[0];
  assert.equal(s.outcome, 'running');
  assert.equal(s.level, 1);
  assert.equal(s.lives, t.levels.lives);
  assert.equal(s.player.on_ground, true);
  assert.equal(s.player_y, s.player.y);
  assert.equal(s.player.y + t.physics.player.h, lv.start.y);
  assert.deepEqual(s.exit, lv.exit);
  assert.deepEqual(controlsFor().start, START_KEYS);
  assert.ok(ACTIONS.jump.keys.includes('Space') && ACTIONS.abandon.keys[0] === 'Escape');
  assert.deepEqual(JSON.parse(JSON.stringify(s)), s, 'the snapshot is plain JSON');
});

test('idling for 2 s changes nothing and never ends the game', () => {
  const { t, st } = fresh();
  const before = snapshot(st, t);
  frames(st, t, 120);
  const after = snapshot(st, t);
  assert.equal(after.outcome, 'running');
  assert.equal(after.player.x, before.player.x);
  assert.equal(after.player_y, before.player_y);
  assert.equal(after.lives, before.lives);
});

test('jump: a one-frame press lifts the player, gravity brings it back to the same ground', () => {
  const { t, st } = fresh();
  const y0 = st.body.y;
  const events = frames(st, t, 1, { jump: true });
  assert.ok(events.some((e) => e.type === 'jump'));
  frames(st, t, 8);
  assert.ok(st.body.y < y0 - 20, 'rises');
  assert.equal(st.body.on_ground, false);
  const back = frames(st, t, 120);
  assert.ok(back.some((e) => e.type === 'land'));
  assert.equal(st.body.y, y0);
  assert.equal(st.body.on_ground, true);
  frames(st, t, 30, { jump: true });
  const held = frames(st, t, 120, { jump: true });
  assert.ok(!held.some((e) => e.type === 'jump'), 'holding the key does not jump again');
});

test('air_jumps: a fresh press in the air jumps again (double jump), then no more until landing', () => {
  const r = raw();
  r.physics.air_jumps = 1;
  const t = validateTables(r);
  const st = createState(t);
  const jumpsOf = (events) => events.filter((e) => e.type === 'jump').length;
  assert.equal(jumpsOf(frames(st, t, 1, { jump: true })), 1);
  frames(st, t, 10);
  const high = st.body.y;
  assert.equal(jumpsOf(frames(st, t, 1, { jump: true })), 1, 'the air jump');
  frames(st, t, 10);
  assert.ok(st.body.y < high, 'it lifts again');
  assert.equal(jumpsOf(frames(st, t, 1, { jump: true })), 0, 'no third jump');
  frames(st, t, 200);
  assert.equal(st.body.on_ground, true);
  assert.equal(st.body.air_jumps, 1, 'landing restores the air jump');
});

test('a press shorter than one physics step still jumps; one step per 1000/60 ms frame', () => {
  const { t, st } = fresh();
  tick(st, t, 1, { jump: true });
  assert.equal(st.body.on_ground, true, 'no step yet');
  const ev = tick(st, t, FRAME - 1, {});
  assert.ok(ev.some((e) => e.type === 'jump'));
  const e0 = st.elapsed_ms;
  frames(st, t, 600);
  assert.ok(Math.abs(st.elapsed_ms - e0 - 600 * (1000 / t.physics.steps_per_second)) < 1e-6);
});

test('running moves at run_speed and a wall stops the player', () => {
  const { t, st } = fresh();
  const x0 = st.body.x;
  frames(st, t, 6, { right: true });
  assert.ok(Math.abs(st.body.x - (x0 + 6 * t.physics.run_speed / t.physics.steps_per_second)) < 1e-9);
  const wall = { x: st.body.x + 40, y: st.body.y - 100, w: 40, h: 400 };
  const b = { ...st.body };
  for (let i = 0; i < 60; i++) stepBody(b, { right: true }, [...levelOf(st, t).platforms, wall], 1e6, t.physics);
  assert.equal(b.x, wall.x - t.physics.player.w);
});

test('touching a hazard costs a life; the player respawns at the start; no lives left loses', () => {
  const { t, st } = fresh();
  const lv = levelOf(st, t);
  const z = lv.hazards[0] || (lv.hazards.push({ x: 300, y: lv.start.y - 16, w: 32, h: 16 }), lv.hazards[0]);
  for (let life = t.levels.lives; life > 0; life--) {
    placeBefore(st, t, z);
    const events = frames(st, t, 30, { right: true });
    assert.ok(events.some((e) => e.type === 'death' && e.reason === 'hazard'));
    assert.equal(st.lives, life - 1);
    if (life > 1) {
      assert.ok(st.respawn_ms > 0);
      frames(st, t, Math.ceil(t.physics.respawn_ms / FRAME) + 2);
      assert.equal(st.body.x, lv.start.x);
      assert.equal(st.outcome, 'running');
    }
  }
  assert.equal(st.outcome, 'lost');
  assert.equal(st.lost_reason, 'hazard');
  assert.deepEqual(tick(st, t, FRAME, { right: true }), [], 'nothing happens after the end');
});

test('falling below the level is a pit: a life lost', () => {
  const { t, st } = fresh();
  st.body.y = levelOf(st, t).height + 1;
  st.body.on_ground = false;
  const events = frames(st, t, 1);
  assert.ok(events.some((e) => e.type === 'death' && e.reason === 'pit'));
  assert.equal(st.lives, t.levels.lives - 1);
});

test('coins score once each', () => {
  const { t, st } = fresh();
  const lv = levelOf(st, t);
  const c = lv.coins[0];
  st.body.x = c.x - t.physics.player.w / 2;
  st.body.y = c.y - t.physics.player.h / 2;
  const events = frames(st, t, 1);
  assert.ok(events.some((e) => e.type === 'coin' && e.index === 0));
  assert.equal(st.coins, 1);
  assert.equal(st.score, t.levels.coin_score);
  frames(st, t, 1);
  assert.equal(st.coins >= 1 && st.taken[0], true);
  assert.equal(snapshot(st, t).coins_left, lv.coins.length - st.coins);
});

test('the exit clears the level (score + time bonus); the exit of the last level wins', () => {
  const { t, st } = fresh();
  const n = t.levels.levels.length;
  for (let i = 0; i < n; i++) {
    const lv = levelOf(st, t);
    const score = st.score;
    const left = st.time_left_ms;
    st.body.x = lv.exit.x;
    st.body.y = lv.exit.y;
    const events = frames(st, t, 1);
    const bonus = t.levels.exit_score + Math.floor((left - FRAME) / 1000) * t.levels.time_bonus_per_s;
    assert.ok(st.score - score >= bonus - t.levels.time_bonus_per_s, 'exit score and time bonus');
    if (i < n - 1) {
      assert.ok(events.some((e) => e.type === 'level' && e.index === i + 1));
      assert.equal(snapshot(st, t).level, i + 2);
      assert.equal(st.body.on_ground, true);
    }
  }
  assert.equal(st.outcome, 'won');
  assert.equal(st.levels_cleared, n);
});

test('the time limit loses; abandon ends the game as abandoned', () => {
  const { t, st } = fresh();
  frames(st, t, Math.ceil(levelOf(st, t).time_limit_ms / FRAME) + 1);
  assert.equal(st.outcome, 'lost');
  assert.equal(st.lost_reason, 'time');
  const again = fresh();
  assert.equal(abandon(again.st), true);
  assert.equal(again.st.outcome, 'abandoned');
  assert.equal(abandon(again.st), false);
});

test('broken tables throw "tier2 data error: <file> <key>: ..."', () => {
  const cases = [
    [(r) => { delete r.theme.palette.coin; }, /theme\.json palette\.coin:/],
    [(r) => { r.physics.gravity = -1; }, /physics\.json gravity:/],
    [(r) => { r.levels.lives = 0; }, /levels\.json lives:/],
    [(r) => { r.levels.levels = []; }, /levels\.json levels:/],
    [(r) => { r.levels.levels[0].start.y -= 50; }, /levels\.json levels\[0\]\.start: the player must start standing/],
    [(r) => { r.levels.levels[0].platforms[0].h = 2; }, /levels\.json levels\[0\]\.platforms\[0\]\.h: must be >=/],
    [(r) => { r.levels.levels[0].time_limit_ms = 1000; }, /levels\.json levels\[0\]\.time_limit_ms:/],
    [(r) => {
      const lv = r.levels.levels[0];
      lv.exit = { ...lv.exit, x: lv.start.x, y: lv.start.y - lv.exit.h };
    }, /levels\.json levels\[0\]\.exit: touches the start/],
    [(r) => { r.levels.levels[0].coins.push({ x: 'a', y: 3 }); }, /levels\.json levels\[0\]\.coins\[\d+\]:/],
  ];
  for (const [breakIt, message] of cases) {
    const r = raw();
    breakIt(r);
    assert.throws(() => validateTables(r), (err) => err.message.startsWith('tier2 data error: ') && message.test(err.message));
  }
});
