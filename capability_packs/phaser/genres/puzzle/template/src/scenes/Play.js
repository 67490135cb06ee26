// Play: the board, the cursor (a tile and its swap partner), the score panel and the controls.
// All rules live in ../state.js; this scene routes input and draws. Animations are cosmetic: the state is
// already final when one starts, and the next input snaps every tile to the state at once.
import Phaser from 'phaser';
import {
  ACTIONS, createState, swap, moveCursor, setCursor, rotate, faceTowards, partner, tick, abandon, fillText,
  hexToInt, controlRows, START_KEYS,
} from '../state.js';
import { fitWidth } from './fit.js';
import { skin } from '../assets.js';

const LAYOUT = {
  font: 'Trebuchet MS, Verdana, sans-serif',
  titleX: 20, titleY: 14, titleW: 440, goalX: 784, goalY: 22, band: 58,
  area: { x: 20, y: 66, w: 460, h: 504 }, maxCell: 64, boardPx: 440, inset: 6,
  panel: { x: 500, y: 66, w: 284, h: 504 }, pad: 14,
  scoreY: 12, valueY: 32, barY: 68, barH: 12, statsY: 90, feedbackY: 116, tilesY: 178, legendY: 202,
  legendRow: 24, legendMax: 192, legendIcon: 20, controlsY: 400, controlsRow: 21, keysW: 112,
  swapMs: 110, dropMs: 220, endMs: 300, feedbackMs: 2200,
};

