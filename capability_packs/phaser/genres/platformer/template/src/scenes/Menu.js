// Menu: title and subtitle from theme.json, a little scene of the hero, the start and controls hints (built from
// the action table). A start key (START_KEYS) or a click starts Play.
import Phaser from 'phaser';
import { START_KEYS, coinsTotal } from '../state.js';
import { FONT, controlsHint, startHint, hexToInt, fitText } from '../ui.js';

const LAYOUT = {
  cx: 400, card: { w: 680, h: 470, y: 300 }, band: 150, titleY: 120, subtitleY: 188,
  stage: { y: 330, w: 360, h: 16, coinY: 270, coinGap: 44 }, infoY: 392, hintY: 440, controlsY: 486,
  bob: 10, bobMs: 650, blinkMs: 650, pulse: 1.06, hopMs: 420, hop: 34,
};

export default class Menu extends Phaser.Scene {
  constructor() {
    super('Menu');
  }

  create() {
    const { theme, levels } = this.registry.get('tables');
    const pal = theme.palette;
    const L = LAYOUT;
    this.started = false;

    const left = L.cx - L.card.w / 2;
    const top = L.card.y - L.card.h / 2;
    this.add.rectangle(left, top, L.card.w, L.card.h, hexToInt(pal.panel), 1).setOrigin(0)
      .setStrokeStyle(4, hexToInt(pal.accent));
    const title = this.add.text(L.cx, L.titleY, theme.title, {
      fontFamily: FONT, fontSize: '46px', color: pal.accent, fontStyle: 'bold',
    }).setOrigin(0.5).setShadow(3, 3, '#000000', 4, true, true);
    fitText(title, L.card.w - 48, 24);
    this.add.text(L.cx, L.subtitleY, theme.subtitle, {
      fontFamily: FONT, fontSize: '20px', color: pal.text, align: 'center', wordWrap: { width: L.card.w - 80 },
    }).setOrigin(0.5);

    // A strip of ground, the hero hopping on it and a row of coins above.
    const s = L.stage;
    this.add.tileSprite(L.cx - s.w / 2, s.y, s.w, s.h, 'dirt').setOrigin(0);
    this.add.tileSprite(L.cx - s.w / 2, s.y, s.w, 8, 'grass').setOrigin(0);
    const hero = this.add.image(L.cx - s.w / 2 + 40, s.y, 'hero').setOrigin(0, 1);
    this.tweens.add({ targets: hero, y: s.y - L.hop, duration: L.hopMs, yoyo: true, repeat: -1, ease: 'Quad.easeOut' });
    for (let i = 0; i < 5; i++) {
      const coin = this.add.image(L.cx - s.w / 2 + 120 + i * s.coinGap, s.coinY, 'coin');
      this.tweens.add({ targets: coin, y: s.coinY - L.bob, duration: L.bobMs, yoyo: true, repeat: -1,
        ease: 'Sine.easeInOut', delay: i * 90 });
    }

    const n = levels.levels.length;
    const info = `${n} level${n > 1 ? 's' : ''}  ·  ${levels.lives} lives  ·  ${coinsTotal(this.registry.get('tables'))} ${theme.coin_name} to find`;
    fitText(this.add.text(L.cx, L.infoY, info, { fontFamily: FONT, fontSize: '18px', color: pal.text }).setOrigin(0.5),
      L.card.w - 48);
    const hint = this.add.text(L.cx, L.hintY, startHint('start'), {
      fontFamily: FONT, fontSize: '22px', color: pal.good, fontStyle: 'bold',
    }).setOrigin(0.5);
    fitText(hint, (L.card.w - 48) / L.pulse);
    this.tweens.add({ targets: hint, scale: L.pulse, duration: L.blinkMs, yoyo: true, repeat: -1, ease: 'Sine.easeInOut' });
    fitText(this.add.text(L.cx, L.controlsY, controlsHint(), {
      fontFamily: FONT, fontSize: '15px', color: pal.text,
    }).setOrigin(0.5), L.card.w - 32);

    this.input.keyboard.on('keydown', (ev) => {
      if (!ev.repeat && START_KEYS.includes(ev.code)) this.begin();
    });
    this.input.on('pointerdown', () => this.begin());
  }

  begin() {
    if (this.started) return;
    this.started = true;
    this.scene.start('Play');
  }
}
