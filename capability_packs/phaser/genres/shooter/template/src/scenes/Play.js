// Play: the arena. All rules live in ../state.js; this scene turns held keys (or a held pointer) into the input
// {left, right, fire}, ticks the rules, mirrors the state into sprites and turns rule events into effects.
// Drawing budget: software WebGL pays per drawn pixel, so thin HUD strips, small sprites, no full-screen overlays.
import Phaser from 'phaser';
import {
  ARENA, createState, tick, abandon, takeEvents, actionsFor, controlsHint, ABANDON_KEYS, LEFT_KEYS, RIGHT_KEYS,
  FIRE_KEYS,
} from '../state.js';
import { label } from './ui.js';
import { skin, addBackdrop } from '../assets.js';

const LAYOUT = {
  scoreX: 16, hudY: ARENA.top / 2, livesRight: 784, lifeGap: 26, lifeSize: 20, hintY: (ARENA.bottom + ARENA.h) / 2,
  banner: { y: 260, w: 520, h: 96 }, stars: 70, starSpeed: [14, 70], pointerDeadZone: 6, tilt: 400, maxTilt: 0.35,
  fs: { hud: 18, hint: 14, banner: 26, sub: 18 }, blinkMs: 90, burst: 14, shakeMs: 140, shake: 0.006, flashMs: 350,
};
const DEPTH = { stars: 0, shots: 2, enemies: 3, ship: 4, fx: 5, ui: 10, banner: 11 };
const anyHeld = (held, keys) => keys.some((k) => held.has(k));

export default class Play extends Phaser.Scene {
  constructor() {
    super('Play');
  }

  create() {
    this.tables = this.registry.get('tables');
    this.pal = this.tables.theme.palette;
    this.st = createState(this.tables);
    this.registry.set('state', this.st);
    this.finished = false;
    this.held = new Set();
    this.pointerDown = false;
    this.sprites = { enemies: new Map(), shots: new Map(), enemyShots: new Map() };

    addBackdrop(this, ARENA.w, ARENA.h, DEPTH.stars);
    this.buildStars();
    this.ship = skin(this.add.image(this.st.player.x, this.st.player.y, 'ship').setDepth(DEPTH.ship), 'player');
    this.buildHud();
    this.buildBanner();
    this.emitters = {};
    const sparkKeys = ['player', 'shot', ...this.tables.enemies.enemies.map((e) => e.id)];
    for (const k of sparkKeys) {
      this.emitters[k] = this.add.particles(0, 0, `spark-${k}`, {
        speed: { min: 60, max: 220 }, lifespan: 500, scale: { start: 1.4, end: 0 }, emitting: false,
      }).setDepth(DEPTH.fx);
    }
    this.breachFlash = this.add.image(0, ARENA.bottom - 4, 'px-bad').setOrigin(0).setDisplaySize(ARENA.w, 4)
      .setDepth(DEPTH.fx).setAlpha(0);

    this.input.keyboard.addCapture('SPACE,LEFT,RIGHT,UP,DOWN');
    this.input.keyboard.on('keydown', (ev) => {
      if (ABANDON_KEYS.includes(ev.code)) this.doAbandon();
      else this.held.add(ev.code);
    });
    this.input.keyboard.on('keyup', (ev) => this.held.delete(ev.code));
    this.input.on('pointerdown', () => { this.pointerDown = true; });
    this.input.on('pointerup', () => { this.pointerDown = false; });
    this.input.on('pointerupoutside', () => { this.pointerDown = false; });
    this.game.events.on(Phaser.Core.Events.BLUR, this.releaseAll, this);
    this.events.once('shutdown', () => this.game.events.off(Phaser.Core.Events.BLUR, this.releaseAll, this));
    takeEvents(this.st);
    this.refreshHud();
  }

  releaseAll() {
    this.held.clear();
    this.pointerDown = false;
  }

