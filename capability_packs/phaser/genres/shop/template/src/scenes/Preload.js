// Preload: loads the registered assets (assets/manifest.json, if any); every other texture is drawn here with Graphics + generateTexture.
import Phaser from 'phaser';
import { queueAssets } from '../assets.js';
import { hexToInt } from '../state.js';

const LAYOUT = { item: 32, customerW: 56, customerH: 84, coin: 20, spark: 8, px: 4 };
export const CUSTOMER_COLOURS = ['accent', 'good', 'bad'];

export default class Preload extends Phaser.Scene {
  constructor() {
    super('Preload');
  }

  preload() {
    queueAssets(this); // the registered assets (assets/manifest.json), under their ids
  }

  create() {
    const { items, theme } = this.registry.get('tables');
    const g = this.make.graphics({ x: 0, y: 0 }, false);
    for (const it of items.items) this.itemTexture(g, it);
    // Canvas renderer cannot tint, so bake one customer texture per palette colour.
    const pal = theme.palette;
    CUSTOMER_COLOURS.forEach((k, i) => this.customerTexture(g, pal, hexToInt(pal[k]), `customer-${i}`));
    this.coinTexture(g, hexToInt(pal.accent));
    // Solid palette swatches ("px-accent", ...), stretched with setDisplaySize for bars and overlays.
    for (const [k, v] of Object.entries(pal)) {
      g.clear();
      g.fillStyle(hexToInt(v), 1);
      g.fillRect(0, 0, LAYOUT.px, LAYOUT.px);
      g.generateTexture(`px-${k}`, LAYOUT.px, LAYOUT.px);
    }
    g.clear();
    g.fillStyle(hexToInt(pal.accent), 1);
    g.fillCircle(LAYOUT.spark / 2, LAYOUT.spark / 2, LAYOUT.spark / 2);
    g.generateTexture('spark', LAYOUT.spark, LAYOUT.spark);
    g.destroy();
    this.scene.start('Menu');
  }

  itemTexture(g, it) {
    const s = LAYOUT.item;
    const c = Phaser.Display.Color.IntegerToColor(hexToInt(it.color));
    const dark = c.clone().darken(35).color;
    const light = c.clone().lighten(20).color;
    g.clear();
    if (it.kind === 'raw') {
      g.fillStyle(dark, 1);
      g.fillCircle(s / 2, s / 2, s / 2);
      g.fillStyle(c.color, 1);
      g.fillCircle(s / 2, s / 2, s / 2 - 3);
      g.fillStyle(light, 1);
      g.fillCircle(s / 2 - 5, s / 2 - 5, 4);
    } else {
      g.fillStyle(dark, 1);
      g.fillRoundedRect(0, 0, s, s, 8);
      g.fillStyle(c.color, 1);
      g.fillRoundedRect(3, 3, s - 6, s - 6, 6);
      g.fillStyle(light, 1);
      g.fillRoundedRect(7, 7, s - 14, 5, 2);
    }
    g.generateTexture(`item-${it.id}`, s, s);
  }

  customerTexture(g, pal, colour, key) {
    const w = LAYOUT.customerW;
    const h = LAYOUT.customerH;
    const ink = hexToInt(pal.background);
    g.clear();
    g.fillStyle(colour, 1);
    g.fillRoundedRect(4, 34, w - 8, h - 34, 14);
    g.fillStyle(hexToInt(pal.text), 1);
    g.fillCircle(w / 2, 20, 18);
    g.fillStyle(ink, 0.2);
    g.fillRect(w / 2 - 2, 40, 4, h - 44);
    g.fillStyle(ink, 1);
    g.fillCircle(w / 2 - 6, 18, 2.5);
    g.fillCircle(w / 2 + 6, 18, 2.5);
    g.lineStyle(2, ink, 1);
    g.beginPath();
    g.arc(w / 2, 23, 6, 0.2, Math.PI - 0.2);
    g.strokePath();
    g.generateTexture(key, w, h);
  }

  coinTexture(g, accent) {
    const r = LAYOUT.coin / 2;
    const c = Phaser.Display.Color.IntegerToColor(accent);
    g.clear();
    g.fillStyle(c.clone().darken(30).color, 1);
    g.fillCircle(r, r, r);
    g.fillStyle(c.clone().lighten(15).color, 1);
    g.fillCircle(r, r, r - 3);
    g.generateTexture('coin', LAYOUT.coin, LAYOUT.coin);
  }
}
