// Play: HUD, customer + order, inventory, buy and craft buttons. All rules live in ../state.js;
// this scene only routes input (keys from controlsFor(), plus clickable buttons) and draws.
// Drawing budget: software WebGL (SwiftShader in headless Chromium) pays for every drawn pixel and every
// curved edge, every frame. So: square outlines + header strips over the cleared background, no big fills,
// no full-screen overlays; dim disabled buttons with alpha rather than covering them.
// Legibility (the l1.legible gate): every label is laid out from its measured size and fitted to the room it has
// (fitText: a smaller font down to LAYOUT.fs.min, then an ellipsis), so long names never overlap or overrun.
import Phaser from 'phaser';
import { CUSTOMER_COLOURS } from './Preload.js';
import {
  createState, buy, craft, deliver, tick, abandon, currentOrder, remainingMs, canCraft, canDeliver, canAfford,
  controlsFor, controlsHint, rawItems, itemById, orderNeeds, formatMoney, fillText, hexToInt, keyName, eventCode,
  START_KEYS, DELIVER_KEYS, ABANDON_KEYS,
} from '../state.js';
import { skin } from '../assets.js';

const LAYOUT = {
  font: 'Trebuchet MS, Verdana, sans-serif',
  w: 800, cx: 400, hudH: 56, stripe: 5, stripeStep: 40, nameX: 16, nameY: 14, hudTextY: 10,
  customer: { x: 16, y: 68, w: 372, h: 236 },
  inventory: { x: 404, y: 68, w: 380, h: 236 },
  buy: { x: 16, y: 316, w: 372, h: 232 },
  craft: { x: 404, y: 316, w: 380, h: 232 },
  goalBar: { x: 330, y: 36, w: 200, h: 10 },
  clockBar: { x: 584, y: 36, w: 200, h: 10 },
  bubble: { dx: 110, dy: 34, w: 250, h: 132, text: { pad: 12, lineY: 36, iconDx: 30, iconDy: 40, qtyDy: 18, footDy: 26, wrap: 64, gap: 4 } },
  deliverBtn: { dx: 110, dy: 180, w: 250, h: 42 },
  sprite: { dx: 58, dy: 150 },
  headerH: 34, rowMax: 28, btnMax: 40, btnGap: 8, btnPad: 10, inner: 12, iconX: 24, nameOffX: 44, gap: 8, hudGap: 14,
  countW: 34, stackedMinH: 30, stackGap: 2, rowFont: 0.68, btnFont: 0.45, labelShare: 0.42, recipeShare: 0.34,
  fs: { shop: 24, money: 18, clock: 16, panel: 17, button: 16, recipe: 13, name: 18, body: 15, reward: 16, small: 14,
    note: 12, count: 16, feedback: 17, hint: 13, min: 11 },
  tail: [50, 16, 62, 70], shadow: { dy: 46, w: 60, h: 12 }, coins: 5, pop: 1.2,
  feedbackY: 566, hintY: 588, hintAlpha: 0.75, noteAlpha: 0.75, zeroAlpha: 0.65, flash: 1.3,
  bob: 6, bobMs: 600, clockWarn: 0.2, feedbackMs: 1800, coinMs: 650, enterMs: 320, dimFrame: 0.35, dimText: 0.7,
};

const wantedNote = (qty) => `order × ${qty}`;

// Fit a text into maxW x maxH: a smaller font (never below minPx), then cut with an ellipsis. Shared by the scenes.
export function fitText(t, maxW, maxH = Infinity, minPx = LAYOUT.fs.min) {
  const fits = () => t.displayWidth <= maxW && t.displayHeight <= maxH;
  let size = parseFloat(t.style.fontSize);
  while (!fits() && size > minPx) t.setFontSize(`${--size}px`);
  const full = t.text;
  for (let n = full.length - 1; !fits() && n > 0; n--) t.setText(`${full.slice(0, n).trimEnd()}…`);
  return t;
}

export default class Play extends Phaser.Scene {
  constructor() {
    super('Play');
  }