  buildStars() {
    const rnd = Phaser.Math.RND;
    this.stars = [];
    for (let i = 0; i < LAYOUT.stars; i++) {
      const speed = rnd.between(LAYOUT.starSpeed[0], LAYOUT.starSpeed[1]);
      const img = this.add.image(rnd.between(0, ARENA.w), rnd.between(ARENA.top, ARENA.bottom), 'star')
        .setDepth(DEPTH.stars).setAlpha(0.35 + (0.6 * speed) / LAYOUT.starSpeed[1]);
      this.stars.push({ img, speed });
    }
  }

  buildHud() {
    const g = this.add.graphics().setDepth(DEPTH.ui);
    g.fillStyle(Phaser.Display.Color.HexStringToColor(this.pal.panel).color, 1);
    g.fillRect(0, 0, ARENA.w, ARENA.top).fillRect(0, ARENA.bottom, ARENA.w, ARENA.h - ARENA.bottom);
    g.fillStyle(Phaser.Display.Color.HexStringToColor(this.pal.accent).color, 1);
    g.fillRect(0, ARENA.top - 2, ARENA.w, 2).fillRect(0, ARENA.bottom, ARENA.w, 2);
    this.scoreText = label(this, LAYOUT.scoreX, LAYOUT.hudY, '', LAYOUT.fs.hud, this.pal.text, { bold: true, originX: 0 })
      .setDepth(DEPTH.ui);
    this.waveText = label(this, ARENA.w / 2, LAYOUT.hudY, '', LAYOUT.fs.hud, this.pal.accent, { bold: true })
      .setDepth(DEPTH.ui);
    label(this, ARENA.w / 2, LAYOUT.hintY, controlsHint(actionsFor()), LAYOUT.fs.hint, this.pal.text, { maxWidth: ARENA.w - 32 })
      .setDepth(DEPTH.ui);
    this.lifeIcons = [];
    this.shownLives = -1;
  }

  buildBanner() {
    const b = LAYOUT.banner;
    const cx = ARENA.w / 2;
    const g = this.add.graphics().setDepth(DEPTH.banner);
    g.fillStyle(Phaser.Display.Color.HexStringToColor(this.pal.panel).color, 1).fillRect(cx - b.w / 2, b.y - b.h / 2, b.w, b.h);
    g.lineStyle(2, Phaser.Display.Color.HexStringToColor(this.pal.accent).color, 1)
      .strokeRect(cx - b.w / 2, b.y - b.h / 2, b.w, b.h);
    this.bannerTitle = label(this, cx, b.y - b.h / 4 + 4, '', LAYOUT.fs.banner, this.pal.accent, { bold: true })
      .setDepth(DEPTH.banner);
    this.bannerSub = label(this, cx, b.y + b.h / 4 - 2, '', LAYOUT.fs.sub, this.pal.text).setDepth(DEPTH.banner);
    this.banner = [g, this.bannerTitle, this.bannerSub];
    this.bannerWave = -1;
  }

  refreshBanner() {
    const st = this.st;
    const show = st.waveTimer > 0 && st.outcome === 'running';
    this.banner.forEach((o) => o.setVisible(show));
    if (!show || this.bannerWave === st.wave) return;
    this.bannerWave = st.wave;
    const waves = this.tables.waves.waves;
    const w = LAYOUT.banner.w - 24;
    this.bannerTitle.setFontSize(`${LAYOUT.fs.banner}px`).setText(`Wave ${st.wave + 1}/${waves.length}: ${waves[st.wave].name}`);
    const prev = waves[st.wave - 1];
    this.bannerSub.setFontSize(`${LAYOUT.fs.sub}px`)
      .setText(prev ? `Wave cleared! +${prev.bonus} bonus. Get ready!` : `Here come the ${this.tables.theme.enemy_noun}. Get ready!`);
    for (const [t, s] of [[this.bannerTitle, LAYOUT.fs.banner], [this.bannerSub, LAYOUT.fs.sub]]) {
      for (let size = s; t.width > w && size > 12; size--) t.setFontSize(`${size - 1}px`);
    }
  }

