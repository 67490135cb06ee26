// Menu: title, subtitle, the goal and the start hint from theme.json; a start key or a click starts Play.
import { Graphics } from 'pixi.js';
import { Scene } from '../game.js';
import { START_KEYS, controlsHint, startHint, fillText, formatNumber } from '../state.js';
import { card, fitText, hex, onStartInput, text } from '../ui.js';

const L = { cx: 400, card: { w: 620, h: 440, y: 300 }, band: 150, titleY: 140, subtitleY: 200, goalY: 268, iconY: 332,
  hintY: 410, controlsY: 462, inner: 560, iconR: 34, bob: 6, bobMs: 700, blinkMs: 600 };

export default class Menu extends Scene {
  static KEY = 'Menu';

  create() {
    const tables = this.registry.get('tables');
    const { theme, economy } = tables;
    const pal = theme.palette;
    card(this, pal, L.cx, L.card.y, L.card.w, L.card.h, L.band, pal.accent);
    fitText(text(this, L.cx, L.titleY, theme.title, 46, pal.accent, { bold: true, ax: 0.5, ay: 0.5 }), L.inner);
    text(this, L.cx, L.subtitleY, theme.subtitle, 19, pal.text, { align: 'center', wrap: L.inner, ax: 0.5, ay: 0.5 });
    const goal = fillText(theme.texts.goal_prompt, {
      goal: formatNumber(economy.goal), currency: theme.currency, seconds: Math.round(economy.time_limit_ms / 1000),
    });
    text(this, L.cx, L.goalY, goal, 18, pal.good, { align: 'center', wrap: L.inner, ax: 0.5, ay: 0.5 });
    const icon = new Graphics().circle(0, 0, L.iconR).fill(hex(pal.accent)).circle(0, 0, L.iconR - 6)
      .stroke({ width: 3, color: hex(pal.text) });
    icon.position.set(L.cx, L.iconY);
    this.addChild(icon);
    this.tween(icon, { y: L.iconY - L.bob }, L.bobMs, { yoyo: true, repeat: -1 });
    const hint = text(this, L.cx, L.hintY, startHint(), 22, pal.accent, { bold: true, ax: 0.5, ay: 0.5 });
    this.tween(hint, { alpha: 0.55 }, L.blinkMs, { yoyo: true, repeat: -1 });
    text(this, L.cx, L.controlsY, controlsHint(tables), 15, pal.text, { align: 'center', wrap: L.inner, ax: 0.5, ay: 0.5 });
    onStartInput(this, START_KEYS, () => this.game.start('Play'));
  }
}
