// Play: the arena. All rules live in ../state.js; this scene turns held keys (or a held pointer) into the input
// {left, right, fire}, ticks the rules, mirrors the state into display objects and turns rule events into effects.
import { Container, Graphics } from 'pixi.js';
import { Scene } from '../game.js';
import { dot, enemy, ship, shot } from '../pieces.js';
import {
  ARENA, createState, tick, abandon, takeEvents, actionsFor, controlsHint, ABANDON_KEYS, LEFT_KEYS, RIGHT_KEYS,
  FIRE_KEYS,
} from '../state.js';
import { fitText, hex, put, text } from '../ui.js';
import { skin, addBackdrop } from '../assets.js';

const L = {
  scoreX: 16, hudY: ARENA.top / 2, livesRight: 784, lifeGap: 26, lifeSize: 10, hintY: (ARENA.bottom + ARENA.h) / 2,
  banner: { y: 260, w: 520, h: 96 }, stars: 70, starSpeed: [14, 70], pointerDeadZone: 6, tilt: 400, maxTilt: 0.35,
  fs: { hud: 18, hint: 14, banner: 26, sub: 18 }, blinkMs: 90, burst: 14, burstMs: 500, shakeMs: 140, shake: 4,
  flashMs: 350, spark: 3,
};
const anyHeld = (held, keys) => keys.some((k) => held.has(k));
// the backdrop's own PRNG (never the rules' one: drawing stars must not change the game)
const starRng = (seed) => () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const centred = { ax: 0.5, ay: 0.5, align: 'center' };

export default class Play extends Scene {
  static KEY = 'Play';

  create() {
    this.tables = this.registry.get('tables');
    this.pal = this.tables.theme.palette;
    this.st = createState(this.tables);
    this.registry.set('state', this.st);
    this.finished = false;
    this.held = new Set();
    this.pointer = { down: false, x: 0 };
    this.shown = { enemies: new Map(), shots: new Map(), enemyShots: new Map() };
    this.world = new Container();
    this.addChild(this.world);
    addBackdrop(this.world, ARENA.w, ARENA.h);
    this.buildStars();
    this.layers = { shots: new Container(), enemies: new Container(), fx: new Container() };
    this.world.addChild(this.layers.shots, this.layers.enemies);
    this.ship = ship(this.pal, this.tables.player.radius);
    this.ship.position.set(this.st.player.x, this.st.player.y);
    this.world.addChild(this.ship);
    this.ship = skin(this.ship, 'player');
    this.world.addChild(this.layers.fx);
    this.breachFlash = new Graphics().rect(0, ARENA.bottom - 4, ARENA.w, 4).fill(hex(this.pal.bad));
    this.breachFlash.alpha = 0;
    this.world.addChild(this.breachFlash);
    this.buildHud();
    this.buildBanner();
    const stage = this.game.app.stage;
    const down = (ev) => { this.pointer.down = true; this.pointer.x = ev.global.x; };
    const moveTo = (ev) => { this.pointer.x = ev.global.x; };
    const up = () => { this.pointer.down = false; };
    stage.on('pointerdown', down).on('pointermove', moveTo).on('pointerup', up).on('pointerupoutside', up);
    const blur = () => this.releaseAll();
    window.addEventListener('blur', blur);
    this.on('destroyed', () => {
      stage.off('pointerdown', down).off('pointermove', moveTo).off('pointerup', up).off('pointerupoutside', up);
      window.removeEventListener('blur', blur);
    });
    takeEvents(this.st);
    this.refreshHud();
  }

  onKey(ev) {
    if (ABANDON_KEYS.includes(ev.code)) this.doAbandon();
    else this.held.add(ev.code);
  }

  onKeyUp(ev) {
    this.held.delete(ev.code);
  }

  releaseAll() {
    this.held.clear();
    this.pointer.down = false;
  }

