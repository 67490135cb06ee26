// GameOver: theme.texts win/lose with the final numbers. A start key or a click → Menu.
import Phaser from 'phaser';
import { START_KEYS, coinsTotal } from '../state.js';
import { FONT, startHint, hexToInt, fillText, fitText } from '../ui.js';

const LAYOUT = {
  cx: 400, card: { w: 640, h: 360, y: 300 }, band: 110, headY: 175, msgY: 262, statsY: 330, reasonY: 366, hintY: 430,
  pulse: 1.05, pulseMs: 520,
};
const REASONS = { pit: 'You fell into a pit with no lives left.', hazard: 'The hazards took your last life.',
  time: 'The time ran out.' };

export default class GameOver extends Phaser.Scene {
  constructor() {
    super('GameOver');
  }

  create() {
    const tables = this.registry.get('tables');
    const { theme, levels } = tables;
    const st = this.registry.get('state');
    const pal = theme.palette;
    const L = LAYOUT;
    const won = st.outcome === 'won';
    const vars = { hero: theme.hero, coins: st.coins, coin_name: theme.coin_name, score: st.score,
      level: st.level_index + 1, levels: levels.levels.length };
    this.leaving = false;

    const left = L.cx - L.card.w / 2;
    const top = L.card.y - L.card.h / 2;
    this.add.rectangle(left, top, L.card.w, L.card.h, hexToInt(pal.panel), 1).setOrigin(0)
      .setStrokeStyle(4, hexToInt(won ? pal.good : pal.bad));
    const head = this.add.text(L.cx, L.headY, fillText(won ? theme.texts.win_title : theme.texts.lose_title, vars), {
      fontFamily: FONT, fontSize: '40px', color: won ? pal.good : pal.bad, fontStyle: 'bold',
    }).setOrigin(0.5);
    fitText(head, (L.card.w - 60) / L.pulse, 20);
    this.tweens.add({ targets: head, scale: L.pulse, duration: L.pulseMs, yoyo: true, repeat: -1, ease: 'Sine.easeInOut' });
    this.add.text(L.cx, L.msgY, fillText(won ? theme.texts.win : theme.texts.lose, vars), {
      fontFamily: FONT, fontSize: '21px', color: pal.text, align: 'center', wordWrap: { width: L.card.w - 60 },
    }).setOrigin(0.5);
    const stats = `Score ${st.score}  ·  ${st.coins}/${coinsTotal(tables)} ${theme.coin_name}  ·  level ${vars.level}/${vars.levels}`;
    fitText(this.add.text(L.cx, L.statsY, stats, { fontFamily: FONT, fontSize: '18px', color: pal.accent })
      .setOrigin(0.5), L.card.w - 40);
    if (!won && REASONS[st.lost_reason]) {
      this.add.text(L.cx, L.reasonY, REASONS[st.lost_reason], { fontFamily: FONT, fontSize: '16px', color: pal.text })
        .setOrigin(0.5);
    }
    this.add.text(L.cx, L.hintY, startHint('back to the menu'), { fontFamily: FONT, fontSize: '16px', color: pal.text })
      .setOrigin(0.5);

    this.input.keyboard.on('keydown', (ev) => {
      if (!ev.repeat && START_KEYS.includes(ev.code)) this.leave();
    });
    this.input.on('pointerdown', () => this.leave());
  }

  leave() {
    if (this.leaving) return;
    this.leaving = true;
    this.scene.start('Menu');
  }
}
