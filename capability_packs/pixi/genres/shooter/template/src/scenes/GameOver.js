// GameOver: theme.texts.win_title/win or lose_title/lose, the final numbers and why the run ended.
// A start key (START_KEYS) or a click → Menu.
import { Scene } from '../game.js';
import { START_KEYS, keyLabel } from '../state.js';
import { card, fitText, onStartInput, text } from '../ui.js';

const L = {
  cx: 400, card: { w: 640, h: 380, y: 300, band: 110 }, headY: 165, msgY: 262, statsY: 330, reasonY: 364, hintY: 440,
  textW: 580, fs: { head: 40, msg: 20, stats: 20, reason: 16, hint: 16 }, pulse: 1.05, pulseMs: 500,
};
const REASONS = {
  breached: (noun) => `The last life went when ${noun} slipped past the bottom line.`,
  crashed: (noun) => `The last life went in a crash with the ${noun}.`,
  shot_down: (noun) => `The last life went to fire from the ${noun}.`,
};
const centred = { ax: 0.5, ay: 0.5, align: 'center' };

export default class GameOver extends Scene {
  static KEY = 'GameOver';

  create() {
    const { theme, waves } = this.registry.get('tables');
    const st = this.registry.get('state');
    const pal = theme.palette;
    const won = st.outcome === 'won';
    const colour = won ? pal.good : pal.bad;
    card(this, pal, L.cx, L.card.y, L.card.w, L.card.h, L.card.band, colour);
    const head = fitText(text(this, L.cx, L.headY, won ? theme.texts.win_title : theme.texts.lose_title, L.fs.head,
      colour, { ...centred, bold: true }), L.textW / L.pulse);
    this.tween(head, { 'scale.x': L.pulse, 'scale.y': L.pulse }, L.pulseMs, { yoyo: true, repeat: -1 });
    text(this, L.cx, L.msgY, won ? theme.texts.win : theme.texts.lose, L.fs.msg, pal.text, { ...centred, wrap: L.textW });
    fitText(text(this, L.cx, L.statsY,
      `Score ${st.score}   ·   Kills ${st.kills}   ·   Waves cleared ${st.cleared}/${waves.waves.length}`, L.fs.stats,
      pal.accent, { ...centred, bold: true }), L.textW);
    if (!won && REASONS[st.lostReason]) {
      fitText(text(this, L.cx, L.reasonY, REASONS[st.lostReason](theme.enemy_noun), L.fs.reason, pal.text, centred), L.textW);
    }
    fitText(text(this, L.cx, L.hintY, `Press ${START_KEYS.map(keyLabel).join(' or ')} (or click) for the menu`,
      L.fs.hint, pal.text, centred), L.textW);
    onStartInput(this, START_KEYS, () => this.game.start('Menu'));
  }
}