  buildStars() {
    const rng = starRng(this.tables.theme.title.length + 7);
    const between = (a, b) => a + Math.floor(rng() * (b - a + 1));
    this.stars = [];
    for (let i = 0; i < L.stars; i++) {
      const speed = between(L.starSpeed[0], L.starSpeed[1]);
      const g = new Graphics().rect(0, 0, 2, 2).fill(hex(this.pal.star));
      g.position.set(between(0, ARENA.w), between(ARENA.top, ARENA.bottom));
      g.alpha = 0.35 + (0.6 * speed) / L.starSpeed[1];
      this.world.addChild(g);
      this.stars.push({ g, speed });
    }
  }

  buildHud() {
    const g = new Graphics();
    g.rect(0, 0, ARENA.w, ARENA.top).rect(0, ARENA.bottom, ARENA.w, ARENA.h - ARENA.bottom).fill(hex(this.pal.panel));
    g.rect(0, ARENA.top - 2, ARENA.w, 2).rect(0, ARENA.bottom, ARENA.w, 2).fill(hex(this.pal.accent));
    this.addChild(g);
    this.scoreText = text(this, L.scoreX, L.hudY, '', L.fs.hud, this.pal.text, { bold: true, ay: 0.5 });
    this.waveText = text(this, ARENA.w / 2, L.hudY, '', L.fs.hud, this.pal.accent, { ...centred, bold: true });
    fitText(text(this, ARENA.w / 2, L.hintY, controlsHint(actionsFor()), L.fs.hint, this.pal.text, centred), ARENA.w - 32);
    this.lives = new Container();
    this.addChild(this.lives);
    this.shownLives = -1;
  }

  buildBanner() {
    const b = L.banner;
    const cx = ARENA.w / 2;
    this.banner = new Container();
    this.banner.addChild(new Graphics().rect(cx - b.w / 2, b.y - b.h / 2, b.w, b.h).fill(hex(this.pal.panel))
      .stroke({ width: 2, color: hex(this.pal.accent) }));
    this.bannerTitle = text(this.banner, cx, b.y - b.h / 4 + 4, '', L.fs.banner, this.pal.accent, { ...centred, bold: true });
    this.bannerSub = text(this.banner, cx, b.y + b.h / 4 - 2, '', L.fs.sub, this.pal.text, centred);
    this.addChild(this.banner);
    this.bannerWave = -1;
  }

  refreshBanner() {
    const st = this.st;
    const show = st.waveTimer > 0 && st.outcome === 'running';
    this.banner.visible = show;
    if (!show || this.bannerWave === st.wave) return;
    this.bannerWave = st.wave;
    const waves = this.tables.waves.waves;
    const w = L.banner.w - 24;
    this.bannerTitle.style.fontSize = L.fs.banner;
    fitText(put(this.bannerTitle, `Wave ${st.wave + 1}/${waves.length}: ${waves[st.wave].name}`), w);
    const prev = waves[st.wave - 1];
    this.bannerSub.style.fontSize = L.fs.sub;
    fitText(put(this.bannerSub, prev ? `Wave cleared! +${prev.bonus} bonus. Get ready!`
      : `Here come the ${this.tables.theme.enemy_noun}. Get ready!`), w);
  }

  refreshHud() {
    const st = this.st;
    put(this.scoreText, `Score ${st.score}   Kills ${st.kills}`);
    put(this.waveText, `Wave ${st.wave + 1}/${this.tables.waves.waves.length}`);
    if (this.shownLives !== st.lives) {
      this.shownLives = st.lives;
      for (const c of this.lives.removeChildren()) c.destroy();
      for (let i = 0; i < st.lives; i++) {
        const icon = ship(this.pal, L.lifeSize);
        icon.position.set(L.livesRight - i * L.lifeGap - L.lifeSize, L.hudY);
        this.lives.addChild(icon);
      }
    }
  }

  heldInput() {
    const ptr = this.pointer.down;
    const px = this.pointer.x;
    const x = this.st.player.x;
    return {
      left: anyHeld(this.held, LEFT_KEYS) || (ptr && px < x - L.pointerDeadZone),
      right: anyHeld(this.held, RIGHT_KEYS) || (ptr && px > x + L.pointerDeadZone),
      fire: anyHeld(this.held, FIRE_KEYS) || ptr,
    };
  }

