// Play: the big button, the currency, the upgrade shop and the clock. Every rule lives in ../state.js; this scene
// routes input (keys from controlsFor(), plus the clickable button and upgrade rows) and draws.
import Phaser from 'phaser';
import { BUTTON_R } from './Preload.js';
import {
  createState, click, buy, tick, abandon, controlsFor, controlsHint, costOf, canAfford, timeLeftMs, fillText,
  formatNumber, formatRate, hexToInt, readableOn, ABANDON_KEYS, CLICK_KEYS,
} from '../state.js';
import { fitText, text } from '../ui.js';

const LAYOUT = {
  w: 800, cx: 400, hudH: 56, stripe: 5, stripeStep: 40,
  title: { x: 16, y: 16, w: 270 }, goal: { y: 8, w: 200 }, goalBar: { x: 300, y: 34, w: 200, h: 10 },
  time: { x: 784, y: 16 },
  left: { cx: 200, w: 360 }, amountY: 94, currencyY: 132, button: { y: 292, label: 30 },
  perClickY: 430, perSecondY: 456, promptY: 500, feedbackY: 542,
  shop: { x: 404, y: 68, w: 380, h: 484, header: 34, pad: 12, rowMax: 60, gap: 6 },
  hintY: 580, press: 0.94, pressMs: 60, sparks: 6, jitter: 70, feedbackMs: 1500, warn: 0.2, coinMs: 500,
};
const L = LAYOUT;
const keyLabel = (code) => code.replace(/^Digit/, '').replace(/^Key/, '');

export default class Play extends Phaser.Scene {
  constructor() {
    super('Play');
  }

  create() {
    this.tables = this.registry.get('tables');
    this.theme = this.tables.theme;
    this.pal = this.theme.palette;
    this.st = createState(this.tables);
    this.registry.set('state', this.st);
    this.ctl = controlsFor(this.tables);
    this.buyKeys = Object.fromEntries(Object.entries(this.ctl.buy).map(([id, code]) => [code, id]));
    this.finished = false;
    this.g = this.add.graphics();
    this.buildHud();
    this.buildButton();
    this.buildShop();
    fitText(text(this, L.cx, L.hintY, controlsHint(this.tables), 13, this.pal.text).setOrigin(0.5), L.w - 20);
    this.sparks = this.add.particles(0, 0, 'spark', {
      speed: { min: 80, max: 220 }, lifespan: 500, scale: { start: 1, end: 0 }, emitting: false,
    });
    this.input.keyboard.addCapture(CLICK_KEYS.map((c) => c.toUpperCase()).join(','));
    this.input.keyboard.on('keydown', (ev) => this.onKey(ev));
    this.refresh();
  }

  buildHud() {
    const col = hexToInt(this.pal.accent);
    this.g.fillStyle(col, 1);
    for (let x = 0; x < L.w; x += L.stripeStep) this.g.fillRect(x, L.hudH - L.stripe, L.stripeStep / 2, L.stripe);
    fitText(text(this, L.title.x, L.title.y, this.theme.title, 22, this.pal.accent, { bold: true }), L.title.w);
    const gb = L.goalBar;
    this.goalText = text(this, gb.x + gb.w / 2, L.goal.y, '', 15, this.pal.text, { bold: true }).setOrigin(0.5, 0);
    this.g.fillStyle(hexToInt(this.pal.panel), 1).fillRect(gb.x, gb.y, gb.w, gb.h);
    this.goalFill = this.add.image(gb.x, gb.y, 'px-good').setOrigin(0).setDisplaySize(0, gb.h);
    this.timeText = text(this, L.time.x, L.time.y, '', 18, this.pal.text, { bold: true }).setOrigin(1, 0);
  }

  buildButton() {
    const { cx, w } = L.left;
    this.amountText = text(this, cx, L.amountY, '', 40, this.pal.text, { bold: true }).setOrigin(0.5);
    fitText(text(this, cx, L.currencyY, this.theme.currency, 18, this.pal.accent, { bold: true }).setOrigin(0.5), w);
    this.button = this.add.image(cx, L.button.y, 'button');
    this.button.setInteractive(new Phaser.Geom.Circle(BUTTON_R, BUTTON_R, BUTTON_R), Phaser.Geom.Circle.Contains);
    this.button.on('pointerdown', () => this.doClick());
    this.buttonLabel = fitText(text(this, cx, L.button.y, this.theme.button_label, L.button.label,
      readableOn(this.pal.accent, this.pal.background, this.pal.text, '#000000', '#ffffff'),
      { bold: true }).setOrigin(0.5), BUTTON_R * 1.5);
    this.perClickText = text(this, cx, L.perClickY, '', 17, this.pal.text).setOrigin(0.5);
    this.perSecondText = text(this, cx, L.perSecondY, '', 17, this.pal.text).setOrigin(0.5);
    const eco = this.tables.economy;
    const prompt = fillText(this.theme.texts.goal_prompt, {
      goal: formatNumber(eco.goal), currency: this.theme.currency, seconds: Math.round(eco.time_limit_ms / 1000),
    });
    fitText(text(this, cx, L.promptY, prompt, 15, this.pal.good, { align: 'center', wrap: w }).setOrigin(0.5), w);
    this.feedback = text(this, cx, L.feedbackY, '', 15, this.pal.text, { bold: true }).setOrigin(0.5);
  }

