// node --test: the shooter template's pure rules (src/state.js) on its own data tables and on small hand-made ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  validateTables, createState, tick, stepOnce, abandon, snapshot, takeEvents, actionsFor, controlsFor, controlsHint,
  startHint, START_KEYS, FIRE_KEYS, ARENA, STEP_MS,
} from '../template/src/state.js';

const load = (name) => JSON.parse(readFileSync(new URL(`../template/data/${name}.json`, import.meta.url)));
const raw = () => ({ theme: load('theme'), player: load('player'), enemies: load('enemies'), waves: load('waves') });
const IDLE = { left: false, right: false, fire: false };
const FIRE = { left: false, right: false, fire: true };

// One weak enemy type, no sway, no homing, no fire; `waves` one wave of `count` spawning right away.
function small({ count = 1, waves = 1, hp = 1, lives = 3, fire = 0, speed = 60 } = {}) {
  const t = raw();
  t.player = { ...t.player, lives, speed: 300, fire_cooldown_ms: 200, shot_speed: 600, max_shots: 3, invulnerable_ms: 1000 };
  t.enemies = { enemies: [{ id: 'grunt', name: 'Grunt', shape: 'dart', color: '#80e0a0', hp, radius: 16, speed, score: 10,
    sway: 0, sway_ms: 2000, homing: 0, fire_ms: fire, shot_speed: 200, shot_radius: 5 }] };
  t.waves = { seed: 7, start_delay_ms: 0, gap_ms: 500,
    waves: Array.from({ length: waves }, (_, i) => ({ name: `W${i + 1}`, spawn_ms: 400, bonus: 100, spawns: [{ enemy: 'grunt', count }] })) };
  return validateTables(t);
}
const run = (s, ms, input = IDLE) => { for (let t = 0; t < ms; t += STEP_MS) tick(s, STEP_MS, input); };

test('the template tables validate and a fresh Play starts clean', () => {
  const tables = validateTables(raw());
  const s = createState(tables);
  assert.equal(s.outcome, 'running');
  assert.equal(s.lives, tables.player.lives);
  assert.equal(s.score, 0);
  assert.equal(s.kills, 0);
  assert.deepEqual(s.enemies, []);
  assert.equal(s.player.x, ARENA.w / 2);
  const snap = snapshot(s);
  assert.deepEqual(JSON.parse(JSON.stringify(snap)), snap, 'the snapshot is plain JSON');
  for (const k of ['player', 'enemies', 'projectiles', 'lives', 'score', 'kills', 'outcome', 'elapsed_ms']) assert.ok(k in snap, k);
  assert.equal(snap.projectiles, 0);
});

test('idling 2 s never ends the game, and no threat has arrived', () => {
  const s = createState(validateTables(raw()));
  run(s, 2000);
  assert.equal(s.outcome, 'running');
  assert.equal(s.lives, s.tables.player.lives);
  assert.ok(s.enemies.every((e) => e.y < ARENA.playerY - 100));
});

test('idling long enough loses: the enemies break through and every life goes', () => {
  const s = createState(validateTables(raw()));
  run(s, 60000);
  assert.equal(s.outcome, 'lost');
  assert.equal(s.lives, 0);
  assert.ok(['breached', 'crashed', 'shot_down'].includes(s.lostReason));
});

test('fire adds a projectile, the cooldown spaces shots and max_shots caps them', () => {
  const s = createState(small());
  tick(s, STEP_MS, FIRE);
  assert.equal(snapshot(s).projectiles, 1);
  tick(s, STEP_MS, FIRE);
  assert.equal(snapshot(s).projectiles, 1, 'cooldown holds the second shot');
  run(s, 1000, FIRE);
  assert.ok(snapshot(s).projectiles <= s.tables.player.max_shots);
  assert.ok(s.fired >= 3);
});

test('moving clamps the ship inside the arena', () => {
  const s = createState(small());
  run(s, 3000, { left: true, right: false, fire: false });
  assert.equal(s.player.x, ARENA.margin + s.tables.player.radius);
  run(s, 5000, { left: false, right: true, fire: false });
  assert.equal(s.player.x, ARENA.w - ARENA.margin - s.tables.player.radius);
});

