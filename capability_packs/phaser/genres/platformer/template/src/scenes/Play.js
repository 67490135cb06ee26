// Play: the level (platforms, hazards, coins, exit flag), the player, a HUD and the controls hint. All rules live
// in ../state.js (tick, abandon); this scene routes held keys into it and draws what the state says.
// Drawing budget: software WebGL pays per drawn pixel, so the world is tile sprites over the cleared background,
// drawn once per level; only the player, the coins' tweens and changed HUD texts move per frame.
import Phaser from 'phaser';
import { createState, tick, abandon, levelOf, coinsTotal, ACTIONS, ABANDON_KEYS } from '../state.js';
import { FONT, controlsHint, hexToInt, fitText, seconds } from '../ui.js';
import { skin } from '../assets.js';

const LAYOUT = {
  // the HUD bar holds the numbers and, under them, the controls hint: nothing of the world is drawn under a text
  w: 800, h: 600, hudH: 56, hudY: 16, hintY: 41, grassH: 8, spike: 16,
  fs: { hud: 16, hint: 13, banner: 26 },
  hud: { level: { x: 12, w: 250 }, coins: { x: 280, w: 170 }, lives: { x: 462, w: 84 }, score: { x: 556, w: 130 },
    time: { x: 788, w: 90 } },
  banner: { y: 190, w: 520, h: 60, holdMs: 1600 },
  hill: { every: 300, scroll: 0.35, depth: -5 }, cloud: { every: 380, scroll: 0.15, y: 92, dy: 110, depth: -6 },
  camLerp: 0.15, depth: { coin: 2, exit: 1, player: 5, hud: 20 },
  coinSpinMs: 520, coinSpin: 0.25, sparks: 6, sparkMs: 380, sparkFly: 30, blinkMs: 110, squashMs: 80, squash: 0.82,
  warnMs: 10000,
};
const HELD = ['left', 'right', 'jump'];

export default class Play extends Phaser.Scene {
  constructor() {
    super('Play');
  }

  create() {
    this.tables = this.registry.get('tables');
    this.theme = this.tables.theme;
    this.pal = this.theme.palette;
    this.st = createState(this.tables);
    this.registry.set('state', this.st);
    this.finished = false;
    this.held = new Set();
    this.shown = {};
    this.input.keyboard.addCapture('SPACE,UP,DOWN,LEFT,RIGHT');
    this.input.keyboard.on('keydown', (ev) => {
      if (ABANDON_KEYS.includes(ev.code)) {
        if (abandon(this.st)) this.finish();
      } else {
        this.held.add(ev.code);
      }
    });
    this.input.keyboard.on('keyup', (ev) => this.held.delete(ev.code));
    this.game.events.on('blur', this.clearHeld, this);
    this.events.once('shutdown', () => this.game.events.off('blur', this.clearHeld, this));
    this.levelObjects = [];
    this.player = null;
    this.buildHud();
    this.buildLevel();
    this.refreshHud();
    this.showBanner(`Level 1: ${levelOf(this.st, this.tables).name}`);
  }

  clearHeld() {
    this.held.clear();
  }

  isHeld(action) {
    return ACTIONS[action].keys.some((k) => this.held.has(k));
  }

  txt(x, y, s, size, color, bold) {
    return this.add.text(x, y, s, { fontFamily: FONT, fontSize: `${size}px`, color, fontStyle: bold ? 'bold' : '' });
  }

  buildHud() {
    const L = LAYOUT;
    const fix = (o) => o.setScrollFactor(0).setDepth(L.depth.hud);
    fix(this.add.rectangle(0, 0, L.w, L.hudH, hexToInt(this.pal.panel), 1).setOrigin(0));
    this.hud = {};
    for (const [k, spot] of Object.entries(L.hud)) {
      const t = fix(this.txt(spot.x, L.hudY, '', L.fs.hud, this.pal.text, true));
      this.hud[k] = t.setOrigin(k === 'time' ? 1 : 0, 0.5);
    }
    fitText(fix(this.txt(L.w / 2, L.hintY, controlsHint(), L.fs.hint, this.pal.text).setOrigin(0.5)), L.w - 20);
    this.banner = fix(this.add.rectangle(L.w / 2, L.banner.y, L.banner.w, L.banner.h, hexToInt(this.pal.panel), 1)
      .setStrokeStyle(3, hexToInt(this.pal.accent))).setVisible(false);
    this.bannerText = fix(this.txt(L.w / 2, L.banner.y, '', L.fs.banner, this.pal.accent, true).setOrigin(0.5))
      .setVisible(false);
    this.bannerTimer = null;
  }

