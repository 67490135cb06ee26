// Play: the HUD, the maze, the hero, gems, hazards, enemies and the exit. Every rule lives in ../state.js; this
// scene routes input (arrow keys / WASD from MOVES, held keys repeat on rules.json timings) and draws.
import Phaser from 'phaser';
import { TILE } from './Preload.js';
import {
  createState, move, tick, abandon, currentMaze, timeLeftMs, controlsHint, parseMaze, hexToInt, MOVES, ABANDON_KEYS,
} from '../state.js';
import { fitText, text } from '../ui.js';
import { skin } from '../assets.js';

const LAYOUT = {
  w: 800, hudH: 44, stripe: 4, name: { x: 14, y: 12, w: 250 }, gems: { x: 300, y: 12 }, lives: { x: 410, y: 22 },
  score: { x: 540, y: 12 }, time: { x: 786, y: 12 }, area: { x: 8, y: 50, w: 784, h: 506 }, feedbackY: 566,
  hintY: 588, heartGap: 22, heartScale: 0.6, slideMs: 70, feedbackMs: 1400, warn: 0.2, pulse: 1.15, pulseMs: 500,
};
const L = LAYOUT;
const DIR_OF = Object.fromEntries(Object.entries(MOVES).flatMap(([dir, m]) => m.keys.map((k) => [k, dir])));

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
    this.held = null;
    this.shown = {};
    this.hud = this.add.graphics();
    this.buildHud();
    this.mazeLayer = this.add.container(0, 0);
    this.buildMaze();
    this.feedback = text(this, L.w / 2, L.feedbackY, '', 15, this.pal.text, { bold: true }).setOrigin(0.5);
    fitText(text(this, L.w / 2, L.hintY, controlsHint(), 13, this.pal.text).setOrigin(0.5), L.w - 20);
    this.sparks = this.add.particles(0, 0, 'spark', { speed: { min: 60, max: 160 }, lifespan: 450,
      scale: { start: 1, end: 0 }, emitting: false });
    this.input.keyboard.addCapture('UP,DOWN,LEFT,RIGHT,SPACE');
    this.input.keyboard.on('keydown', (ev) => this.onKey(ev));
    this.input.keyboard.on('keyup', (ev) => { if (this.held && this.held.code === ev.code) this.held = null; });
    this.refreshHud();
  }

  buildHud() {
    this.hud.fillStyle(hexToInt(this.pal.accent), 1).fillRect(0, L.hudH - L.stripe, L.w, L.stripe);
    this.levelText = text(this, L.name.x, L.name.y, '', 17, this.pal.accent, { bold: true });
    this.add.image(L.gems.x, L.lives.y, 'gem').setScale(L.heartScale);
    this.gemsText = text(this, L.gems.x + L.heartGap, L.gems.y, '', 17, this.pal.text, { bold: true });
    this.hearts = [];
    for (let i = 0; i < this.tables.rules.lives; i++) {
      this.hearts.push(this.add.image(L.lives.x + i * L.heartGap, L.lives.y, 'heart').setScale(L.heartScale));
    }
    this.scoreText = text(this, L.score.x, L.score.y, '', 17, this.pal.text, { bold: true });
    this.timeText = text(this, L.time.x, L.time.y, '', 17, this.pal.text, { bold: true }).setOrigin(1, 0);
  }

  // (Re)draws the current maze: walls as one Graphics, then the exit, hazards, gems, enemies and the hero.
  buildMaze() {
    this.mazeLayer.removeAll(true);
    const st = this.st;
    const m = parseMaze(st.rows);
    const a = L.area;
    this.cell = Math.floor(Math.min(a.w / m.w, a.h / m.h));
    this.ox = a.x + Math.floor((a.w - this.cell * m.w) / 2);
    this.oy = a.y + Math.floor((a.h - this.cell * m.h) / 2);
    const g = this.add.graphics();
    const c = this.cell;
    g.fillStyle(hexToInt(this.pal.panel), 1);
    st.rows.forEach((row, y) => [...row].forEach((ch, x) => { if (ch === '#') g.fillRect(this.ox + x * c, this.oy + y * c, c, c); }));
    g.lineStyle(2, hexToInt(this.pal.accent), 0.6).strokeRect(this.ox, this.oy, c * m.w, c * m.h);
    this.mazeLayer.add(g);
    const put = (key, cell) => {
      const img = this.add.image(this.px(cell.x), this.py(cell.y), key).setScale(c / TILE);
      this.mazeLayer.add(img);
      return img;
    };
    m.hazards.forEach((h, i) => skin(put('hazard', h), 'obstacle', i));
    this.exitImg = put('exit-closed', m.exit);
    this.gemImgs = m.gems.map((gm) => {
      const img = skin(put('gem', gm), 'pickup');
      this.tweens.add({ targets: img, scale: (c / TILE) * L.pulse, duration: L.pulseMs, yoyo: true, repeat: -1 });
      return { x: gm.x, y: gm.y, img };
    });
    this.enemyImgs = st.enemies.map((e) => put('enemy', e));
    this.heroImg = skin(put('hero', st.player), 'player');
    this.shownLevel = st.level;
  }

  px(x) { return this.ox + x * this.cell + this.cell / 2; }

  py(y) { return this.oy + y * this.cell + this.cell / 2; }

  onKey(ev) {
    if (ev.repeat || this.finished) return;
    if (ABANDON_KEYS.includes(ev.code)) {
      abandon(this.st);
      this.checkEnd();
      return;
    }
    const dir = DIR_OF[ev.code];
    if (!dir) return;
    this.held = { code: ev.code, dir, ms: 0, next: this.tables.rules.move_repeat_delay_ms };
    this.step(dir);
  }

  step(dir) {
    const before = { ...this.st.player };
    const res = move(this.st, dir);
    if (res.ok) this.afterMove(before);
    this.checkEnd();
  }

  afterMove(before) {
    const st = this.st;
    if (st.level !== this.shownLevel) {
      this.buildMaze();
      this.say(`${currentMaze(st).name}!`, this.pal.good);
    }
    const ev = st.event;
    if (ev === 'hazard' || ev === 'enemy') this.onHit(ev);
    else if (this.heroImg) {
      this.tweens.killTweensOf(this.heroImg);
      this.heroImg.setPosition(this.px(before.x), this.py(before.y));
      this.tweens.add({ targets: this.heroImg, x: this.px(st.player.x), y: this.py(st.player.y), duration: L.slideMs });
    }
    if (ev === 'gem' || ev === 'exit_open') {
      const taken = this.gemImgs.filter((g) => !st.gemsLeft.some((l) => l.x === g.x && l.y === g.y) && g.img.visible);
      for (const g of taken) { g.img.setVisible(false); this.sparks.explode(10, g.img.x, g.img.y); }
      this.say(ev === 'exit_open' ? `Every ${this.theme.gem_name.replace(/s$/, '')} found: the exit is open!`
        : `+${this.tables.rules.gem_score}`, this.pal.good);
    }
    this.refreshHud();
  }

  onHit(cause) {
    const st = this.st;
    this.tweens.killTweensOf(this.heroImg);
    this.heroImg.setPosition(this.px(st.player.x), this.py(st.player.y));
    this.tweens.add({ targets: this.heroImg, alpha: { from: 0.2, to: 1 }, duration: 120, repeat: 3 });
    this.sparks.explode(14, this.heroImg.x, this.heroImg.y);
    const what = cause === 'hazard' ? 'Ouch, a trap!' : 'Caught!';
    this.say(st.lives > 0 ? `${what} Back to the start.` : what, this.pal.bad);
    this.refreshHud();
  }

  say(msg, colour) {
    this.feedback.setText(msg).setColor(colour).setAlpha(1);
    this.tweens.killTweensOf(this.feedback);
    this.tweens.add({ targets: this.feedback, alpha: 0, delay: L.feedbackMs, duration: 300 });
  }

  put(t, s, colour) {
    if (t.text !== s) t.setText(s);
    if (colour && t.style.color !== colour) t.setColor(colour);
  }

  refreshHud() {
    const st = this.st;
    const n = this.tables.mazes.mazes.length;
    const name = `${n > 1 ? `${st.level + 1}/${n} ` : ''}${currentMaze(st).name}`;
    if (this.levelText.text !== name) fitText(this.levelText.setFontSize(17).setText(name), L.name.w);
    this.put(this.gemsText, `${st.gems}/${st.gems_total}`, st.exit_open ? this.pal.good : this.pal.text);
    this.hearts.forEach((h, i) => h.setVisible(i < st.lives));
    this.put(this.scoreText, `Score ${st.score}`);
    const left = timeLeftMs(st);
    const secs = Math.ceil(left / 1000);
    this.put(this.timeText, `Time ${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, '0')}`,
      left < currentMaze(st).time_ms * L.warn ? this.pal.bad : this.pal.text);
    if (this.exitImg && this.exitImg.texture.key !== (st.exit_open ? 'exit-open' : 'exit-closed')) {
      this.exitImg.setTexture(st.exit_open ? 'exit-open' : 'exit-closed');
    }
  }

  update(time, delta) {
    if (this.finished) return;
    const st = this.st;
    if (this.held) {  // a held direction key repeats: first after move_repeat_delay_ms, then every move_repeat_ms
      this.held.ms += delta;
      while (this.held && this.held.ms >= this.held.next && !this.finished) {
        this.held.next += this.tables.rules.move_repeat_ms;
        this.step(this.held.dir);
      }
    }
    if (this.finished) return;
    const lives = st.lives;
    tick(st, delta);
    st.enemies.forEach((e, i) => this.enemyImgs[i]?.setPosition(this.px(e.x), this.py(e.y)));
    if (st.lives < lives) this.onHit('enemy');
    this.refreshHud();
    this.checkEnd();
  }

  checkEnd() {
    const out = this.st.outcome;
    if (this.finished || out === 'running') return;
    this.finished = true;
    this.scene.start(out === 'abandoned' ? 'Menu' : 'GameOver');
  }
}