test('a shot kills an enemy under fire: score and kills go up, the wave clears with its bonus, all waves → won', () => {
  const s = createState(small({ count: 1, waves: 1 }));
  tick(s, STEP_MS, IDLE);
  assert.equal(s.enemies.length, 1);
  s.player.x = s.enemies[0].x;
  run(s, 3000, FIRE);
  assert.equal(s.kills, 1);
  assert.equal(s.score, 10 + 100);
  assert.equal(s.outcome, 'won');
  assert.ok(takeEvents(s).some((e) => e.type === 'kill'));
});

test('an enemy with more hit points takes that many hits', () => {
  const s = createState(small({ hp: 3 }));
  tick(s, STEP_MS, IDLE);
  s.player.x = s.enemies[0].x;
  const e = s.enemies[0];
  for (let i = 0; i < 200 && s.kills === 0; i++) {
    tick(s, STEP_MS, FIRE);
    if (s.kills === 0) assert.ok(e.hp >= 1);
  }
  assert.equal(s.kills, 1);
  assert.ok(s.fired >= 3);
});

test('the next wave comes gap_ms after a clear; the last one cleared wins', () => {
  const s = createState(small({ count: 1, waves: 2 }));
  tick(s, STEP_MS, IDLE);
  s.player.x = s.enemies[0].x;
  for (let i = 0; i < 600 && s.wave === 0; i++) tick(s, STEP_MS, FIRE);
  assert.equal(s.wave, 1);
  assert.equal(s.outcome, 'running');
  assert.ok(s.waveTimer > 0 && s.enemies.length === 0, 'a pause before wave 2');
  run(s, s.tables.waves.gap_ms + 50);
  assert.equal(s.enemies.length, 1);
  s.player.x = s.enemies[0].x;
  for (let i = 0; i < 600 && s.outcome === 'running'; i++) tick(s, STEP_MS, FIRE);
  assert.equal(s.outcome, 'won');
  assert.equal(s.cleared, 2);
});

test('an enemy slipping past the bottom line costs a life; the last life lost → lost', () => {
  const s = createState(small({ count: 2, lives: 2, speed: 200 }));
  s.player.x = ARENA.margin + s.tables.player.radius; // out of the way
  run(s, 200);
  for (const e of s.enemies) { e.bx = ARENA.w - 100; e.x = ARENA.w - 100; }
  run(s, 6000);
  assert.equal(s.breaches, 2);
  assert.equal(s.lives, 0);
  assert.equal(s.outcome, 'lost');
  assert.equal(s.lostReason, 'breached');
});

test('ramming the ship costs a life, then the ship is invulnerable for invulnerable_ms', () => {
  const s = createState(small({ count: 2, lives: 3, speed: 300, waves: 2 }));
  run(s, 450);
  assert.equal(s.enemies.length, 2);
  for (const e of s.enemies) { e.bx = 400; e.x = 400; }
  s.player.x = 400;
  run(s, 3000);
  assert.equal(s.hits, 1, 'the second ram comes during the invulnerability');
  assert.equal(s.lives, 2);
  assert.equal(s.outcome, 'running');
});

test('enemy shots hit the ship, and the player\'s shots knock them out head-on', () => {
  const fires = createState(small({ fire: 300, speed: 20 }));
  run(fires, 2000);
  assert.ok(fires.enemyShots.length >= 1, 'the enemy fires once inside the arena');
  assert.equal(snapshot(fires).enemy_shots[0].type, 'grunt');
  const hit = createState(small({ fire: 300, speed: 20, lives: 3 }));
  tick(hit, STEP_MS, IDLE);
  hit.player.x = hit.enemies[0].x;
  run(hit, 4500);
  assert.ok(hit.hits >= 1);
  assert.equal(hit.lives, 3 - hit.hits);
  assert.equal(hit.lostReason, null);
  const duel = createState(small({ fire: 300, speed: 20, hp: 20 }));
  tick(duel, STEP_MS, IDLE);
  duel.player.x = duel.enemies[0].x;
  let clashes = 0;
  for (let i = 0; i < 400; i++) {
    tick(duel, STEP_MS, FIRE);
    clashes += takeEvents(duel).filter((e) => e.type === 'clash').length;
  }
  assert.ok(clashes >= 1);
});

