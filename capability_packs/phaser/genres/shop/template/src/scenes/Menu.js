// Menu: title, subtitle and start hint from theme.json. Space, Enter or a click starts Play.
import Phaser from 'phaser';
import { hexToInt } from '../state.js';
import { fitText } from './Play.js';

const LAYOUT = {
  cx: 400, titleY: 170, subtitleY: 230, shelfY: 320, hintY: 420, controlsY: 478,
  card: { w: 600, h: 420, y: 300 }, band: 170, itemGap: 56, bob: 8, bobMs: 700, blinkMs: 600, margin: 40,
  titleH: 60, subtitleH: 56, hintH: 54, controlsH: 42, titleMin: 24,
  font: 'Trebuchet MS, Verdana, sans-serif',
};

export default class Menu extends Phaser.Scene {
  constructor() {
    super('Menu');
  }

  create() {
    const { theme, items } = this.registry.get('tables');
    const pal = theme.palette;
    const L = LAYOUT;
    this.started = false;

    // Outlined card with a filled title band (software WebGL pays per drawn pixel and curve).
    const g = this.add.graphics();
    const left = L.cx - L.card.w / 2;
    const top = L.card.y - L.card.h / 2;
    g.fillStyle(hexToInt(pal.panel), 1).fillRect(left, top, L.card.w, L.band);
    g.lineStyle(4, hexToInt(pal.accent), 1).strokeRect(left, top, L.card.w, L.card.h);
    // Every text is fitted to the card (a smaller font, then an ellipsis): long titles never leave it.
    const room = L.card.w - L.margin;
    fitText(this.add.text(L.cx, L.titleY, theme.title, { fontFamily: L.font, fontSize: '48px', color: pal.accent, fontStyle: 'bold' })
      .setOrigin(0.5).setShadow(3, 3, '#000000', 4, true, true), room, L.titleH, L.titleMin);
    fitText(this.add.text(L.cx, L.subtitleY, theme.subtitle, {
      fontFamily: L.font, fontSize: '22px', color: pal.text, align: 'center', wordWrap: { width: room },
    }).setOrigin(0.5), room, L.subtitleH);

    const list = items.items;
    const x0 = L.cx - ((list.length - 1) * L.itemGap) / 2;
    list.forEach((it, i) => {
      const img = this.add.image(x0 + i * L.itemGap, L.shelfY, `item-${it.id}`);
      this.tweens.add({
        targets: img, y: L.shelfY - L.bob, duration: L.bobMs, yoyo: true, repeat: -1,
        ease: 'Sine.easeInOut', delay: i * (L.bobMs / list.length),
      });
    });

    const hint = this.add.text(L.cx, L.hintY, theme.texts.start_hint, {
      fontFamily: L.font, fontSize: '22px', color: pal.good, fontStyle: 'bold', align: 'center',
      wordWrap: { width: room },
    }).setOrigin(0.5);
    fitText(hint, room, L.hintH);
    this.tweens.add({ targets: hint, alpha: 0.35, duration: L.blinkMs, yoyo: true, repeat: -1 });
    fitText(this.add.text(L.cx, L.controlsY, theme.texts.controls_hint, {
      fontFamily: L.font, fontSize: '16px', color: pal.text, align: 'center', wordWrap: { width: room },
    }).setOrigin(0.5).setAlpha(0.85), room, L.controlsH);

    this.input.keyboard.on('keydown', (ev) => {
      if (!ev.repeat && (ev.code === 'Space' || ev.code === 'Enter' || ev.code === 'NumpadEnter')) this.begin();
    });
    this.input.on('pointerdown', () => this.begin());
  }

  begin() {
    if (this.started) return;
    this.started = true;
    this.scene.start('Play');
  }
}