  create() {
    this.tables = this.registry.get('tables');
    this.theme = this.tables.theme;
    this.pal = this.theme.palette;
    this.col = Object.fromEntries(Object.entries(this.pal).map(([k, v]) => [k, hexToInt(v)]));
    this.st = createState(this.tables);
    this.registry.set('state', this.st);
    this.ctl = controlsFor(this.tables);
    this.finished = false;
    this.shownOrder = -1;

    this.g = this.add.graphics();
    this.buildHud();
    this.buildCustomer();
    this.buildInventory();
    this.buildBuy();
    this.buildCraft();
    const full = LAYOUT.w - 2 * LAYOUT.nameX;
    fitText(this.txt(LAYOUT.cx, LAYOUT.hintY, controlsHint(this.tables), LAYOUT.fs.hint, this.pal.text)
      .setOrigin(0.5).setAlpha(LAYOUT.hintAlpha), full);

    this.feedback = this.txt(LAYOUT.cx, LAYOUT.feedbackY, '', LAYOUT.fs.feedback, this.pal.text).setOrigin(0.5);
    this.sparks = this.add.particles(0, 0, 'spark', {
      speed: { min: 60, max: 180 }, lifespan: 550, scale: { start: 1, end: 0 }, emitting: false,
    });
    this.buyKeys = Object.fromEntries(Object.entries(this.ctl.buy).map(([id, code]) => [code, id]));
    this.craftKeys = Object.fromEntries(Object.entries(this.ctl.craft).map(([id, code]) => [code, id]));
    // the page must not scroll on the start/deliver keys (Space, Enter): capture the ones Phaser names
    const { KeyCodes } = Phaser.Input.Keyboard;
    this.input.keyboard.addCapture([...new Set([...START_KEYS, ...DELIVER_KEYS])]
      .map((code) => KeyCodes[code.toUpperCase()]).filter((k) => k !== undefined));
    this.input.keyboard.on('keydown', (ev) => this.onKey(ev));
    this.refresh();
  }

  txt(x, y, s, size, color, bold) {
    const t = this.add.text(x, y, s, { fontFamily: LAYOUT.font, fontSize: `${size}px`, color, fontStyle: bold ? 'bold' : '' });
    t.baseSize = size;
    return t;
  }

  // setText + fitText from the text's own size; a no-op while the string is unchanged (the HUD refreshes per frame)
  show(t, s, maxW, maxH) {
    if (t.fullText === s) return t;
    t.fullText = s;
    return fitText(t.setFontSize(`${t.baseSize}px`).setText(s), maxW, maxH);
  }

  block(key, x, y, w, h) {
    return this.add.image(x, y, `px-${key}`).setOrigin(0).setDisplaySize(w, h);
  }

  panel(r, title) {
    this.g.fillStyle(this.col.panel, 1).fillRect(r.x, r.y, r.w, LAYOUT.headerH - 4);
    this.g.lineStyle(2, this.col.panel, 1).strokeRect(r.x, r.y, r.w, r.h);
    fitText(this.txt(r.x + LAYOUT.inner, r.y + LAYOUT.inner / 1.5, title, LAYOUT.fs.panel, this.pal.accent, true),
      r.w - 2 * LAYOUT.inner, LAYOUT.headerH - LAYOUT.inner);
  }