  buildLevel() {
    const L = LAYOUT;
    const lv = levelOf(this.st, this.tables);
    for (const o of this.levelObjects) o.destroy();
    const keep = (o) => {
      this.levelObjects.push(o);
      return o;
    };
    const cloudsW = lv.width * L.cloud.scroll + L.w;
    for (let i = 0, x = 0; x < cloudsW; i++, x += L.cloud.every) {
      const y = L.cloud.y + ((i * 53) % L.cloud.dy); // a fixed, irregular-looking pattern (no randomness)
      keep(this.add.image(x + ((i * 137) % 120), y, 'cloud').setScrollFactor(L.cloud.scroll, 1).setDepth(L.cloud.depth));
    }
    const hillsW = lv.width * L.hill.scroll + L.w;
    for (let x = 0; x < hillsW; x += L.hill.every) {
      keep(this.add.image(x, lv.height, 'hill').setOrigin(0.5, 1).setScrollFactor(L.hill.scroll, 1).setDepth(L.hill.depth));
    }
    for (const p of lv.platforms) {
      keep(this.add.tileSprite(p.x, p.y, p.w, p.h, 'dirt').setOrigin(0));
      keep(this.add.tileSprite(p.x, p.y, p.w, Math.min(L.grassH, p.h), 'grass').setOrigin(0));
    }
    for (const z of lv.hazards) {
      keep(this.add.tileSprite(z.x, z.y, z.w, z.h, 'spike').setOrigin(0).setTileScale(1, z.h / L.spike));
    }
    keep(this.add.image(lv.exit.x, lv.exit.y, 'flag').setOrigin(0).setDisplaySize(lv.exit.w, lv.exit.h)
      .setDepth(L.depth.exit));
    this.coinImgs = lv.coins.map((c, i) => {
      const img = keep(skin(this.add.image(c.x, c.y, 'coin').setDepth(L.depth.coin).setVisible(!this.st.taken[i]),
        'pickup'));
      this.tweens.add({ targets: img, scaleX: L.coinSpin, duration: L.coinSpinMs, yoyo: true, repeat: -1,
        ease: 'Sine.easeInOut', delay: (i * 97) % L.coinSpinMs });
      return img;
    });
    if (!this.player) this.player = skin(this.add.image(0, 0, 'hero').setOrigin(0.5, 1).setDepth(L.depth.player), 'player');
    this.syncPlayer();
    const cam = this.cameras.main;
    cam.setBounds(0, 0, lv.width, lv.height);
    cam.startFollow(this.player, true, L.camLerp, L.camLerp);
    cam.centerOn(this.player.x, this.player.y);
  }

  showBanner(text) {
    const L = LAYOUT;
    this.bannerText.setText(text);
    fitText(this.bannerText.setFontSize(L.fs.banner), L.banner.w - 24);
    // shown whole, then hidden whole: a half-faded text would be hard to read
    for (const o of [this.banner, this.bannerText]) o.setVisible(true);
    if (this.bannerTimer) this.bannerTimer.remove();
    this.bannerTimer = this.time.delayedCall(L.banner.holdMs, () => {
      for (const o of [this.banner, this.bannerText]) o.setVisible(false);
    });
  }

  syncPlayer() {
    const b = this.st.body;
    const { w, h } = this.tables.physics.player;
    this.player.setPosition(b.x + w / 2, b.y + h).setFlipX(this.st.facing < 0);
  }

  onEvent(ev) {
    const L = LAYOUT;
    if (ev.type === 'coin') {
      const img = this.coinImgs[ev.index];
      img.setVisible(false);
      for (let i = 0; i < L.sparks; i++) {
        const a = (i / L.sparks) * Math.PI * 2;
        const s = this.add.image(img.x, img.y, 'spark');
        this.tweens.add({ targets: s, x: img.x + Math.cos(a) * L.sparkFly, y: img.y + Math.sin(a) * L.sparkFly,
          alpha: 0, duration: L.sparkMs, onComplete: () => s.destroy() });
      }
    } else if (ev.type === 'jump' || ev.type === 'land') {
      this.tweens.killTweensOf(this.player);
      this.player.setScale(1);
      const squash = ev.type === 'land' ? { scaleY: L.squash } : { scaleX: L.squash };
      this.tweens.add({ targets: this.player, ...squash, duration: L.squashMs, yoyo: true });
    } else if (ev.type === 'death') {
      this.cameras.main.shake(L.squashMs * 3, 0.006);
      this.tweens.killTweensOf(this.player);
      this.player.setScale(1);
      this.tweens.add({ targets: this.player, alpha: 0.2, duration: L.blinkMs, yoyo: true, repeat: 3 });
    } else if (ev.type === 'respawn') {
      this.player.setAlpha(1);
    } else if (ev.type === 'level') {
      this.buildLevel();
      this.showBanner(`Level ${ev.index + 1}: ${levelOf(this.st, this.tables).name}`);
    }
  }

  setHud(key, text, maxW, color = this.pal.text) {
    if (this.shown[key] === text + color) return;
    this.shown[key] = text + color;
    const t = this.hud[key].setFontSize(LAYOUT.fs.hud).setText(text).setColor(color);
    fitText(t, maxW);
  }

  refreshHud() {
    const st = this.st;
    const L = LAYOUT.hud;
    const n = this.tables.levels.levels.length;
    this.setHud('level', `${st.level_index + 1}/${n} ${levelOf(st, this.tables).name}`, L.level.w, this.pal.accent);
    const coinName = this.theme.coin_name.charAt(0).toUpperCase() + this.theme.coin_name.slice(1);
    this.setHud('coins', `${coinName} ${st.coins}/${coinsTotal(this.tables)}`, L.coins.w);
    this.setHud('lives', `Lives ${st.lives}`, L.lives.w);
    this.setHud('score', `Score ${st.score}`, L.score.w);
    this.setHud('time', `Time ${seconds(st.time_left_ms)}`, L.time.w,
      st.time_left_ms < LAYOUT.warnMs ? this.pal.bad : this.pal.text);
  }

  update(time, delta) {
    if (this.finished) return;
    const input = Object.fromEntries(HELD.map((a) => [a, this.isHeld(a)]));
    for (const ev of tick(this.st, this.tables, delta, input)) this.onEvent(ev);
    this.syncPlayer();
    this.refreshHud();
    if (this.st.outcome !== 'running') this.finish();
  }

  finish() {
    if (this.finished) return;
    this.finished = true;
    this.scene.start(this.st.outcome === 'abandoned' ? 'Menu' : 'GameOver');
  }
}
