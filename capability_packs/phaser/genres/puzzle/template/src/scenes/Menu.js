// Menu: title and subtitle from theme.json, the tile kinds, the goal, the controls (built from ACTIONS).
// A start key (START_KEYS) or a click starts Play.
import Phaser from 'phaser';
import { hexToInt, START_KEYS, controlRows, startLine } from '../state.js';
import { fitWidth } from './fit.js';

const LAYOUT = {
  cx: 400, card: { w: 640, h: 500, y: 300 }, band: 150, titleY: 100, subtitleY: 160, tilesY: 250, tileGap: 58,
  tilePx: 44, goalY: 312, startY: 362, controlsY: 410, rowH: 24, keysX: 390, labelX: 410,
  bob: 6, bobMs: 700, blinkMs: 600, font: 'Trebuchet MS, Verdana, sans-serif',
};

export default class Menu extends Phaser.Scene {
  constructor() {
    super('Menu');
  }

  create() {
    const { theme, board, goals } = this.registry.get('tables');
    const pal = theme.palette;
    const L = LAYOUT;
    const text = (x, y, s, size, color, extra = {}) => this.add.text(x, y, s, {
      fontFamily: L.font, fontSize: `${size}px`, color, ...extra,
    });
    this.started = false;

    const g = this.add.graphics();
    const left = L.cx - L.card.w / 2;
    const top = L.card.y - L.card.h / 2;
    g.fillStyle(hexToInt(pal.panel), 1).fillRect(left, top, L.card.w, L.band);
    g.lineStyle(4, hexToInt(pal.accent), 1).strokeRect(left, top, L.card.w, L.card.h);
    fitWidth(text(L.cx, L.titleY, theme.title, 44, pal.accent, { fontStyle: 'bold' }).setOrigin(0.5), L.card.w - 40);
    text(L.cx, L.subtitleY, theme.subtitle, 18, pal.text, { align: 'center', wordWrap: { width: L.card.w - 60 } })
      .setOrigin(0.5);

    const n = board.kinds.length;
    const x0 = L.cx - ((n - 1) * L.tileGap) / 2;
    board.kinds.forEach((k, i) => {
      const img = this.add.image(x0 + i * L.tileGap, L.tilesY, `tile-${i}`).setDisplaySize(L.tilePx, L.tilePx);
      this.tweens.add({
        targets: img, y: L.tilesY - L.bob, duration: L.bobMs, yoyo: true, repeat: -1, ease: 'Sine.easeInOut',
        delay: i * (L.bobMs / n),
      });
    });
    text(L.cx, L.goalY, `Score ${goals.target_score} points in ${goals.moves} moves · lines of 3+ clear`, 17, pal.text)
      .setOrigin(0.5);
    const hint = text(L.cx, L.startY, startLine(), 22, pal.good, { fontStyle: 'bold' }).setOrigin(0.5);
    this.tweens.add({ targets: hint, scale: 1.05, duration: L.blinkMs, yoyo: true, repeat: -1, ease: 'Sine.easeInOut' });
    controlRows().forEach(([keys, what], i) => {
      const y = L.controlsY + i * L.rowH;
      text(L.keysX, y, keys, 15, pal.accent, { fontStyle: 'bold' }).setOrigin(1, 0);
      text(L.labelX, y, what, 15, pal.text);
    });

    this.input.keyboard.on('keydown', (ev) => {
      if (!ev.repeat && START_KEYS.includes(ev.code.replace('NumpadEnter', 'Enter'))) this.begin();
    });
    this.input.on('pointerdown', () => this.begin());
  }

  begin() {
    if (this.started) return;
    this.started = true;
    this.scene.start('Play');
  }
}
