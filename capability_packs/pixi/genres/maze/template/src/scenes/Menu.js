// Menu: title, subtitle, goal and start hint from theme.json; a start key or a click starts Play.
import { Scene } from '../game.js';
import { piece } from '../pieces.js';
import { START_KEYS, controlsHint, startHint, fillText } from '../state.js';
import { card, fitText, onStartInput, text } from '../ui.js';

const L = {
  cx: 400, card: { w: 640, h: 450, y: 300 }, band: 150, titleY: 138, subtitleY: 200, promptY: 266, iconsY: 330,
  iconGap: 64, hintY: 410, controlsY: 466, inner: 580, bob: 5, bobMs: 650, blinkMs: 600,
};
const ICONS = ['hero', 'gem', 'enemy', 'hazard', 'exit-open'];

export default class Menu extends Scene {
  static KEY = 'Menu';

  create() {
    const { theme, mazes } = this.registry.get('tables');
    const pal = theme.palette;
    card(this, pal, L.cx, L.card.y, L.card.w, L.card.h, L.band, pal.accent);
    fitText(text(this, L.cx, L.titleY, theme.title, 46, pal.accent, { bold: true, ax: 0.5, ay: 0.5 }), L.inner);
    text(this, L.cx, L.subtitleY, theme.subtitle, 19, pal.text, { align: 'center', wrap: L.inner, ax: 0.5, ay: 0.5 });
    const n = mazes.mazes.length;
    const prompt = `${fillText(theme.texts.goal_prompt, { gem: theme.gem_name, hero: theme.hero })}\n`
      + `${theme.hero}, ${n > 1 ? `${n} mazes` : 'one maze'} to clear.`;
    text(this, L.cx, L.promptY, prompt, 17, pal.good, { align: 'center', wrap: L.inner, ax: 0.5, ay: 0.5 });
    const x0 = L.cx - ((ICONS.length - 1) * L.iconGap) / 2;
    ICONS.forEach((kind, i) => {
      const icon = piece(kind, pal);
      icon.position.set(x0 + i * L.iconGap, L.iconsY);
      this.addChild(icon);
      this.tween(icon, { y: L.iconsY - L.bob }, L.bobMs, { yoyo: true, repeat: -1, delay: i * 120 });
    });
    const hint = text(this, L.cx, L.hintY, startHint(), 22, pal.accent, { bold: true, ax: 0.5, ay: 0.5 });
    this.tween(hint, { alpha: 0.55 }, L.blinkMs, { yoyo: true, repeat: -1 });
    text(this, L.cx, L.controlsY, controlsHint(), 15, pal.text, { align: 'center', wrap: L.inner, ax: 0.5, ay: 0.5 });
    onStartInput(this, START_KEYS, () => this.game.start('Play'));
  }
}