  // A framed, clickable button. The label (bold) and the extra text share the width side by side, or, stacked,
  // take a line each (recipes: the label over its ingredients); both are fitted to the room they have.
  button(x, y, w, h, label, extra, onPress, stacked = false) {
    const hover = this.block('accent', x, y, w, h).setAlpha(0.2).setVisible(false);
    const frame = this.add.rectangle(x, y, w, h).setOrigin(0).setStrokeStyle(2, this.col.accent, 0.9);
    const room = w - 2 * LAYOUT.btnPad;
    const big = Math.min(LAYOUT.fs.button, Math.floor(h * (stacked ? LAYOUT.labelShare : LAYOUT.btnFont)));
    const t = this.txt(x + LAYOUT.btnPad, y + h / 2, label, big, this.pal.text, true).setOrigin(0, 0.5);
    const small = stacked ? Math.min(LAYOUT.fs.recipe, Math.floor(h * LAYOUT.recipeShare)) : big - 2;
    const e = this.txt(x + w - LAYOUT.btnPad, y + h / 2, extra, small, this.pal.text).setOrigin(1, 0.5);
    if (stacked) {
      fitText(t.setOrigin(0), room, h / 2);
      fitText(e.setOrigin(0).setX(x + LAYOUT.btnPad), room, h / 2);
      const top = y + (h - t.height - e.height - LAYOUT.stackGap) / 2;
      t.setY(top);
      e.setY(top + t.height + LAYOUT.stackGap);
    } else {
      fitText(e, room / 2, h);
      fitText(t, room - (extra ? e.width + LAYOUT.gap : 0), h);
    }
    frame.setInteractive({ useHandCursor: true });
    frame.on('pointerover', () => hover.setVisible(true));
    frame.on('pointerout', () => hover.setVisible(false));
    frame.on('pointerdown', () => {
      this.tweens.add({ targets: hover, alpha: { from: 0.5, to: 0.2 }, duration: 150 });
      onPress();
    });
    return {
      setEnabled: (on) => {
        frame.setAlpha(on ? 1 : LAYOUT.dimFrame);
        [t, e].forEach((o) => o.setAlpha(on ? 1 : LAYOUT.dimText));
      },
    };
  }

  buildHud() {
    const gb = LAYOUT.goalBar;
    const cb = LAYOUT.clockBar;
    this.g.fillStyle(this.col.accent, 1);
    const step = LAYOUT.stripeStep;
    for (let x = 0; x < LAYOUT.w; x += step) this.g.fillRect(x, LAYOUT.hudH - LAYOUT.stripe, step / 2, LAYOUT.stripe);
    this.g.fillStyle(this.col.panel, 1).fillRect(gb.x, gb.y, gb.w, gb.h).fillRect(cb.x, cb.y, cb.w, cb.h);
    fitText(this.txt(LAYOUT.nameX, LAYOUT.nameY, this.theme.shop_name, LAYOUT.fs.shop, this.pal.accent, true),
      gb.x - LAYOUT.nameX - LAYOUT.hudGap, LAYOUT.hudH - LAYOUT.stripe - LAYOUT.nameY);
    this.moneyText = this.txt(gb.x, LAYOUT.hudTextY, '', LAYOUT.fs.money, this.pal.text, true);
    this.clockText = this.txt(cb.x, LAYOUT.hudTextY, '', LAYOUT.fs.clock, this.pal.text);
    this.goalFill = this.block('good', gb.x, gb.y, gb.w, gb.h);
    this.clockFill = this.block('accent', cb.x, cb.y, cb.w, cb.h);
    this.clockWarn = this.block('bad', cb.x, cb.y, cb.w, cb.h).setVisible(false);
  }

  buildCustomer() {
    const r = LAYOUT.customer;
    const b = LAYOUT.bubble;
    this.panel(r, `Current ${this.theme.customer_noun}`);
    const sx = r.x + LAYOUT.sprite.dx;
    const sy = r.y + LAYOUT.sprite.dy;
    this.g.fillStyle(this.col.panel, 1).fillEllipse(sx, sy + LAYOUT.shadow.dy, LAYOUT.shadow.w, LAYOUT.shadow.h);
    this.customer = skin(this.add.image(sx, sy, 'customer-0'), 'customer');
    this.tweens.add({ targets: this.customer, y: sy - LAYOUT.bob, duration: LAYOUT.bobMs, yoyo: true, repeat: -1, ease: 'Sine.easeInOut' });
    const bx = r.x + b.dx;
    const by = r.y + b.dy;
    this.g.fillStyle(this.col.text, 1).fillRect(bx, by, b.w, b.h);
    const [t0, tw, t1, t2] = LAYOUT.tail;
    this.g.fillTriangle(bx, by + t0, bx - tw, by + t1, bx, by + t2);
    const dark = this.pal.background;
    const { pad, lineY, iconDx, iconDy, qtyDy, footDy, wrap } = b.text;
    this.orderName = this.txt(bx + pad, by + pad, '', LAYOUT.fs.name, dark, true);
    this.orderText = this.txt(bx + pad, by + lineY, '', LAYOUT.fs.body, dark).setWordWrapWidth(b.w - wrap);
    this.orderReward = this.txt(bx + pad, by + b.h - footDy, '', LAYOUT.fs.reward, dark, true);
    this.orderIcon = this.add.image(bx + b.w - iconDx, by + b.h - iconDy, 'spark');
    this.orderQty = this.txt(bx + b.w - iconDx, by + b.h - qtyDy, '', LAYOUT.fs.small, dark, true).setOrigin(0.5);
    const d = LAYOUT.deliverBtn;
    this.deliverBtn = this.button(r.x + d.dx, r.y + d.dy, d.w, d.h, `[${keyName(DELIVER_KEYS[0])}] Deliver`, '', () => this.doDeliver());
    this.servedText = this.txt(r.x + LAYOUT.inner, r.y + r.h - b.text.footDy, '', LAYOUT.fs.small, this.pal.text);
    this.servedRoom = d.dx - LAYOUT.inner - LAYOUT.gap;
  }

