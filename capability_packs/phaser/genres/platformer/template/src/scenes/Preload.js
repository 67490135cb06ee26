// Preload: loads the registered assets (assets/manifest.json, if any); every other texture is drawn here with Graphics + generateTexture,
// sized from the tables (the player's box from physics.json, the coin from levels.json).
import Phaser from 'phaser';
import { queueAssets } from '../assets.js';
import { hexToInt } from '../ui.js';

const LAYOUT = { tile: 32, grass: 8, spike: 16, flag: { w: 32, h: 64 }, hill: { w: 320, h: 150 }, cloud: { w: 120, h: 44 },
  spark: 6 };

export default class Preload extends Phaser.Scene {
  constructor() {
    super('Preload');
  }

  preload() {
    queueAssets(this); // the registered assets (assets/manifest.json), under their ids
  }

  create() {
    const { theme, physics, levels } = this.registry.get('tables');
    const pal = theme.palette;
    const col = (k) => hexToInt(pal[k]);
    const shade = (k, by) => Phaser.Display.Color.IntegerToColor(col(k)).darken(by).color;
    const light = (k, by) => Phaser.Display.Color.IntegerToColor(col(k)).lighten(by).color;
    const g = this.make.graphics({ x: 0, y: 0 }, false);
    const make = (key, w, h, draw) => {
      g.clear();
      draw(w, h);
      g.generateTexture(key, w, h);
    };

    make('hero', physics.player.w, physics.player.h, (w, h) => {
      g.fillStyle(shade('player', 30), 1).fillRoundedRect(0, 0, w, h, Math.min(6, w / 4));
      g.fillStyle(col('player'), 1).fillRoundedRect(2, 2, w - 4, h - 6, Math.min(5, w / 5));
      g.fillStyle(0xffffff, 1).fillRect(w * 0.5, h * 0.2, w * 0.3, h * 0.18);
      g.fillStyle(0x111111, 1).fillRect(w * 0.64, h * 0.24, w * 0.14, h * 0.12);
      g.fillStyle(shade('player', 45), 1).fillRect(w * 0.15, h - 6, w * 0.28, 6).fillRect(w * 0.57, h - 6, w * 0.28, 6);
    });
    const r = levels.coin_radius;
    make('coin', 2 * r, 2 * r, (w) => {
      g.fillStyle(shade('coin', 30), 1).fillCircle(w / 2, w / 2, w / 2);
      g.fillStyle(col('coin'), 1).fillCircle(w / 2, w / 2, w / 2 - 2);
      g.fillStyle(light('coin', 30), 1).fillRect(w / 2 - w / 10, w / 4, w / 5, w / 2);
    });
    make('dirt', LAYOUT.tile, LAYOUT.tile, (w, h) => {
      g.fillStyle(col('ground'), 1).fillRect(0, 0, w, h);
      g.fillStyle(shade('ground', 18), 1).fillRect(4, 6, 5, 4).fillRect(20, 14, 6, 4).fillRect(10, 24, 5, 4);
      g.fillStyle(light('ground', 8), 1).fillRect(24, 2, 4, 3).fillRect(2, 17, 4, 3);
    });
    make('grass', LAYOUT.tile, LAYOUT.grass, (w, h) => {
      g.fillStyle(col('ground_top'), 1).fillRect(0, 0, w, h);
      g.fillStyle(light('ground_top', 18), 1).fillRect(0, 0, w, 2);
      g.fillStyle(shade('ground_top', 25), 1).fillRect(6, h - 2, 4, 2).fillRect(22, h - 2, 4, 2);
    });
    make('spike', LAYOUT.spike, LAYOUT.spike, (w, h) => {
      g.fillStyle(col('hazard'), 1).fillTriangle(0, h, w / 2, 0, w, h);
      g.fillStyle(light('hazard', 25), 1).fillTriangle(w / 2, 2, w / 2 + 2, 6, w / 2 - 1, 6);
    });
    make('flag', LAYOUT.flag.w, LAYOUT.flag.h, (w, h) => {
      g.fillStyle(0xdddddd, 1).fillRect(2, 0, 4, h);
      g.fillStyle(col('flag'), 1).fillTriangle(6, 4, w, 14, 6, 26);
      g.fillStyle(shade('flag', 30), 1).fillRect(0, h - 4, 10, 4);
    });
    make('hill', LAYOUT.hill.w, LAYOUT.hill.h, (w, h) => {
      g.fillStyle(col('far'), 1).fillEllipse(w / 2, h, w, 2 * h);
    });
    make('cloud', LAYOUT.cloud.w, LAYOUT.cloud.h, (w, h) => {
      g.fillStyle(light('far', 6), 1).fillEllipse(w * 0.3, h * 0.62, w * 0.5, h * 0.7)
        .fillEllipse(w * 0.55, h * 0.45, w * 0.5, h * 0.9).fillEllipse(w * 0.75, h * 0.65, w * 0.45, h * 0.6);
    });
    make('spark', LAYOUT.spark, LAYOUT.spark, (w) => {
      g.fillStyle(light('coin', 20), 1).fillRect(0, 0, w, w);
    });
    g.destroy();
    this.scene.start('Menu');
  }
}
