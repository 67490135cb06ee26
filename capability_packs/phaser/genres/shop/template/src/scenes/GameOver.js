// GameOver: shows theme.texts.win / theme.texts.lose and the final numbers. Space/Enter/click → Menu.
import Phaser from 'phaser';
import { hexToInt, formatMoney, fillText } from '../state.js';
import { fitText } from './Play.js';

const LAYOUT = {
  cx: 400, card: { w: 640, h: 360, y: 300 }, band: 120, headY: 180, msgY: 275, statsY: 340, hintY: 430,
  pulse: 1.06, pulseMs: 500, font: 'Trebuchet MS, Verdana, sans-serif', margin: 60, headH: 56, msgH: 60, statsH: 48,
  headMin: 20,
};
const REASONS = { day_over: 'The day is over.', bankrupt: 'Out of money and nothing left to sell.' };

export default class GameOver extends Phaser.Scene {
  constructor() {
    super('GameOver');
  }

  create() {
    const { theme, economy } = this.registry.get('tables');
    const state = this.registry.get('state');
    const pal = theme.palette;
    const L = LAYOUT;
    const won = state.outcome === 'won';
    const vars = { money: formatMoney(theme, state.money), goal: formatMoney(theme, economy.goal_money) };
    this.leaving = false;

    // Outlined card with a filled heading band (software WebGL pays per drawn pixel and curve).
    const g = this.add.graphics();
    const left = L.cx - L.card.w / 2;
    const top = L.card.y - L.card.h / 2;
    g.fillStyle(hexToInt(pal.panel), 1).fillRect(left, top, L.card.w, L.band);
    g.lineStyle(4, hexToInt(won ? pal.good : pal.bad), 1).strokeRect(left, top, L.card.w, L.card.h);
    // Every text is fitted to the card (a smaller font, then an ellipsis); the heading leaves room for its pulse.
    const room = L.card.w - L.margin;
    const head = fitText(this.add.text(L.cx, L.headY, theme.shop_name, {
      fontFamily: L.font, fontSize: '40px', color: won ? pal.good : pal.bad, fontStyle: 'bold',
    }).setOrigin(0.5), room / L.pulse, L.headH / L.pulse, L.headMin);
    this.tweens.add({ targets: head, scale: L.pulse, duration: L.pulseMs, yoyo: true, repeat: -1, ease: 'Sine.easeInOut' });
    fitText(this.add.text(L.cx, L.msgY, fillText(won ? theme.texts.win : theme.texts.lose, vars), {
      fontFamily: L.font, fontSize: '22px', color: pal.text, align: 'center', wordWrap: { width: room },
    }).setOrigin(0.5), room, L.msgH);

    const lines = [`${vars.money} / ${vars.goal}   ·   served: ${state.ordersDone}`];
    if (!won && REASONS[state.lostReason]) lines.push(REASONS[state.lostReason]);
    fitText(this.add.text(L.cx, L.statsY, lines.join('\n'), {
      fontFamily: L.font, fontSize: '18px', color: pal.accent, align: 'center',
    }).setOrigin(0.5), room, L.statsH);
    this.add.text(L.cx, L.hintY, 'Space / Enter / click: back to the menu', {
      fontFamily: L.font, fontSize: '16px', color: pal.text,
    }).setOrigin(0.5).setAlpha(0.8);

    this.input.keyboard.on('keydown', (ev) => {
      if (!ev.repeat && (ev.code === 'Space' || ev.code === 'Enter' || ev.code === 'NumpadEnter')) this.leave();
    });
    this.input.on('pointerdown', () => this.leave());
  }

  leave() {
    if (this.leaving) return;
    this.leaving = true;
    this.scene.start('Menu');
  }
}
