// Menu: title, subtitle, the enemy roster (from enemies.json), start and controls hints (built from the actions).
// A start key (START_KEYS) or a click starts Play.
import Phaser from 'phaser';
import { START_KEYS, actionsFor, controlsHint, startHint } from '../state.js';
import { card, label, onStart } from './ui.js';

const LAYOUT = {
  cx: 400, card: { w: 680, h: 540, y: 300, band: 150 }, titleY: 80, subtitleY: 142, textW: 620,
  rosterY: 196, rowH: 38, iconX: 220, nameX: 250, infoX: 430, shipY: 420, hintY: 470, controlsY: 520,
  fs: { title: 46, subtitle: 18, roster: 18, info: 14, hint: 22, controls: 14 }, blinkMs: 600, bob: 5, bobMs: 700,
};

export default class Menu extends Phaser.Scene {
  constructor() {
    super('Menu');
  }

  create() {
    const { theme, enemies, player } = this.registry.get('tables');
    const pal = theme.palette;
    const L = LAYOUT;
    card(this, L.cx, L.card.y, L.card.w, L.card.h, L.card.band, pal.panel, pal.accent);
    label(this, L.cx, L.titleY, theme.title, L.fs.title, pal.accent, { bold: true, maxWidth: L.textW })
      .setShadow(3, 3, '#000000', 4, true, true);
    label(this, L.cx, L.subtitleY, theme.subtitle, L.fs.subtitle, pal.text, { maxWidth: L.textW, maxLines: 2 });

    // The roster: one row per enemy type, as in the arcade attract screens.
    const list = enemies.enemies;
    const room = L.shipY - 24 - L.rosterY;
    const rowH = Math.min(L.rowH, room / list.length);
    const top = L.rosterY + (room - rowH * list.length) / 2;
    list.forEach((e, i) => {
      const y = top + i * rowH + rowH / 2;
      const icon = this.add.image(L.iconX, y, `enemy-${e.id}`).setScale(Math.min(1, (rowH - 4) / (2 * e.radius + 4)));
      this.tweens.add({ targets: icon, y: y - L.bob, duration: L.bobMs, yoyo: true, repeat: -1, delay: i * 120, ease: 'Sine.easeInOut' });
      label(this, L.nameX, y, e.name, L.fs.roster, pal.text, { bold: true, originX: 0, maxWidth: L.infoX - L.nameX - 12 });
      const info = [`${e.score} pts`, e.hp > 1 ? `${e.hp} hits` : '1 hit', e.fire_ms > 0 ? 'shoots back' : null];
      label(this, L.infoX, y, info.filter(Boolean).join(' · '), L.fs.info, pal.text, { originX: 0, maxWidth: 200 });
    });

    this.add.image(L.iconX, L.shipY, 'ship');
    label(this, L.nameX, L.shipY, `You fly the ${theme.player_name}: ${player.lives} lives. Stop every wave!`, L.fs.info + 2,
      pal.accent, { bold: true, originX: 0, maxWidth: L.cx + L.textW / 2 - L.nameX });
    const hint = label(this, L.cx, L.hintY, startHint(), L.fs.hint, pal.good, { bold: true, maxWidth: L.textW });
    this.tweens.add({ targets: hint, alpha: 0.7, duration: L.blinkMs, yoyo: true, repeat: -1 });
    label(this, L.cx, L.controlsY, controlsHint(actionsFor()), L.fs.controls, pal.text, { maxWidth: L.textW, maxLines: 2 });
    onStart(this, START_KEYS, () => this.scene.start('Play'));
  }
}
