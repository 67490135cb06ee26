// GameOver: theme.texts.win / theme.texts.lose and the final numbers. A start key or a click → Menu.
import Phaser from 'phaser';
import { hexToInt, fillText, START_KEYS, keyName } from '../state.js';

const LAYOUT = {
  cx: 400, card: { w: 640, h: 360, y: 300 }, band: 120, headY: 180, msgY: 275, statsY: 340, hintY: 430,
  pulse: 1.06, pulseMs: 500, font: 'Trebuchet MS, Verdana, sans-serif',
};

export default class GameOver extends Phaser.Scene {
  constructor() {
    super('GameOver');
  }

  create() {
    const { theme } = this.registry.get('tables');
    const st = this.registry.get('state');
    const pal = theme.palette;
    const L = LAYOUT;
    const won = st.outcome === 'won';
    const target = st.tables.goals.target_score;
    const vars = { score: st.score, target, moves: st.moves_left, matches: st.matches };
    this.leaving = false;

    const g = this.add.graphics();
    const left = L.cx - L.card.w / 2;
    const top = L.card.y - L.card.h / 2;
    g.fillStyle(hexToInt(pal.panel), 1).fillRect(left, top, L.card.w, L.band);
    g.lineStyle(4, hexToInt(won ? pal.good : pal.bad), 1).strokeRect(left, top, L.card.w, L.card.h);
    const head = this.add.text(L.cx, L.headY, won ? 'You win!' : 'Game over', {
      fontFamily: L.font, fontSize: '40px', color: won ? pal.good : pal.bad, fontStyle: 'bold',
    }).setOrigin(0.5);
    this.tweens.add({ targets: head, scale: L.pulse, duration: L.pulseMs, yoyo: true, repeat: -1, ease: 'Sine.easeInOut' });
    this.add.text(L.cx, L.msgY, fillText(won ? theme.texts.win : theme.texts.lose, vars), {
      fontFamily: L.font, fontSize: '22px', color: pal.text, align: 'center', wordWrap: { width: L.card.w - 60 },
    }).setOrigin(0.5);
    const stats = `Score ${st.score} / ${target}   ·   matches ${st.matches}   ·   cascades ${st.cascades}`;
    this.add.text(L.cx, L.statsY, stats, { fontFamily: L.font, fontSize: '18px', color: pal.accent }).setOrigin(0.5);
    this.add.text(L.cx, L.hintY, `${START_KEYS.map(keyName).join(' / ')} or click: back to the menu`, {
      fontFamily: L.font, fontSize: '16px', color: pal.text,
    }).setOrigin(0.5);

    this.input.keyboard.on('keydown', (ev) => {
      if (!ev.repeat && START_KEYS.includes(ev.code.replace('NumpadEnter', 'Enter'))) this.leave();
    });
    this.input.on('pointerdown', () => this.leave());
  }

  leave() {
    if (this.leaving) return;
    this.leaving = true;
    this.scene.start('Menu');
  }
}
