// Play: the big button, the currency, the upgrade shop and the clock. Every rule lives in ../state.js; this scene
// routes input (keys from controlsFor(), plus the clickable button and upgrade rows) and draws.
import { Graphics } from 'pixi.js';
import { Scene } from '../game.js';
import {
  createState, click, buy, tick, abandon, controlsFor, controlsHint, costOf, canAfford, timeLeftMs, fillText,
  formatNumber, formatRate, readableOn, ABANDON_KEYS, CLICK_KEYS,
} from '../state.js';
import { fitText, hex, put, text } from '../ui.js';

const L = {
  w: 800, cx: 400, hudH: 56, stripe: 5, stripeStep: 40,
  title: { x: 16, y: 16, w: 270 }, goal: { y: 8 }, goalBar: { x: 300, y: 34, w: 200, h: 10 },
  time: { x: 784, y: 16 },
  left: { cx: 200, w: 360 }, amountY: 94, currencyY: 132, button: { y: 292, r: 110, label: 30 },
  perClickY: 430, perSecondY: 456, promptY: 500, feedbackY: 542,
  shop: { x: 404, y: 68, w: 380, h: 484, header: 34, pad: 12, rowMax: 60, gap: 6 },
  hintY: 580, press: 0.94, pressMs: 60, sparks: 6, jitter: 70, sparkMs: 500, feedbackMs: 1500, warn: 0.2, coinMs: 500,
};
const keyLabel = (code) => code.replace(/^Digit/, '').replace(/^Key/, '');

export default class Play extends Scene {
  static KEY = 'Play';

  create() {
    this.tables = this.registry.get('tables');
    this.theme = this.tables.theme;
    this.pal = this.theme.palette;
    this.st = createState(this.tables);
    this.registry.set('state', this.st);
    this.ctl = controlsFor(this.tables);
    this.buyKeys = Object.fromEntries(Object.entries(this.ctl.buy).map(([id, code]) => [code, id]));
    this.finished = false;
    this.g = new Graphics();
    this.addChild(this.g);
    this.buildHud();
    this.buildButton();
    this.buildShop();
    fitText(text(this, L.cx, L.hintY, controlsHint(this.tables), 13, this.pal.text, { ax: 0.5, ay: 0.5 }), L.w - 20);
    this.refresh();
  }

  buildHud() {
    for (let x = 0; x < L.w; x += L.stripeStep) this.g.rect(x, L.hudH - L.stripe, L.stripeStep / 2, L.stripe);
    this.g.fill(hex(this.pal.accent));
    fitText(text(this, L.title.x, L.title.y, this.theme.title, 22, this.pal.accent, { bold: true }), L.title.w);
    const gb = L.goalBar;
    this.goalText = text(this, gb.x + gb.w / 2, L.goal.y, '', 15, this.pal.text, { bold: true, ax: 0.5 });
    this.g.rect(gb.x, gb.y, gb.w, gb.h).fill(hex(this.pal.panel));
    this.goalFill = new Graphics();
    this.goalFill.position.set(gb.x, gb.y);
    this.addChild(this.goalFill);
    this.timeText = text(this, L.time.x, L.time.y, '', 18, this.pal.text, { bold: true, ax: 1 });
  }

  buildButton() {
    const { cx, w } = L.left;
    const r = L.button.r;
    this.amountText = text(this, cx, L.amountY, '', 40, this.pal.text, { bold: true, ax: 0.5, ay: 0.5 });
    fitText(text(this, cx, L.currencyY, this.theme.currency, 18, this.pal.accent, { bold: true, ax: 0.5, ay: 0.5 }), w);
    this.button = new Graphics().circle(0, 0, r).fill(hex(this.pal.accent)).circle(0, 0, r - 8)
      .stroke({ width: 4, color: hex(this.pal.text), alpha: 0.6 });
    this.button.position.set(cx, L.button.y);
    this.button.eventMode = 'static';
    this.button.cursor = 'pointer';
    this.button.on('pointerdown', () => this.doClick());
    this.addChild(this.button);
    this.buttonLabel = fitText(text(this, cx, L.button.y, this.theme.button_label, L.button.label,
      readableOn(this.pal.accent, this.pal.background, this.pal.text, '#000000', '#ffffff'),
      { bold: true, ax: 0.5, ay: 0.5 }), r * 1.5);
    this.perClickText = text(this, cx, L.perClickY, '', 17, this.pal.text, { ax: 0.5, ay: 0.5 });
    this.perSecondText = text(this, cx, L.perSecondY, '', 17, this.pal.text, { ax: 0.5, ay: 0.5 });
    const eco = this.tables.economy;
    const prompt = fillText(this.theme.texts.goal_prompt, {
      goal: formatNumber(eco.goal), currency: this.theme.currency, seconds: Math.round(eco.time_limit_ms / 1000),
    });
    fitText(text(this, cx, L.promptY, prompt, 15, this.pal.good, { align: 'center', wrap: w, ax: 0.5, ay: 0.5 }), w);
    this.feedback = text(this, cx, L.feedbackY, '', 15, this.pal.text, { bold: true, ax: 0.5, ay: 0.5 });
  }

