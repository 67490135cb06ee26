// Play: the HUD, the maze, the hero, gems, hazards, enemies and the exit. Every rule lives in ../state.js; this
// scene routes input (arrow keys / WASD from MOVES, held keys repeat on rules.json timings) and draws.
import { Container, Graphics } from 'pixi.js';
import { Scene } from '../game.js';
import { piece, TILE } from '../pieces.js';
import {
  createState, move, tick, abandon, currentMaze, timeLeftMs, controlsHint, parseMaze, MOVES, ABANDON_KEYS,
} from '../state.js';
import { fitText, hex, put, text } from '../ui.js';
import { skin } from '../assets.js';

const L = {
  w: 800, hudH: 44, stripe: 4, name: { x: 14, y: 12, w: 250 }, gems: { x: 300, y: 12 }, lives: { x: 410, y: 22 },
  score: { x: 540, y: 12 }, time: { x: 786, y: 12 }, area: { x: 8, y: 50, w: 784, h: 506 }, feedbackY: 566,
  hintY: 588, heartGap: 22, heartScale: 0.6, slideMs: 70, feedbackMs: 1400, warn: 0.2, pulse: 1.15, pulseMs: 500,
  sparks: 10, sparkMs: 450,
};
const DIR_OF = Object.fromEntries(Object.entries(MOVES).flatMap(([dir, m]) => m.keys.map((k) => [k, dir])));

export default class Play extends Scene {
  static KEY = 'Play';

  create() {
    this.tables = this.registry.get('tables');
    this.theme = this.tables.theme;
    this.pal = this.theme.palette;
    this.st = createState(this.tables);
    this.registry.set('state', this.st);
    this.finished = false;
    this.held = null;
    this.buildHud();
    this.mazeLayer = new Container();
    this.addChild(this.mazeLayer);
    this.buildMaze();
    this.feedback = text(this, L.w / 2, L.feedbackY, '', 15, this.pal.text, { bold: true, ax: 0.5, ay: 0.5 });
    fitText(text(this, L.w / 2, L.hintY, controlsHint(), 13, this.pal.text, { ax: 0.5, ay: 0.5 }), L.w - 20);
    this.refreshHud();
  }

  buildHud() {
    this.addChild(new Graphics().rect(0, L.hudH - L.stripe, L.w, L.stripe).fill(hex(this.pal.accent)));
    this.levelText = text(this, L.name.x, L.name.y, '', 17, this.pal.accent, { bold: true });
    const gem = piece('gem', this.pal);
    gem.position.set(L.gems.x, L.lives.y);
    gem.scale.set(L.heartScale);
    this.addChild(gem);
    this.gemsText = text(this, L.gems.x + L.heartGap, L.gems.y, '', 17, this.pal.text, { bold: true });
    this.hearts = [];
    for (let i = 0; i < this.tables.rules.lives; i++) {
      const h = piece('heart', this.pal);
      h.position.set(L.lives.x + i * L.heartGap, L.lives.y);
      h.scale.set(L.heartScale);
      this.addChild(h);
      this.hearts.push(h);
    }
    this.scoreText = text(this, L.score.x, L.score.y, '', 17, this.pal.text, { bold: true });
    this.timeText = text(this, L.time.x, L.time.y, '', 17, this.pal.text, { bold: true, ax: 1 });
  }