  // One row per item: icon, name, a note and the count. The note names the item's kind, or — for the item the
  // current order asks for — how many it wants (orderNeeds); its room is the widest note it can show.
  buildInventory() {
    const r = LAYOUT.inventory;
    this.panel(r, 'Inventory');
    const list = this.tables.items.items;
    const rowH = Math.min(LAYOUT.rowMax, (r.h - LAYOUT.headerH - LAYOUT.inner) / list.length);
    const size = (base) => Math.min(base, Math.floor(rowH * LAYOUT.rowFont));
    const countX = r.x + r.w - LAYOUT.nameX;
    const noteRight = countX - LAYOUT.countW - LAYOUT.gap;
    const nameX = r.x + LAYOUT.nameOffX;
    const most = Math.max(...this.tables.orders.orders.map((o) => o.qty));
    const probe = this.txt(0, 0, '', size(LAYOUT.fs.note), this.pal.text);
    const notes = [...list.map((it) => it.kind), wantedNote(most)];
    const widest = Math.max(...notes.map((s) => probe.setText(s).displayWidth));
    probe.destroy();
    this.noteRoom = Math.min(widest, (noteRight - nameX) / 2);
    this.noteH = rowH;
    this.invRows = {};
    list.forEach((it, i) => {
      const y = r.y + LAYOUT.headerH + rowH * i + rowH / 2;
      const icon = this.add.image(r.x + LAYOUT.iconX, y, `item-${it.id}`);
      skin(icon.setScale((rowH - 4) / icon.height), 'goods', i);
      const note = this.txt(noteRight, y, '', size(LAYOUT.fs.note), this.pal.text).setOrigin(1, 0.5);
      fitText(this.txt(nameX, y, it.name, size(LAYOUT.fs.body), this.pal.text).setOrigin(0, 0.5),
        noteRight - this.noteRoom - LAYOUT.gap - nameX, rowH);
      const count = this.txt(countX, y, '0', size(LAYOUT.fs.count), this.pal.accent, true).setOrigin(1, 0.5);
      this.invRows[it.id] = { icon, note, count, kind: it.kind };
    });
  }

  buttonColumn(r, entries, stacked = false) {
    const n = Math.max(1, entries.length);
    const avail = r.h - LAYOUT.headerH - LAYOUT.inner;
    const h = Math.min(LAYOUT.btnMax, (avail - LAYOUT.btnGap * (n - 1)) / n);
    return entries.map((e, i) => this.button(r.x + LAYOUT.inner, r.y + LAYOUT.headerH + i * (h + LAYOUT.btnGap),
      r.w - 2 * LAYOUT.inner, h, e.label, e.extra, e.onPress, stacked && h >= LAYOUT.stackedMinH));
  }

  buildBuy() {
    this.panel(LAYOUT.buy, 'Buy');
    const items = rawItems(this.tables);
    const btns = this.buttonColumn(LAYOUT.buy, items.map((it) => ({
      label: `[${keyName(this.ctl.buy[it.id])}] ${it.name}`,
      extra: formatMoney(this.theme, this.tables.prices.buy[it.id]),
      onPress: () => this.doBuy(it.id),
    })));
    this.buyBtns = Object.fromEntries(items.map((it, i) => [it.id, btns[i]]));
  }

