// Preload: loads the registered assets (assets/manifest.json, if any); every other texture is drawn here with Graphics + generateTexture.
import Phaser from 'phaser';
import { queueAssets } from '../assets.js';
import { hexToInt } from '../state.js';

export const BUTTON_R = 110;
const SIZE = { px: 4, spark: 10, coin: 22 };

export default class Preload extends Phaser.Scene {
  constructor() {
    super('Preload');
  }

  preload() {
    queueAssets(this); // the registered assets (assets/manifest.json), under their ids
  }

  create() {
    const { theme } = this.registry.get('tables');
    const pal = theme.palette;
    const g = this.make.graphics({ x: 0, y: 0 }, false);
    // Solid palette swatches ("px-accent", ...), stretched with setDisplaySize for bars.
    for (const [k, v] of Object.entries(pal)) {
      g.clear();
      g.fillStyle(hexToInt(v), 1);
      g.fillRect(0, 0, SIZE.px, SIZE.px);
      g.generateTexture(`px-${k}`, SIZE.px, SIZE.px);
    }
    this.buttonTexture(g, hexToInt(pal.accent), hexToInt(pal.text));
    const accent = Phaser.Display.Color.IntegerToColor(hexToInt(pal.accent));
    g.clear();
    g.fillStyle(hexToInt(pal.good), 1);
    g.fillCircle(SIZE.spark / 2, SIZE.spark / 2, SIZE.spark / 2);
    g.generateTexture('spark', SIZE.spark, SIZE.spark);
    const r = SIZE.coin / 2;
    g.clear();
    g.fillStyle(accent.clone().darken(30).color, 1);
    g.fillCircle(r, r, r);
    g.fillStyle(accent.clone().lighten(10).color, 1);
    g.fillCircle(r, r, r - 3);
    g.generateTexture('coin', SIZE.coin, SIZE.coin);
    g.destroy();
    this.scene.start('Menu');
  }

  // The big button: a rim, a face and a highlight; its label is a text drawn on top by the scenes.
  buttonTexture(g, accent, light) {
    const r = BUTTON_R;
    const c = Phaser.Display.Color.IntegerToColor(accent);
    g.clear();
    g.fillStyle(c.clone().darken(35).color, 1);
    g.fillCircle(r, r, r);
    g.fillStyle(c.color, 1);
    g.fillCircle(r, r - 4, r - 10);
    g.fillStyle(light, 0.25);
    g.fillEllipse(r - 30, r - 48, 70, 34);
    g.generateTexture('button', 2 * r, 2 * r);
  }
}
