// Menu: title, subtitle, the goal and the start hint from theme.json; a start key or a click starts Play.
import Phaser from 'phaser';
import { START_KEYS, controlsHint, startHint, fillText, formatNumber } from '../state.js';
import { card, fitText, onStartInput, text } from '../ui.js';

const LAYOUT = {
  cx: 400, card: { w: 620, h: 440, y: 300 }, band: 150, titleY: 140, subtitleY: 200, goalY: 268, iconY: 332,
  hintY: 410, controlsY: 462, inner: 560, iconScale: 0.32, bob: 6, bobMs: 700, blinkMs: 600,
};
const L = LAYOUT;

export default class Menu extends Phaser.Scene {
  constructor() {
    super('Menu');
  }

  create() {
    const tables = this.registry.get('tables');
    const { theme, economy } = tables;
    const pal = theme.palette;
    card(this, pal, L.cx, L.card.y, L.card.w, L.card.h, L.band, pal.accent);
    fitText(text(this, L.cx, L.titleY, theme.title, 46, pal.accent, { bold: true }).setOrigin(0.5), L.inner);
    text(this, L.cx, L.subtitleY, theme.subtitle, 19, pal.text, { align: 'center', wrap: L.inner }).setOrigin(0.5);
    const goal = fillText(theme.texts.goal_prompt, {
      goal: formatNumber(economy.goal), currency: theme.currency, seconds: Math.round(economy.time_limit_ms / 1000),
    });
    text(this, L.cx, L.goalY, goal, 18, pal.good, { align: 'center', wrap: L.inner }).setOrigin(0.5);
    const icon = this.add.image(L.cx, L.iconY, 'button').setScale(L.iconScale);
    this.tweens.add({ targets: icon, y: L.iconY - L.bob, duration: L.bobMs, yoyo: true, repeat: -1, ease: 'Sine.easeInOut' });
    const hint = text(this, L.cx, L.hintY, startHint(), 22, pal.accent, { bold: true }).setOrigin(0.5);
    this.tweens.add({ targets: hint, alpha: 0.55, duration: L.blinkMs, yoyo: true, repeat: -1 });
    text(this, L.cx, L.controlsY, controlsHint(tables), 15, pal.text, { align: 'center', wrap: L.inner }).setOrigin(0.5);
    onStartInput(this, START_KEYS, () => this.scene.start('Play'));
  }
}