  buildCraft() {
    this.panel(LAYOUT.craft, this.theme.craft_verb);
    const name = (id) => itemById(this.tables, id).name;
    const recipes = this.tables.recipes.recipes;
    const btns = this.buttonColumn(LAYOUT.craft, recipes.map((r) => ({
      label: `[${keyName(this.ctl.craft[r.id])}] ${r.name}`,
      extra: `${r.inputs.map((i) => `${i.qty} ${name(i.item)}`).join(' + ')} → ${r.output.qty} ${name(r.output.item)}`,
      onPress: () => this.doCraft(r.id),
    })), true);
    this.craftBtns = Object.fromEntries(recipes.map((r, i) => [r.id, btns[i]]));
  }

  onKey(ev) {
    if (ev.repeat || this.finished) return;
    const code = eventCode(ev);
    if (ABANDON_KEYS.includes(code)) this.doAbandon();
    else if (DELIVER_KEYS.includes(code)) this.doDeliver();
    else if (this.buyKeys[code]) this.doBuy(this.buyKeys[code]);
    else if (this.craftKeys[code]) this.doCraft(this.craftKeys[code]);
  }

  say(msg, good) {
    this.show(this.feedback, msg, LAYOUT.w - 2 * LAYOUT.nameX).setColor(good ? this.pal.good : this.pal.bad).setAlpha(1);
    this.tweens.killTweensOf(this.feedback);
    this.tweens.add({ targets: this.feedback, alpha: 0, delay: LAYOUT.feedbackMs, duration: 400 });
  }

  flashRow(id) {
    const row = this.invRows[id];
    this.tweens.add({ targets: row.count, scale: LAYOUT.flash, duration: 90, yoyo: true });
    this.sparks.explode(8, row.icon.x, row.icon.y);
  }

  doBuy(id) {
    const res = buy(this.st, id);
    if (res.ok) { this.say(`Bought 1 ${itemById(this.tables, id).name}`, true); this.flashRow(id); } else this.say(res.reason, false);
    this.refresh();
  }

  doCraft(id) {
    const res = craft(this.st, id);
    const out = this.tables.recipes.recipes.find((x) => x.id === id)?.output;
    if (res.ok) {
      this.say(`${this.theme.craft_verb}: ${out.qty} ${itemById(this.tables, out.item).name}`, true);
      this.flashRow(out.item);
    } else this.say(res.reason, false);
    this.refresh();
  }

  doDeliver() {
    const order = currentOrder(this.st);
    const res = deliver(this.st);
    if (res.ok) {
      this.say(`${order.customer} paid ${formatMoney(this.theme, order.reward)}!`, true);
      this.coinBurst();
    } else this.say(res.reason, false);
    this.refresh();
  }

  doAbandon() {
    abandon(this.st);
    this.checkEnd();
  }

  coinBurst() {
    const { x, y } = this.customer;
    this.sparks.explode(16, x, y - 20);
    for (let i = 0; i < LAYOUT.coins; i++) {
      const coin = this.add.image(x + i * 6, y - 30, 'coin');
      this.tweens.add({
        targets: coin, x: LAYOUT.goalBar.x + 40, y: 20, alpha: 0.2, duration: LAYOUT.coinMs, delay: i * 60,
        ease: 'Cubic.easeIn', onComplete: () => coin.destroy(),
      });
    }
    this.tweens.add({ targets: this.moneyText, scale: LAYOUT.pop, duration: 120, yoyo: true, delay: LAYOUT.coinMs });
  }