test('the same tables give the same game (seeded PRNG); another seed, other spawn columns', () => {
  const a = createState(validateTables(raw()));
  const b = createState(validateTables(raw()));
  run(a, 6000, FIRE);
  run(b, 6000, FIRE);
  assert.deepEqual(snapshot(a), snapshot(b));
  const t = raw();
  t.waves.seed = (t.waves.seed + 1) % 4294967296;
  const c = createState(validateTables(t));
  run(c, 6000, FIRE);
  assert.notDeepEqual(snapshot(c).enemies.map((e) => e.x), snapshot(a).enemies.map((e) => e.x));
});

test('tick runs fixed steps whatever the frame deltas', () => {
  const a = createState(small());
  const b = createState(small());
  for (let i = 0; i < 60; i++) tick(a, STEP_MS, FIRE);
  for (let i = 0; i < 20; i++) tick(b, STEP_MS * 3, FIRE);
  assert.equal(a.elapsed_ms, b.elapsed_ms);
  assert.equal(a.fired, b.fired);
});

test('abandon latches once; a finished game ignores input', () => {
  const s = createState(small());
  assert.deepEqual(abandon(s), { ok: true, reason: null });
  assert.equal(s.outcome, 'abandoned');
  assert.equal(abandon(s).ok, false);
  const before = snapshot(s);
  stepOnce(s, STEP_MS, FIRE);
  tick(s, 500, FIRE);
  assert.deepEqual(snapshot(s), before);
});

test('controls and hints come from the one action table', () => {
  const actions = actionsFor();
  for (const k of ['start', 'abandon', 'left', 'right', 'fire']) assert.ok(actions[k].keys.length > 0, k);
  assert.ok(!('wait' in actions));
  assert.deepEqual(actions.start.keys, START_KEYS);
  assert.deepEqual(controlsFor().fire, FIRE_KEYS);
  assert.deepEqual(actions.abandon.keys, ['Escape']);
  const hint = controlsHint(actions);
  for (const k of ['left', 'right', 'fire', 'abandon']) assert.ok(hint.includes(actions[k].label), k);
  assert.ok(hint.includes('Space/Z') && hint.includes('Esc'));
  assert.ok(!hint.includes('start'));
  assert.match(startHint(), /Enter or Space/);
});

test('broken tables throw "tier2 data error: <file> <key>: ..."', () => {
  const cases = [
    [(t) => { delete t.theme.title; }, /theme\.json title/],
    [(t) => { t.theme.palette.shot = 'red'; }, /theme\.json palette\.shot/],
    [(t) => { t.player.lives = 0; }, /player\.json lives: must be between/],
    [(t) => { t.player.speed = 'fast'; }, /player\.json speed: missing or not a number/],
    [(t) => { t.enemies.enemies = []; }, /enemies\.json enemies/],
    [(t) => { t.enemies.enemies[1].id = t.enemies.enemies[0].id; }, /enemies\.json enemies\[1\]\.id: duplicate/],
    [(t) => { t.enemies.enemies[0].shape = 'blob'; }, /enemies\.json enemies\[0\]\.shape/],
    [(t) => { t.enemies.enemies[0].fire_ms = 100; }, /enemies\.json enemies\[0\]\.fire_ms/],
    [(t) => { t.waves.waves[0].spawns[0].enemy = 'nobody'; }, /waves\.json waves\[0\]\.spawns\[0\]\.enemy: unknown enemy "nobody"/],
    [(t) => { t.waves.waves = []; }, /waves\.json waves: must list 1 to 12/],
    [(t) => { t.waves.seed = -1; }, /waves\.json seed/],
  ];
  for (const [breakIt, msg] of cases) {
    const t = raw();
    breakIt(t);
    assert.throws(() => validateTables(t), (err) => err.message.startsWith('tier2 data error: ') && msg.test(err.message), String(msg));
  }
  assert.throws(() => validateTables(null), /tier2 data error/);
});