  // display objects for the rules' list: made when an id appears, moved, destroyed when it goes
  sync(map, list, make, layer, role = null) {
    const seen = new Set();
    for (const o of list) {
      seen.add(o.id);
      let obj = map.get(o.id);
      if (!obj) {
        obj = make(o);
        obj.position.set(o.x, o.y);
        layer.addChild(obj);
        if (role) obj = skin(obj, role, this.enemyIndex(o.type));
        map.set(o.id, obj);
      }
      obj.position.set(o.x, o.y);
    }
    for (const [id, obj] of map) if (!seen.has(id)) { obj.destroy(); map.delete(id); }
  }

  enemyIndex(type) {
    return Math.max(0, this.tables.enemies.enemies.findIndex((e) => e.id === type));
  }

  enemyType(type) {
    return this.tables.enemies.enemies.find((e) => e.id === type);
  }

  update(delta) {
    if (this.finished) return;
    for (const s of this.stars) {
      s.g.y += (s.speed * delta) / 1000;
      if (s.g.y > ARENA.bottom) s.g.y = ARENA.top;
    }
    tick(this.st, delta, this.heldInput());
    const st = this.st;
    this.ship.x = st.player.x;
    this.ship.alpha = st.player.invuln > 0 && Math.floor(st.player.invuln / L.blinkMs) % 2 ? 0.3 : 1;
    this.sync(this.shown.enemies, st.enemies, (e) => enemy(this.enemyType(e.type)), this.layers.enemies, 'enemy');
    for (const e of st.enemies) {
      this.shown.enemies.get(e.id).rotation = Math.max(-L.maxTilt, Math.min(L.maxTilt, -e.vx / L.tilt));
    }
    const r = this.tables.player.shot_radius;
    this.sync(this.shown.shots, st.shots, () => shot(this.pal, r), this.layers.shots);
    this.sync(this.shown.enemyShots, st.enemyShots,
      (q) => dot(this.enemyType(q.type).shot_radius, this.pal.enemy_shot, '#ffffff'), this.layers.shots);
    for (const ev of takeEvents(st)) this.effect(ev);
    this.refreshHud();
    this.refreshBanner();
    this.checkEnd();
  }

  burst(x, y, colour, n) {
    for (let i = 0; i < n; i++) {
      const d = new Graphics().circle(0, 0, L.spark).fill(hex(colour));
      d.position.set(x, y);
      this.layers.fx.addChild(d);
      const a = (i / n) * Math.PI * 2;
      this.tween(d, { x: x + Math.cos(a) * 50, y: y + Math.sin(a) * 50, alpha: 0 }, L.burstMs, { onComplete: () => d.destroy() });
    }
  }

  shake() {
    this.killTweensOf(this.world);
    this.world.x = L.shake;
    this.tween(this.world, { x: 0 }, L.shakeMs);
  }

  effect(ev) {
    if (ev.type === 'kill' || ev.type === 'crash') this.burst(ev.x, ev.y, this.enemyType(ev.enemy).color, L.burst);
    if (ev.type === 'clash') this.burst(ev.x, ev.y, this.pal.shot, L.burst / 2);
    if (ev.type === 'damage') {
      const obj = this.shown.enemies.get(ev.id);
      if (obj) { obj.alpha = 0.3; this.tween(obj, { alpha: 1 }, 160); }
    }
    if (ev.type === 'hurt') {
      this.burst(ev.x, ev.y, this.pal.player, L.burst);
      this.shake();
    }
    if (ev.type === 'breach') {
      this.shake();
      this.killTweensOf(this.breachFlash);
      this.breachFlash.alpha = 1;
      this.tween(this.breachFlash, { alpha: 0 }, L.flashMs);
    }
  }

  doAbandon() {
    abandon(this.st);
    this.checkEnd();
  }

  checkEnd() {
    const out = this.st.outcome;
    if (this.finished || out === 'running') return;
    this.finished = true;
    this.game.start(out === 'abandoned' ? 'Menu' : 'GameOver');
  }
}