  refresh() {
    const st = this.st;
    for (const [id, row] of Object.entries(this.invRows)) {
      const n = st.inventory[id];
      // an empty row is dimmed but stays readable: the text colour, not the accent, at reduced alpha
      row.count.setText(String(n)).setColor(n > 0 ? this.pal.accent : this.pal.text).setAlpha(n > 0 ? 1 : LAYOUT.zeroAlpha);
      row.icon.setAlpha(n > 0 ? 1 : LAYOUT.zeroAlpha);
      const wanted = orderNeeds(st, id);
      this.show(row.note, wanted ? wantedNote(wanted) : row.kind, this.noteRoom, this.noteH)
        .setColor(wanted ? this.pal.good : this.pal.text).setAlpha(wanted ? 1 : LAYOUT.noteAlpha);
    }
    for (const [id, b] of Object.entries(this.buyBtns)) b.setEnabled(canAfford(st, id));
    for (const r of this.tables.recipes.recipes) this.craftBtns[r.id].setEnabled(canCraft(st, r));
    this.deliverBtn.setEnabled(canDeliver(st));
    this.show(this.servedText, `Served: ${st.ordersDone}`, this.servedRoom);
    this.showOrder();
    this.refreshHud();
  }

  showOrder() {
    const o = currentOrder(this.st);
    if (!o || this.shownOrder === this.st.orderIndex) return;
    this.shownOrder = this.st.orderIndex;
    const item = itemById(this.tables, o.item);
    const b = LAYOUT.bubble;
    const { pad, lineY, footDy, wrap, gap, iconDx } = b.text;
    skin(this.orderIcon.setTexture(`item-${o.item}`), 'goods', this.tables.items.items.findIndex((it) => it.id === o.item));
    this.show(this.orderName, o.customer, b.w - 2 * pad, lineY - pad);
    this.show(this.orderText, fillText(this.theme.texts.order_prompt, { customer: o.customer, qty: o.qty, item: item.name }),
      b.w - wrap, b.h - footDy - lineY - gap);
    this.show(this.orderReward, `pays ${formatMoney(this.theme, o.reward)}`,
      b.w - iconDx - this.orderIcon.displayWidth / 2 - pad - LAYOUT.gap, footDy);
    this.show(this.orderQty, `× ${o.qty}`, 2 * iconDx, footDy);
    skin(this.customer.setTexture(`customer-${this.st.orderIndex % CUSTOMER_COLOURS.length}`), 'customer', this.st.orderIndex);
    const x = LAYOUT.customer.x + LAYOUT.sprite.dx;
    this.tweens.add({ targets: this.customer, x: { from: x - 50, to: x }, alpha: { from: 0, to: 1 }, duration: LAYOUT.enterMs });
  }

  refreshHud() {
    const st = this.st;
    const eco = this.tables.economy;
    const gb = LAYOUT.goalBar;
    const cb = LAYOUT.clockBar;
    // the money line pops (LAYOUT.pop) on a delivery: it is fitted so that it still clears the clock then
    this.show(this.moneyText, `${formatMoney(this.theme, st.money)} / goal ${formatMoney(this.theme, eco.goal_money)}`,
      (cb.x - gb.x - LAYOUT.hudGap) / LAYOUT.pop, gb.y - LAYOUT.hudTextY);
    const left = remainingMs(st);
    const secs = Math.ceil(left / 1000);
    this.show(this.clockText, `Day ends in ${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, '0')}`,
      LAYOUT.w - cb.x - LAYOUT.nameX, cb.y - LAYOUT.hudTextY);
    const frac = left / eco.day_length_ms;
    const bar = frac < LAYOUT.clockWarn ? this.clockWarn : this.clockFill;
    this.clockFill.setVisible(bar === this.clockFill);
    this.clockWarn.setVisible(bar === this.clockWarn);
    bar.setDisplaySize(LAYOUT.clockBar.w * frac, LAYOUT.clockBar.h);
    this.goalFill.setDisplaySize(LAYOUT.goalBar.w * Phaser.Math.Clamp(st.money / eco.goal_money, 0, 1), LAYOUT.goalBar.h);
  }

  update(time, delta) {
    if (this.finished) return;
    tick(this.st, delta);
    this.refreshHud();
    this.checkEnd();
  }

  checkEnd() {
    const out = this.st.outcome;
    if (this.finished || out === 'running') return;
    this.finished = true;
    this.scene.start(out === 'abandoned' ? 'Menu' : 'GameOver');
  }
}