  buildShop() {
    const s = L.shop;
    this.g.fillStyle(hexToInt(this.pal.panel), 1).fillRect(s.x, s.y, s.w, s.header);
    this.g.lineStyle(2, hexToInt(this.pal.panel), 1).strokeRect(s.x, s.y, s.w, s.h);
    text(this, s.x + s.pad, s.y + 7, 'Upgrades', 17, this.pal.accent, { bold: true });
    const list = this.tables.upgrades.upgrades;
    const avail = s.h - s.header - s.pad;
    const rowH = Math.min(s.rowMax, avail / list.length);
    this.rows = {};
    list.forEach((u, i) => {
      const x = s.x + s.pad;
      const y = s.y + s.header + s.pad / 2 + i * rowH;
      const w = s.w - 2 * s.pad;
      const h = rowH - s.gap;
      const cy = y + h / 2;
      const frame = this.add.rectangle(x, y, w, h).setOrigin(0).setStrokeStyle(2, hexToInt(this.pal.accent), 1);
      frame.setInteractive({ useHandCursor: true }).on('pointerdown', () => this.doBuy(u.id));
      const cost = text(this, x + w - 10, cy, '', 16, this.pal.good, { bold: true }).setOrigin(1, 0.5);
      const name = text(this, x + 10, cy - h / 4 + 1, `[${keyLabel(this.ctl.buy[u.id])}] ${u.name}`, 16, this.pal.text,
        { bold: true }).setOrigin(0, 0.5);
      fitText(name, w - 100);
      const gains = [u.per_click > 0 ? `+${formatRate(u.per_click)} per click` : '',
        u.per_second > 0 ? `+${formatRate(u.per_second)} per second` : ''].filter(Boolean).join(', ');
      const info = text(this, x + 10, cy + h / 4, gains, 13, this.pal.text).setOrigin(0, 0.5);
      fitText(info, w - 100);
      this.rows[u.id] = { frame, cost, info, gains };
    });
  }

  onKey(ev) {
    if (ev.repeat || this.finished) return;
    const code = ev.code.replace(/^Numpad(\d)$/, 'Digit$1');
    if (ABANDON_KEYS.includes(code)) this.doAbandon();
    else if (CLICK_KEYS.includes(code)) this.doClick();
    else if (this.buyKeys[code]) this.doBuy(this.buyKeys[code]);
  }

  say(msg, good) {
    this.feedback.setText(msg).setColor(good ? this.pal.good : this.pal.bad).setAlpha(1);
    this.tweens.killTweensOf(this.feedback);
    this.tweens.add({ targets: this.feedback, alpha: 0, delay: L.feedbackMs, duration: 300 });
  }

  doClick() {
    if (this.finished) return;
    const res = click(this.st);
    if (!res.ok) return;
    const b = this.button;
    this.tweens.killTweensOf([b, this.buttonLabel]);
    b.setScale(1);
    this.buttonLabel.setScale(1);
    this.tweens.add({ targets: [b, this.buttonLabel], scale: L.press, duration: L.pressMs, yoyo: true });
    const a = this.st.rng() * Math.PI * 2;
    const r = this.st.rng() * L.jitter;
    this.sparks.explode(L.sparks, b.x + Math.cos(a) * r, b.y + Math.sin(a) * r);
    this.refresh();
    this.checkEnd();
  }

  doBuy(id) {
    if (this.finished) return;
    const u = this.tables.upgrades.upgrades.find((x) => x.id === id);
    const res = buy(this.st, id);
    if (res.ok) {
      this.say(`${u.name} is now level ${this.st.upgrades[id]}`, true);
      const row = this.rows[id];
      this.tweens.add({ targets: row.cost, scale: 1.3, duration: 90, yoyo: true });
      const coin = this.add.image(row.frame.x + 20, row.frame.y + row.frame.height / 2, 'coin');
      this.tweens.add({ targets: coin, x: L.left.cx, y: L.amountY, alpha: 0.3, duration: L.coinMs, onComplete: () => coin.destroy() });
    } else this.say(res.reason, false);
    this.refresh();
    this.checkEnd();
  }

  doAbandon() {
    abandon(this.st);
    this.checkEnd();
  }

  // Redraws a text only when its content changes (a canvas text re-render costs a texture upload).
  put(t, s, color) {
    if (t.text !== s) t.setText(s);
    if (color && t.style.color !== color) t.setColor(color);
    return t;
  }

  refresh() {
    const st = this.st;
    const eco = this.tables.economy;
    const amount = formatNumber(st.currency);
    if (this.amountText.text !== amount) fitText(this.amountText.setFontSize(40).setText(amount), L.left.w);
    this.put(this.perClickText, `+${formatRate(st.per_click)} per click`);
    this.put(this.perSecondText, `+${formatRate(st.per_second)} per second`);
    this.put(this.goalText, `Goal ${formatNumber(eco.goal)}`);
    this.goalFill.setDisplaySize(L.goalBar.w * Phaser.Math.Clamp(st.currency / eco.goal, 0, 1), L.goalBar.h);
    const left = timeLeftMs(st);
    const secs = Math.ceil(left / 1000);
    this.put(this.timeText, `Time ${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, '0')}`,
      left < eco.time_limit_ms * L.warn ? this.pal.bad : this.pal.text);
    for (const [id, row] of Object.entries(this.rows)) {
      const ok = canAfford(st, id);
      this.put(row.cost, formatNumber(costOf(st, id)), ok ? this.pal.good : this.pal.bad);
      if (row.ok !== ok) row.frame.setStrokeStyle(2, hexToInt(ok ? this.pal.accent : this.pal.panel), 1);
      row.ok = ok;
      this.put(row.info, st.upgrades[id] ? `${row.gains}  ·  level ${st.upgrades[id]}` : row.gains);
    }
  }

  update(time, delta) {
    if (this.finished) return;
    tick(this.st, delta);
    this.refresh();
    this.checkEnd();
  }

  checkEnd() {
    const out = this.st.outcome;
    if (this.finished || out === 'running') return;
    this.finished = true;
    this.scene.start(out === 'abandoned' ? 'Menu' : 'GameOver');
  }
}