  refreshHud() {
    const st = this.st;
    this.scoreText.setText(`Score ${st.score}   Kills ${st.kills}`);
    this.waveText.setText(`Wave ${st.wave + 1}/${this.tables.waves.waves.length}`);
    if (this.shownLives !== st.lives) {
      this.shownLives = st.lives;
      this.lifeIcons.forEach((i) => i.destroy());
      this.lifeIcons = [];
      for (let i = 0; i < st.lives; i++) {
        this.lifeIcons.push(this.add.image(LAYOUT.livesRight - i * LAYOUT.lifeGap - LAYOUT.lifeSize / 2, LAYOUT.hudY, 'ship')
          .setDisplaySize(LAYOUT.lifeSize, LAYOUT.lifeSize).setDepth(DEPTH.ui));
      }
    }
  }

  heldInput() {
    const px = this.input.activePointer.x;
    const ptr = this.pointerDown;
    const x = this.st.player.x;
    return {
      left: anyHeld(this.held, LEFT_KEYS) || (ptr && px < x - LAYOUT.pointerDeadZone),
      right: anyHeld(this.held, RIGHT_KEYS) || (ptr && px > x + LAYOUT.pointerDeadZone),
      fire: anyHeld(this.held, FIRE_KEYS) || ptr,
    };
  }

  sync(map, list, texture, depth, role = null) {
    const seen = new Set();
    for (const o of list) {
      seen.add(o.id);
      let img = map.get(o.id);
      if (!img) {
        img = this.add.image(o.x, o.y, typeof texture === 'function' ? texture(o) : texture).setDepth(depth);
        if (role) skin(img, role, this.enemyIndex(o.type));
        map.set(o.id, img);
      }
      img.setPosition(o.x, o.y);
    }
    for (const [id, img] of map) if (!seen.has(id)) { img.destroy(); map.delete(id); }
  }

  enemyIndex(type) {
    return Math.max(0, this.tables.enemies.enemies.findIndex((e) => e.id === type));
  }

  update(time, delta) {
    if (this.finished) return;
    for (const s of this.stars) {
      s.img.y += (s.speed * delta) / 1000;
      if (s.img.y > ARENA.bottom) s.img.y = ARENA.top;
    }
    tick(this.st, delta, this.heldInput());
    const st = this.st;
    this.ship.setX(st.player.x).setAlpha(st.player.invuln > 0 && Math.floor(st.player.invuln / LAYOUT.blinkMs) % 2 ? 0.3 : 1);
    this.sync(this.sprites.enemies, st.enemies, (e) => `enemy-${e.type}`, DEPTH.enemies, 'enemy');
    for (const e of st.enemies) {
      this.sprites.enemies.get(e.id).setRotation(Phaser.Math.Clamp(-e.vx / LAYOUT.tilt, -LAYOUT.maxTilt, LAYOUT.maxTilt));
    }
    this.sync(this.sprites.shots, st.shots, 'shot', DEPTH.shots);
    this.sync(this.sprites.enemyShots, st.enemyShots, (q) => `eshot-${q.type}`, DEPTH.shots);
    for (const ev of takeEvents(st)) this.effect(ev);
    this.refreshHud();
    this.refreshBanner();
    this.checkEnd();
  }

  effect(ev) {
    if (ev.type === 'kill' || ev.type === 'crash') this.emitters[ev.enemy].explode(LAYOUT.burst, ev.x, ev.y);
    if (ev.type === 'clash') this.emitters.shot.explode(LAYOUT.burst / 2, ev.x, ev.y);
    if (ev.type === 'damage') {
      const img = this.sprites.enemies.get(ev.id);
      if (img) this.tweens.add({ targets: img, alpha: { from: 0.3, to: 1 }, duration: 160 });
    }
    if (ev.type === 'hurt') {
      this.emitters.player.explode(LAYOUT.burst, ev.x, ev.y);
      this.cameras.main.shake(LAYOUT.shakeMs, LAYOUT.shake);
    }
    if (ev.type === 'breach') {
      this.cameras.main.shake(LAYOUT.shakeMs, LAYOUT.shake);
      this.tweens.killTweensOf(this.breachFlash);
      this.tweens.add({ targets: this.breachFlash, alpha: { from: 1, to: 0 }, duration: LAYOUT.flashMs });
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
    this.scene.start(out === 'abandoned' ? 'Menu' : 'GameOver');
  }
}
