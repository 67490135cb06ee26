// Menu: title, subtitle, the enemy roster (from enemies.json), start and controls hints (built from the actions).
// A start key (START_KEYS) or a click starts Play.
import { Scene } from '../game.js';
import { enemy, ship } from '../pieces.js';
import { START_KEYS, actionsFor, controlsHint, startHint } from '../state.js';
import { card, fitText, onStartInput, text } from '../ui.js';

const L = {
  cx: 400, card: { w: 680, h: 540, y: 300, band: 150 }, titleY: 80, subtitleY: 142, textW: 620,
  rosterY: 196, rowH: 38, iconX: 220, nameX: 250, infoX: 430, shipY: 420, hintY: 470, controlsY: 520,
  fs: { title: 46, subtitle: 18, roster: 18, info: 14, hint: 22, controls: 14 }, blinkMs: 600, bob: 5, bobMs: 700,
};
const centred = { ax: 0.5, ay: 0.5, align: 'center' };

export default class Menu extends Scene {
  static KEY = 'Menu';

  create() {
    const { theme, enemies, player } = this.registry.get('tables');
    const pal = theme.palette;
    card(this, pal, L.cx, L.card.y, L.card.w, L.card.h, L.card.band, pal.accent);
    fitText(text(this, L.cx, L.titleY, theme.title, L.fs.title, pal.accent, { ...centred, bold: true }), L.textW);
    fitText(text(this, L.cx, L.subtitleY, theme.subtitle, L.fs.subtitle, pal.text, { ...centred, wrap: L.textW }), L.textW);
    // The roster: one row per enemy type, as in the arcade attract screens.
    const list = enemies.enemies;
    const room = L.shipY - 24 - L.rosterY;
    const rowH = Math.min(L.rowH, room / list.length);
    const top = L.rosterY + (room - rowH * list.length) / 2;
    list.forEach((e, i) => {
      const y = top + i * rowH + rowH / 2;
      const icon = enemy(e);
      icon.position.set(L.iconX, y);
      icon.scale.set(Math.min(1, (rowH - 4) / (2 * e.radius + 4)));
      this.addChild(icon);
      this.tween(icon, { y: y - L.bob }, L.bobMs, { yoyo: true, repeat: -1, delay: i * 120 });
      fitText(text(this, L.nameX, y, e.name, L.fs.roster, pal.text, { bold: true, ay: 0.5 }), L.infoX - L.nameX - 12);
      const info = [`${e.score} pts`, e.hp > 1 ? `${e.hp} hits` : '1 hit', e.fire_ms > 0 ? 'shoots back' : null];
      fitText(text(this, L.infoX, y, info.filter(Boolean).join(' · '), L.fs.info, pal.text, { ay: 0.5 }), 200);
    });
    const you = ship(pal, player.radius);
    you.position.set(L.iconX, L.shipY);
    this.addChild(you);
    fitText(text(this, L.nameX, L.shipY, `You fly the ${theme.player_name}: ${player.lives} lives. Stop every wave!`,
      L.fs.info + 2, pal.accent, { bold: true, ay: 0.5 }), L.cx + L.textW / 2 - L.nameX);
    const hint = fitText(text(this, L.cx, L.hintY, startHint(), L.fs.hint, pal.good, { ...centred, bold: true }), L.textW);
    this.tween(hint, { alpha: 0.7 }, L.blinkMs, { yoyo: true, repeat: -1 });
    fitText(text(this, L.cx, L.controlsY, controlsHint(actionsFor()), L.fs.controls, pal.text,
      { ...centred, wrap: L.textW }), L.textW);
    onStartInput(this, START_KEYS, () => this.game.start('Play'));
  }
}