  buildShop() {
    const s = L.shop;
    this.g.rect(s.x, s.y, s.w, s.header).fill(hex(this.pal.panel));
    this.g.rect(s.x, s.y, s.w, s.h).stroke({ width: 2, color: hex(this.pal.panel) });
    text(this, s.x + s.pad, s.y + 7, 'Upgrades', 17, this.pal.accent, { bold: true });
    const list = this.tables.upgrades.upgrades;
    const rowH = Math.min(s.rowMax, (s.h - s.header - s.pad) / list.length);
    this.rows = {};
    list.forEach((u, i) => {
      const x = s.x + s.pad;
      const y = s.y + s.header + s.pad / 2 + i * rowH;
      const w = s.w - 2 * s.pad;
      const h = rowH - s.gap;
      const cy = y + h / 2;
      const frame = new Graphics();
      frame.position.set(x, y);
      frame.eventMode = 'static';
      frame.cursor = 'pointer';
      frame.hitArea = { contains: (px, py) => px >= 0 && py >= 0 && px <= w && py <= h };
      frame.on('pointerdown', () => this.doBuy(u.id));
      this.addChild(frame);
      const cost = text(this, x + w - 10, cy, '', 16, this.pal.good, { bold: true, ax: 1, ay: 0.5 });
      fitText(text(this, x + 10, cy - h / 4 + 1, `[${keyLabel(this.ctl.buy[u.id])}] ${u.name}`, 16, this.pal.text,
        { bold: true, ay: 0.5 }), w - 100);
      const gains = [u.per_click > 0 ? `+${formatRate(u.per_click)} per click` : '',
        u.per_second > 0 ? `+${formatRate(u.per_second)} per second` : ''].filter(Boolean).join(', ');
      const info = fitText(text(this, x + 10, cy + h / 4, gains, 13, this.pal.text, { ay: 0.5 }), w - 100);
      this.rows[u.id] = { frame, cost, info, gains, w, h, ok: null };
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
    put(this.feedback, msg, good ? this.pal.good : this.pal.bad);
    this.feedback.alpha = 1;
    this.killTweensOf(this.feedback);
    this.tween(this.feedback, { alpha: 0 }, 300, { delay: L.feedbackMs });
  }

  doClick() {
    if (this.finished) return;
    const res = click(this.st);
    if (!res.ok) return;
    for (const o of [this.button, this.buttonLabel]) {
      this.killTweensOf(o.scale);
      o.scale.set(1);
      this.tween(o.scale, { x: L.press, y: L.press }, L.pressMs, { yoyo: true });
    }
    const a = this.st.rng() * Math.PI * 2;
    const r = this.st.rng() * L.jitter;
    this.sparkle(this.button.x + Math.cos(a) * r, this.button.y + Math.sin(a) * r);
    this.refresh();
    this.checkEnd();
  }

  sparkle(x, y) {
    for (let i = 0; i < L.sparks; i++) {
      const dot = new Graphics().circle(0, 0, 5).fill(hex(this.pal.good));
      dot.position.set(x, y);
      this.addChild(dot);
      const ang = (i / L.sparks) * Math.PI * 2;
      this.tween(dot, { x: x + Math.cos(ang) * 60, y: y + Math.sin(ang) * 60, alpha: 0 }, L.sparkMs,
        { onComplete: () => dot.destroy() });
    }
  }

  doBuy(id) {
    if (this.finished) return;
    const u = this.tables.upgrades.upgrades.find((x) => x.id === id);
    const res = buy(this.st, id);
    if (res.ok) {
      this.say(`${u.name} is now level ${this.st.upgrades[id]}`, true);
      const row = this.rows[id];
      this.tween(row.cost.scale, { x: 1.3, y: 1.3 }, 90, { yoyo: true });
      const coin = new Graphics().circle(0, 0, 11).fill(hex(this.pal.accent)).circle(0, 0, 8).fill(hex(this.pal.good));
      coin.position.set(row.frame.x + 20, row.frame.y + row.h / 2);
      this.addChild(coin);
      this.tween(coin, { x: L.left.cx, y: L.amountY, alpha: 0.3 }, L.coinMs, { onComplete: () => coin.destroy() });
    } else this.say(res.reason, false);
    this.refresh();
    this.checkEnd();
  }

  doAbandon() {
    abandon(this.st);
    this.checkEnd();
  }

  refresh() {
    const st = this.st;
    const eco = this.tables.economy;
    const amount = formatNumber(st.currency);
    if (this.amountText.text !== amount) {
      this.amountText.style.fontSize = 40;
      fitText(put(this.amountText, amount), L.left.w);
    }
    put(this.perClickText, `+${formatRate(st.per_click)} per click`);
    put(this.perSecondText, `+${formatRate(st.per_second)} per second`);
    put(this.goalText, `Goal ${formatNumber(eco.goal)}`);
    const share = Math.max(0, Math.min(1, st.currency / eco.goal));
    if (this.goalShare !== share) {
      this.goalShare = share;
      this.goalFill.clear();
      if (share > 0) this.goalFill.rect(0, 0, L.goalBar.w * share, L.goalBar.h).fill(hex(this.pal.good));
    }
    const left = timeLeftMs(st);
    const secs = Math.ceil(left / 1000);
    put(this.timeText, `Time ${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, '0')}`,
      left < eco.time_limit_ms * L.warn ? this.pal.bad : this.pal.text);
    for (const [id, row] of Object.entries(this.rows)) {
      const ok = canAfford(st, id);
      put(row.cost, formatNumber(costOf(st, id)), ok ? this.pal.good : this.pal.bad);
      if (row.ok !== ok) {
        row.frame.clear().rect(0, 0, row.w, row.h).stroke({ width: 2, color: hex(ok ? this.pal.accent : this.pal.panel) });
      }
      row.ok = ok;
      put(row.info, st.upgrades[id] ? `${row.gains}  ·  level ${st.upgrades[id]}` : row.gains);
    }
  }

  update(delta) {
    if (this.finished) return;
    tick(this.st, delta);
    this.refresh();
    this.checkEnd();
  }

  checkEnd() {
    const out = this.st.outcome;
    if (this.finished || out === 'running') return;
    this.finished = true;
    this.game.start(out === 'abandoned' ? 'Menu' : 'GameOver');
  }
}
