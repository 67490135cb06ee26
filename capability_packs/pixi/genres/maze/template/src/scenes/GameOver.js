// GameOver: theme.texts.win / theme.texts.lose and the final numbers. A start key or a click → Menu.
import { Scene } from '../game.js';
import { START_KEYS, fillText } from '../state.js';
import { card, fitText, onStartInput, text } from '../ui.js';

const L = { cx: 400, card: { w: 640, h: 380, y: 300 }, band: 120, headY: 170, msgY: 262, statsY: 338, hintY: 430,
  inner: 580, pulse: 1.06, pulseMs: 500 };
const HEADINGS = { won: 'You escaped!', time: "Time's up!", hazard: 'Trapped!', enemy: 'Caught!' };
const keyName = (code) => code.replace(/^Key/, '');

export default class GameOver extends Scene {
  static KEY = 'GameOver';

  create() {
    const { theme, mazes } = this.registry.get('tables');
    const st = this.registry.get('state');
    const pal = theme.palette;
    const won = st.outcome === 'won';
    const colour = won ? pal.good : pal.bad;
    card(this, pal, L.cx, L.card.y, L.card.w, L.card.h, L.band, colour);
    const heading = HEADINGS[won ? 'won' : st.lostReason] || 'Game over';
    const head = fitText(text(this, L.cx, L.headY, heading, 40, colour, { bold: true, ax: 0.5, ay: 0.5 }), L.inner);
    this.tween(head, { 'scale.x': L.pulse, 'scale.y': L.pulse }, L.pulseMs, { yoyo: true, repeat: -1 });
    const msg = fillText(won ? theme.texts.win : theme.texts.lose, { gem: theme.gem_name, score: st.score });
    text(this, L.cx, L.msgY, msg, 21, pal.text, { align: 'center', wrap: L.inner, ax: 0.5, ay: 0.5 });
    const reached = won ? mazes.mazes.length : st.level;
    const stats = `Score ${st.score}   ·   mazes cleared ${reached} / ${mazes.mazes.length}   ·   moves ${st.moves}`;
    fitText(text(this, L.cx, L.statsY, stats, 18, pal.accent, { align: 'center', ax: 0.5, ay: 0.5 }), L.inner);
    text(this, L.cx, L.hintY, `${START_KEYS.map(keyName).join(' / ')} or click: back to the menu`, 16, pal.text,
      { ax: 0.5, ay: 0.5 });
    onStartInput(this, START_KEYS, () => this.game.start('Menu'));
  }
}