const BOARD_KEYS = new Set(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Space']);

export default class Play extends Phaser.Scene {
  constructor() {
    super('Play');
  }

  create() {
    this.tables = this.registry.get('tables');
    const { theme, board, goals } = this.tables;
    this.pal = theme.palette;
    this.col = Object.fromEntries(Object.entries(this.pal).map(([k, v]) => [k, hexToInt(v)]));
    this.st = createState(this.tables);
    this.registry.set('state', this.st);
    this.finished = false;
    this.leaving = false;
    const L = LAYOUT;
    this.cell = Math.floor(Math.min(L.maxCell, L.boardPx / board.size));
    this.ox = L.area.x + Math.floor((L.area.w - this.cell * board.size) / 2);
    this.oy = L.area.y + Math.floor((L.area.h - this.cell * board.size) / 2);

    const g = this.add.graphics();
    g.fillStyle(this.col.accent, 1).fillRect(0, L.band - 4, 800, 4);
    fitWidth(this.txt(L.titleX, L.titleY, theme.title, 24, this.pal.accent, true), L.titleW);
    this.txt(L.goalX, L.goalY, `Goal: ${goals.target_score} points in ${goals.moves} moves`, 16, this.pal.text)
      .setOrigin(1, 0);
    g.lineStyle(2, this.col.panel, 1).strokeRect(this.ox - 4, this.oy - 4, this.cell * board.size + 8, this.cell * board.size + 8);
    g.fillStyle(this.col.panel, 0.55);
    for (let y = 0; y < board.size; y++) {
      for (let x = 0; x < board.size; x++) g.fillRect(this.ox + x * this.cell + 1, this.oy + y * this.cell + 1, this.cell - 2, this.cell - 2);
    }
    this.tiles = this.st.grid.map((row, y) => row.map((k, x) => skin(this.add.image(this.cx(x), this.cy(y), `tile-${k}`)
      .setDisplaySize(this.cell - L.inset, this.cell - L.inset), 'pickup', k, true)));
    this.cursorG = this.add.graphics();
    this.tweens.add({ targets: this.cursorG, alpha: 0.55, duration: 500, yoyo: true, repeat: -1 });
    this.sparks = this.add.particles(0, 0, 'spark', {
      speed: { min: 50, max: 160 }, lifespan: 450, scale: { start: 1, end: 0 }, emitting: false,
    });
    this.buildPanel(g);

    this.keyAction = {};
    for (const [a, v] of Object.entries(ACTIONS)) if (a !== 'start') for (const k of v.keys) this.keyAction[k] = a;
    this.input.keyboard.addCapture([...BOARD_KEYS].map((k) => k.replace(/^Arrow/, '').toUpperCase()).join(','));
    this.input.keyboard.on('keydown', (ev) => this.onKey(ev));
    const zone = this.add.zone(this.ox, this.oy, this.cell * board.size, this.cell * board.size).setOrigin(0);
    zone.setInteractive({ useHandCursor: true });
    zone.on('pointerdown', (p) => this.onClick(Math.floor((p.x - this.ox) / this.cell), Math.floor((p.y - this.oy) / this.cell)));
    this.refresh();
  }

  cx(x) { return this.ox + x * this.cell + this.cell / 2; }

  cy(y) { return this.oy + y * this.cell + this.cell / 2; }

  txt(x, y, s, size, color, bold, extra = {}) {
    return this.add.text(x, y, s, { fontFamily: LAYOUT.font, fontSize: `${size}px`, color, fontStyle: bold ? 'bold' : '', ...extra });
  }

  buildPanel(g) {
    const L = LAYOUT;
    const P = L.panel;
    const x = P.x + L.pad;
    const right = P.x + P.w - L.pad;
    g.lineStyle(2, this.col.panel, 1).strokeRect(P.x, P.y, P.w, P.h);
    this.txt(x, P.y + L.scoreY, 'Score', 15, this.pal.text);
    this.txt(right, P.y + L.scoreY, 'Moves left', 15, this.pal.text).setOrigin(1, 0);
    this.scoreText = this.txt(x, P.y + L.valueY, '', 24, this.pal.accent, true);
    this.movesText = this.txt(right, P.y + L.valueY, '', 24, this.pal.accent, true).setOrigin(1, 0);
    const barW = P.w - 2 * L.pad;
    g.fillStyle(this.col.panel, 1).fillRect(x, P.y + L.barY, barW, L.barH);
    this.bar = this.add.image(x, P.y + L.barY, 'px-good').setOrigin(0).setDisplaySize(1, L.barH);
    this.barW = barW;
    this.statsText = this.txt(x, P.y + L.statsY, '', 14, this.pal.text);
    this.feedback = this.txt(x, P.y + L.feedbackY, '', 14, this.pal.text, true, { wordWrap: { width: barW } });
    this.txt(x, P.y + L.tilesY, 'Tiles', 15, this.pal.accent, true);
    const kinds = this.tables.board.kinds;
    const row = Math.min(L.legendRow, L.legendMax / kinds.length);
    kinds.forEach((k, i) => {
      const y = P.y + L.legendY + i * row + row / 2;
      this.add.image(x + L.legendIcon / 2, y, `tile-${i}`).setDisplaySize(L.legendIcon, L.legendIcon);
      fitWidth(this.txt(x + L.legendIcon + 10, y, k.name, 14, this.pal.text).setOrigin(0, 0.5), barW - L.legendIcon - 10);
    });
    this.txt(x, P.y + L.controlsY, 'Controls', 15, this.pal.accent, true);
    controlRows().forEach(([keys, what], i) => {
      const y = P.y + L.controlsY + 24 + i * L.controlsRow;
      this.txt(x, y, keys, 13, this.pal.accent, true);
      this.txt(x + L.keysW, y, what, 13, this.pal.text);
    });
  }

  onKey(ev) {
    if (ev.repeat) return;
    if (this.finished) {
      if (START_KEYS.includes(ev.code)) this.toGameOver(); // skip the last look at the board
      return;
    }
    const action = this.keyAction[ev.code];
    if (action) this.act(action);
  }

  act(action) {
    if (action === 'abandon') {
      abandon(this.st);
      this.checkEnd();
      return;
    }
    this.snap();
    if (action === 'swap') this.doSwap();
    else if (action === 'rotate') rotate(this.st);
    else moveCursor(this.st, action);
    this.refresh();
  }

  onClick(x, y) {
    if (this.finished) return;
    this.snap();
    const c = this.st.cursor;
    if (x === c.x && y === c.y) rotate(this.st);
    else if (Math.abs(x - c.x) + Math.abs(y - c.y) === 1 && faceTowards(this.st, x, y)) this.doSwap();
    else setCursor(this.st, x, y);
    this.refresh();
  }

  // Stop every tile animation and show the state as it is.
  snap() {
    const flat = this.tiles.flat();
    this.tweens.killTweensOf(flat);
    this.st.grid.forEach((row, y) => row.forEach((k, x) => skin(this.tiles[y][x].setTexture(`tile-${k}`), 'pickup', k, true)
      .setPosition(this.cx(x), this.cy(y)).setAlpha(1)));
  }

  doSwap() {
    const res = swap(this.st);
    if (!res.ok) return;
    const { a, b } = res;
    const ta = this.tiles[a.y][a.x];
    const tb = this.tiles[b.y][b.x];
    if (!res.matched) {
      this.tweens.add({ targets: ta, x: this.cx(b.x), y: this.cy(b.y), duration: LAYOUT.swapMs, yoyo: true });
      this.tweens.add({ targets: tb, x: this.cx(a.x), y: this.cy(a.y), duration: LAYOUT.swapMs, yoyo: true });
      this.say(this.tables.theme.texts.no_match, this.pal.bad);
    } else {
      for (const [x, y] of res.steps[0].cleared) this.sparks.explode(6, this.cx(x), this.cy(y));
      this.dropIn(res);
      const points = res.steps.reduce((s, st) => s + st.points, 0);
      const msg = res.steps.length > 1
        ? fillText(this.tables.theme.texts.cascade, { chain: res.steps.length, points })
        : `Line! +${points}`;
      this.say(res.shuffled ? `${msg} · no swaps left: new board` : msg, this.pal.good);
    }
    this.checkEnd();
  }

  // Tiles of the columns that lost tiles fall in from above (from the top row at most: nothing leaves the board).
  dropIn(res) {
    const size = this.st.grid.length;
    for (let x = 0; x < size; x++) {
      const fallen = res.steps.reduce((s, st) => s + st.fallen[x], 0);
      if (!fallen) continue;
      const lowest = Math.max(...res.steps.flatMap((st) => st.cleared.filter(([cx]) => cx === x).map(([, cy]) => cy)), 0);
      for (let y = 0; y <= Math.min(lowest, size - 1); y++) {
        const t = this.tiles[y][x];
        const from = Math.max(this.cy(0), this.cy(y) - fallen * this.cell); // never above the board
        this.tweens.add({ targets: t, y: { from, to: this.cy(y) },
          alpha: { from: 0.2, to: 1 }, duration: LAYOUT.dropMs, ease: 'Quad.easeIn' });
      }
    }
  }

  say(msg, color) {
    this.feedback.setText(msg).setColor(color).setVisible(true);
    if (this.feedbackTimer) this.feedbackTimer.remove();
    this.feedbackTimer = this.time.delayedCall(LAYOUT.feedbackMs, () => this.feedback.setVisible(false));
  }

  refresh() {
    const st = this.st;
    const goals = this.tables.goals;
    st.grid.forEach((row, y) => row.forEach((k, x) => skin(this.tiles[y][x].setTexture(`tile-${k}`), 'pickup', k, true)));
    this.scoreText.setText(`${st.score} / ${goals.target_score}`);
    this.movesText.setText(String(st.moves_left)).setColor(st.moves_left <= 3 ? this.pal.bad : this.pal.accent);
    this.bar.setDisplaySize(Math.max(1, this.barW * Math.min(1, st.score / goals.target_score)), LAYOUT.barH);
    this.statsText.setText(`Matches ${st.matches}  ·  cascades ${st.cascades}`);
    const c = st.cursor;
    const p = partner(st);
    const s = this.cell;
    this.cursorG.clear();
    this.cursorG.lineStyle(2, this.col.text, 1).strokeRect(this.ox + p.x * s + 3, this.oy + p.y * s + 3, s - 6, s - 6);
    this.cursorG.lineStyle(4, this.col.accent, 1).strokeRect(this.ox + c.x * s + 2, this.oy + c.y * s + 2, s - 4, s - 4);
    this.cursorG.fillStyle(this.col.accent, 1).fillCircle(this.cx(c.x) + (p.x - c.x) * s / 2, this.cy(c.y) + (p.y - c.y) * s / 2, 5);
  }

  update(time, delta) {
    if (this.finished) return;
    tick(this.st, delta);
  }

  checkEnd() {
    const out = this.st.outcome;
    if (this.finished || out === 'running') return;
    this.finished = true;
    if (out === 'abandoned') this.scene.start('Menu');
    else this.time.delayedCall(LAYOUT.endMs, () => this.toGameOver());
  }

  toGameOver() {
    if (this.leaving || this.st.outcome === 'abandoned') return;
    this.leaving = true;
    this.scene.start('GameOver');
  }
}
