// Pure game rules of the arcade shooter (contract 2). No Phaser import, no DOM: plain data that can be snapshotted,
// unit-tested and reasoned about. Every gameplay number comes from the data tables; the arena geometry below is the
// 800×600 screen layout shared with the Play scene.
export const GENRE = 'shooter'; // the hook's genre and template id (src/hook.js, shared by the pack)
export { validateTables } from './tables.js';

export const ARENA = { w: 800, h: 600, top: 44, bottom: 568, playerY: 528, margin: 8, fireGap: 140 };
export const STEP_MS = 1000 / 60; // fixed rule step: the same play gives the same game whatever the frame deltas
const MAX_CATCH_UP_MS = 250;
const TAU = Math.PI * 2;

// Keys (KeyboardEvent.code names). START_KEYS is the one start constant (Menu and GameOver read it).
export const START_KEYS = ['Enter', 'Space'];
export const ABANDON_KEYS = ['Escape'];
export const LEFT_KEYS = ['ArrowLeft', 'KeyA'];
export const RIGHT_KEYS = ['ArrowRight', 'KeyD'];
export const FIRE_KEYS = ['Space', 'KeyZ'];

// The action vocabulary reported by __TIER2__.actions(); the controls hint is built from it.
export function actionsFor() {
  return {
    start: { keys: [...START_KEYS], label: 'start' },
    left: { keys: [...LEFT_KEYS], label: 'move left' },
    right: { keys: [...RIGHT_KEYS], label: 'move right' },
    fire: { keys: [...FIRE_KEYS], label: 'fire' },
    abandon: { keys: [...ABANDON_KEYS], label: 'back to menu' },
  };
}

export function controlsFor() {
  const out = {};
  for (const [name, a] of Object.entries(actionsFor())) out[name] = [...a.keys];
  return out;
}

const KEY_NAMES = { ArrowLeft: 'Left', ArrowRight: 'Right', ArrowUp: 'Up', ArrowDown: 'Down', Escape: 'Esc' };
export const keyLabel = (code) => KEY_NAMES[code] || code.replace(/^Key/, '').replace(/^Digit/, '');

export function controlsHint(actions) {
  return Object.entries(actions).filter(([name]) => name !== 'start')
    .map(([, a]) => `${a.keys.map(keyLabel).join('/')}: ${a.label}`).join('  ·  ');
}

export const startHint = () => `Press ${START_KEYS.map(keyLabel).join(' or ')} (or click) to start`;

