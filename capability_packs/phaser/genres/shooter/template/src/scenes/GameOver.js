// GameOver: theme.texts.win_title/win or lose_title/lose, the final numbers and why the run ended.
// A start key (START_KEYS) or a click → Menu.
import Phaser from 'phaser';
import { START_KEYS, keyLabel } from '../state.js';
import { card, label, onStart } from './ui.js';

const LAYOUT = {
  cx: 400, card: { w: 640, h: 380, y: 300, band: 110 }, headY: 165, msgY: 262, statsY: 330, reasonY: 364, hintY: 440,
  textW: 580, fs: { head: 40, msg: 20, stats: 20, reason: 16, hint: 16 }, pulse: 1.05, pulseMs: 500,
};
const REASONS = {
  breached: (noun) => `The last life went when ${noun} slipped past the bottom line.`,
  crashed: (noun) => `The last life went in a crash with the ${noun}.`,
  shot_down: (noun) => `The last life went to fire from the ${noun}.`,
};

export default class GameOver extends Phaser.Scene {
  constructor() {
    super('GameOver');
  }

  create() {
    const { theme, waves } = this.registry.get('tables');
    const st = this.registry.get('state');
    const pal = theme.palette;
    const L = LAYOUT;
    const won = st.outcome === 'won';
    const colour = won ? pal.good : pal.bad;
    card(this, L.cx, L.card.y, L.card.w, L.card.h, L.card.band, pal.panel, colour);
    const head = label(this, L.cx, L.headY, won ? theme.texts.win_title : theme.texts.lose_title, L.fs.head, colour,
      { bold: true, maxWidth: L.textW / L.pulse });
    this.tweens.add({ targets: head, scale: L.pulse, duration: L.pulseMs, yoyo: true, repeat: -1, ease: 'Sine.easeInOut' });
    label(this, L.cx, L.msgY, won ? theme.texts.win : theme.texts.lose, L.fs.msg, pal.text, { maxWidth: L.textW, maxLines: 3 });
    label(this, L.cx, L.statsY, `Score ${st.score}   ·   Kills ${st.kills}   ·   Waves cleared ${st.cleared}/${waves.waves.length}`,
      L.fs.stats, pal.accent, { bold: true, maxWidth: L.textW });
    if (!won && REASONS[st.lostReason]) {
      label(this, L.cx, L.reasonY, REASONS[st.lostReason](theme.enemy_noun), L.fs.reason, pal.text, { maxWidth: L.textW });
    }
    label(this, L.cx, L.hintY, `Press ${START_KEYS.map(keyLabel).join(' or ')} (or click) for the menu`, L.fs.hint, pal.text,
      { maxWidth: L.textW });
    onStart(this, START_KEYS, () => this.scene.start('Menu'));
  }
}