  // (Re)draws the current maze: walls as one Graphics, then the exit, hazards, gems, enemies and the hero.
  buildMaze() {
    for (const c of this.mazeLayer.removeChildren()) c.destroy({ children: true });
    this.tweens = this.tweens.filter((tw) => !tw.maze);
    const st = this.st;
    const m = parseMaze(st.rows);
    const a = L.area;
    const c = Math.floor(Math.min(a.w / m.w, a.h / m.h));
    this.cell = c;
    this.ox = a.x + Math.floor((a.w - c * m.w) / 2);
    this.oy = a.y + Math.floor((a.h - c * m.h) / 2);
    const walls = new Graphics();
    st.rows.forEach((row, y) => [...row].forEach((ch, x) => { if (ch === '#') walls.rect(this.ox + x * c, this.oy + y * c, c, c); }));
    walls.fill(hex(this.pal.panel));
    walls.rect(this.ox, this.oy, c * m.w, c * m.h).stroke({ width: 2, color: hex(this.pal.accent), alpha: 0.6 });
    this.mazeLayer.addChild(walls);
    const place = (kind, cell) => {
      const g = piece(kind, this.pal);
      g.position.set(this.px(cell.x), this.py(cell.y));
      g.scale.set(c / TILE);
      this.mazeLayer.addChild(g);
      return g;
    };
    m.hazards.forEach((h, i) => skin(place('hazard', h), 'obstacle', i));
    this.exitOpen = place('exit-open', m.exit);
    this.exitClosed = place('exit-closed', m.exit);
    this.gemImgs = m.gems.map((gm) => {
      const img = skin(place('gem', gm), 'pickup');
      const s = img.scale.x;
      this.tween(img.scale, { x: s * L.pulse, y: s * L.pulse }, L.pulseMs, { yoyo: true, repeat: -1 }).maze = true;
      return { x: gm.x, y: gm.y, img };
    });
    this.enemyImgs = st.enemies.map((e) => place('enemy', e));
    this.heroImg = skin(place('hero', st.player), 'player');
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

  onKeyUp(ev) {
    if (this.held && this.held.code === ev.code) this.held = null;
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
      this.killTweensOf(this.heroImg);
      this.heroImg.position.set(this.px(before.x), this.py(before.y));
      this.tween(this.heroImg, { x: this.px(st.player.x), y: this.py(st.player.y) }, L.slideMs);
    }
    if (ev === 'gem' || ev === 'exit_open') {
      const taken = this.gemImgs.filter((g) => !st.gemsLeft.some((l) => l.x === g.x && l.y === g.y) && g.img.visible);
      for (const g of taken) { g.img.visible = false; this.sparkle(g.img.x, g.img.y, this.pal.accent); }
      this.say(ev === 'exit_open' ? `Every ${this.theme.gem_name.replace(/s$/, '')} found: the exit is open!`
        : `+${this.tables.rules.gem_score}`, this.pal.good);
    }
    this.refreshHud();
  }

  sparkle(x, y, colour) {
    for (let i = 0; i < L.sparks; i++) {
      const dot = new Graphics().circle(0, 0, 4).fill(hex(colour));
      dot.position.set(x, y);
      this.mazeLayer.addChild(dot);
      const ang = (i / L.sparks) * Math.PI * 2;
      this.tween(dot, { x: x + Math.cos(ang) * 40, y: y + Math.sin(ang) * 40, alpha: 0 }, L.sparkMs,
        { onComplete: () => dot.destroy() }).maze = true;
    }
  }

  onHit(cause) {
    const st = this.st;
    this.killTweensOf(this.heroImg);
    this.heroImg.position.set(this.px(st.player.x), this.py(st.player.y));
    this.heroImg.alpha = 0.2;
    this.tween(this.heroImg, { alpha: 1 }, 120, { repeat: 3 });
    this.sparkle(this.heroImg.x, this.heroImg.y, this.pal.bad);
    const what = cause === 'hazard' ? 'Ouch, a trap!' : 'Caught!';
    this.say(st.lives > 0 ? `${what} Back to the start.` : what, this.pal.bad);
    this.refreshHud();
  }

  say(msg, colour) {
    put(this.feedback, msg, colour);
    this.feedback.alpha = 1;
    this.killTweensOf(this.feedback);
    this.tween(this.feedback, { alpha: 0 }, 300, { delay: L.feedbackMs });
  }

  refreshHud() {
    const st = this.st;
    const n = this.tables.mazes.mazes.length;
    const name = `${n > 1 ? `${st.level + 1}/${n} ` : ''}${currentMaze(st).name}`;
    if (this.levelText.text !== name) {
      this.levelText.style.fontSize = 17;
      fitText(put(this.levelText, name), L.name.w);
    }
    put(this.gemsText, `${st.gems}/${st.gems_total}`, st.exit_open ? this.pal.good : this.pal.text);
    this.hearts.forEach((h, i) => { h.visible = i < st.lives; });
    put(this.scoreText, `Score ${st.score}`);
    const left = timeLeftMs(st);
    const secs = Math.ceil(left / 1000);
    put(this.timeText, `Time ${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, '0')}`,
      left < currentMaze(st).time_ms * L.warn ? this.pal.bad : this.pal.text);
    this.exitOpen.visible = !!st.exit_open;
    this.exitClosed.visible = !st.exit_open;
  }

  update(delta) {
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
    st.enemies.forEach((e, i) => { if (this.enemyImgs[i]) this.enemyImgs[i].position.set(this.px(e.x), this.py(e.y)); });
    if (st.lives < lives) this.onHit('enemy');
    this.refreshHud();
    this.checkEnd();
  }

  checkEnd() {
    const out = this.st.outcome;
    if (this.finished || out === 'running') return;
    this.finished = true;
    this.game.start(out === 'abandoned' ? 'Menu' : 'GameOver');
  }
}