// Seeded PRNG (mulberry32); its state lives in the game state so a snapshot is plain data.
function rand(s) {
  s.rng = (s.rng + 0x6d2b79f5) >>> 0;
  let t = s.rng;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

export const enemyType = (tables, id) => tables.enemies.enemies.find((e) => e.id === id) || null;
const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

// The wave's enemies in spawn order: every spawn entry expanded, then shuffled (seeded).
function expandWave(s, index) {
  const list = [];
  for (const sp of s.tables.waves.waves[index].spawns) for (let i = 0; i < sp.count; i++) list.push(sp.enemy);
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(rand(s) * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

export function createState(tables) {
  const s = {
    tables, rng: tables.waves.seed >>> 0, outcome: 'running', lostReason: null, elapsed_ms: 0, acc: 0,
    score: 0, kills: 0, lives: tables.player.lives, breaches: 0, hits: 0, fired: 0, nextId: 1,
    player: { x: ARENA.w / 2, y: ARENA.playerY, cooldown: 0, invuln: 0 },
    shots: [], enemyShots: [], enemies: [],
    wave: 0, waveTimer: tables.waves.start_delay_ms, spawnTimer: 0, queue: [], cleared: 0,
    events: [{ type: 'wave', index: 0 }],
  };
  s.queue = expandWave(s, 0);
  return s;
}

function spawnEnemy(s, id) {
  const t = enemyType(s.tables, id);
  let lo = ARENA.margin + t.radius + t.sway;
  let hi = ARENA.w - ARENA.margin - t.radius - t.sway;
  if (lo > hi) lo = hi = ARENA.w / 2;
  const x = lo + rand(s) * (hi - lo);
  const phase = rand(s) * TAU;
  s.enemies.push({
    id: s.nextId++, type: id, bx: x, x: x + t.sway * Math.sin(phase), y: ARENA.top - t.radius, r: t.radius, hp: t.hp,
    age: 0, phase, vx: 0, lo, hi, fireT: t.fire_ms * (0.5 + 0.5 * rand(s)),
  });
}

function hurt(s, why) {
  const p = s.player;
  if (p.invuln > 0) return;
  s.lives = Math.max(0, s.lives - 1);
  s.hits += 1;
  p.invuln = s.tables.player.invulnerable_ms;
  s.events.push({ type: 'hurt', x: p.x, y: p.y, why });
  if (s.lives <= 0 && s.outcome === 'running') { s.outcome = 'lost'; s.lostReason = why; }
}

function movePlayer(s, dt, input) {
  const P = s.tables.player;
  const p = s.player;
  const dir = (input && input.right ? 1 : 0) - (input && input.left ? 1 : 0);
  p.x = clamp(p.x + (dir * P.speed * dt) / 1000, ARENA.margin + P.radius, ARENA.w - ARENA.margin - P.radius);
  p.cooldown = Math.max(0, p.cooldown - dt);
  p.invuln = Math.max(0, p.invuln - dt);
  if (input && input.fire && p.cooldown <= 0 && s.shots.length < P.max_shots) {
    const y = p.y - P.radius;
    s.shots.push({ id: s.nextId++, x: p.x, y, py: y });
    p.cooldown = P.fire_cooldown_ms;
    s.fired += 1;
    s.events.push({ type: 'fire', x: p.x, y });
  }
}

function moveShots(s, dt) {
  const P = s.tables.player;
  for (const sh of s.shots) { sh.py = sh.y; sh.y -= (P.shot_speed * dt) / 1000; }
  s.shots = s.shots.filter((sh) => sh.y > ARENA.top - P.shot_radius);
  for (const q of s.enemyShots) { q.py = q.y; q.y += (q.speed * dt) / 1000; }
  s.enemyShots = s.enemyShots.filter((q) => q.y < ARENA.bottom + q.r);
}

function waveStep(s, dt) {
  if (s.waveTimer > 0) {
    s.waveTimer -= dt;
    if (s.waveTimer <= 0) s.spawnTimer = 0;
    return;
  }
  if (!s.queue.length) return;
  s.spawnTimer -= dt;
  if (s.spawnTimer <= 0) {
    spawnEnemy(s, s.queue.shift());
    s.spawnTimer += s.tables.waves.waves[s.wave].spawn_ms;
  }
}

function moveEnemies(s, dt) {
  const p = s.player;
  for (const e of s.enemies) {
    const t = enemyType(s.tables, e.type);
    const prevX = e.x;
    e.age += dt;
    const reach = (t.homing * dt) / 1000;
    e.bx = clamp(e.bx + clamp(p.x - e.bx, -reach, reach), e.lo, e.hi);
    e.x = clamp(e.bx + t.sway * Math.sin((TAU * e.age) / t.sway_ms + e.phase), ARENA.margin + e.r, ARENA.w - ARENA.margin - e.r);
    e.y += (t.speed * dt) / 1000;
    e.vx = ((e.x - prevX) * 1000) / dt;
    if (t.fire_ms > 0) {
      e.fireT -= dt;
      if (e.fireT <= 0 && e.y > ARENA.top + e.r && e.y < p.y - ARENA.fireGap) {
        s.enemyShots.push({
          id: s.nextId++, type: e.type, x: e.x, y: e.y + e.r, py: e.y + e.r, r: t.shot_radius, speed: t.shot_speed,
        });
        e.fireT = t.fire_ms;
        s.events.push({ type: 'enemy_fire', x: e.x, y: e.y + e.r });
      }
    }
  }
}

function collide(s) {
  const P = s.tables.player;
  const p = s.player;
  // player shots meet enemy shots head-on (swept along y: both move fast)
  for (const sh of s.shots) {
    for (const q of s.enemyShots) {
      const rs = P.shot_radius + q.r;
      if (!q.dead && Math.abs(sh.x - q.x) <= rs && sh.y - q.y <= rs && sh.py - q.py >= -rs) {
        sh.dead = q.dead = true;
        s.events.push({ type: 'clash', x: q.x, y: q.y });
        break;
      }
    }
  }
  for (const sh of s.shots) {
    const e = !sh.dead && s.enemies.find((en) => en.hp > 0 && Math.hypot(en.x - sh.x, en.y - sh.y) < en.r + P.shot_radius);
    if (!e) continue;
    sh.dead = true;
    e.hp -= 1;
    if (e.hp > 0) { s.events.push({ type: 'damage', x: e.x, y: e.y, id: e.id }); continue; }
    const t = enemyType(s.tables, e.type);
    s.score += t.score;
    s.kills += 1;
    s.events.push({ type: 'kill', x: e.x, y: e.y, enemy: e.type });
  }
  for (const e of s.enemies) {
    if (e.hp > 0 && Math.hypot(e.x - p.x, e.y - p.y) < e.r + P.radius * 0.8) {
      e.hp = 0;
      s.events.push({ type: 'crash', x: e.x, y: e.y, enemy: e.type });
      hurt(s, 'crashed');
    } else if (e.hp > 0 && e.y - e.r > ARENA.bottom) {
      e.hp = 0;
      s.breaches += 1;
      s.lives = Math.max(0, s.lives - 1);
      s.events.push({ type: 'breach', x: e.x, y: ARENA.bottom });
      if (s.lives <= 0 && s.outcome === 'running') { s.outcome = 'lost'; s.lostReason = 'breached'; }
    }
  }
  for (const q of s.enemyShots) {
    if (!q.dead && p.invuln <= 0 && Math.hypot(q.x - p.x, q.y - p.y) < q.r + P.radius * 0.7) {
      q.dead = true;
      hurt(s, 'shot_down');
    }
  }
  s.shots = s.shots.filter((sh) => !sh.dead);
  s.enemyShots = s.enemyShots.filter((q) => !q.dead);
  s.enemies = s.enemies.filter((e) => e.hp > 0);
}

function checkWave(s) {
  if (s.outcome !== 'running' || s.waveTimer > 0 || s.queue.length || s.enemies.length) return;
  const wave = s.tables.waves.waves[s.wave];
  s.score += wave.bonus;
  s.cleared += 1;
  s.events.push({ type: 'wave_clear', index: s.wave, bonus: wave.bonus });
  if (s.wave + 1 >= s.tables.waves.waves.length) {
    s.outcome = 'won';
    return;
  }
  s.wave += 1;
  s.waveTimer = Math.max(STEP_MS, s.tables.waves.gap_ms);
  s.queue = expandWave(s, s.wave);
  s.events.push({ type: 'wave', index: s.wave });
}

// One fixed rule step of dt ms with the held input {left, right, fire}.
export function stepOnce(s, dt, input) {
  if (s.outcome !== 'running') return;
  s.elapsed_ms += dt;
  movePlayer(s, dt, input);
  moveShots(s, dt);
  waveStep(s, dt);
  moveEnemies(s, dt);
  collide(s);
  checkWave(s);
}

// Advance the rules by a frame's delta (fixed steps of STEP_MS; the remainder carries over).
export function tick(s, deltaMs, input) {
  if (s.outcome !== 'running' || !(deltaMs > 0)) return;
  s.acc = Math.min(s.acc + deltaMs, MAX_CATCH_UP_MS);
  while (s.acc >= STEP_MS - 1e-6 && s.outcome === 'running') {
    s.acc -= STEP_MS;
    stepOnce(s, STEP_MS, input);
  }
}

export function abandon(s) {
  if (s.outcome !== 'running') return { ok: false, reason: 'game over' };
  s.outcome = 'abandoned';
  return { ok: true, reason: null };
}

export function takeEvents(s) {
  const out = s.events;
  s.events = [];
  return out;
}

const r1 = (v) => Math.round(v * 10) / 10;

// JSON-only snapshot for window.__TIER2__.state() (the hook adds `scene`).
export function snapshot(s) {
  return {
    outcome: s.outcome, lost_reason: s.lostReason, elapsed_ms: Math.round(s.elapsed_ms),
    score: s.score, kills: s.kills, lives: s.lives, breaches: s.breaches, hits: s.hits, fired: s.fired,
    player: {
      x: r1(s.player.x), y: r1(s.player.y), invulnerable_ms: Math.round(s.player.invuln),
      cooldown_ms: Math.round(s.player.cooldown),
    },
    enemies: s.enemies.map((e) => ({
      id: e.id, type: e.type, x: r1(e.x), y: r1(e.y), r: e.r, hp: e.hp, vx: r1(e.vx),
      vy: enemyType(s.tables, e.type).speed,
    })),
    projectiles: s.shots.length,
    shots: s.shots.map((sh) => ({ x: r1(sh.x), y: r1(sh.y) })),
    enemy_shots: s.enemyShots.map((q) => ({ type: q.type, x: r1(q.x), y: r1(q.y), r: q.r, vy: q.speed })),
    wave: s.wave + 1, waves: s.tables.waves.waves.length, waves_cleared: s.cleared,
    incoming: s.queue.length, wave_starts_in_ms: Math.max(0, Math.round(s.waveTimer)),
  };
}

export const hexToInt = (hex) => parseInt(String(hex).slice(1), 16);
