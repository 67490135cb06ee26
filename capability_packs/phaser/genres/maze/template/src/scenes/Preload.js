// Preload: loads the registered assets (assets/manifest.json, if any); every other texture is drawn here with Graphics + generateTexture (TILE px square,
// scaled to the maze's cell size in Play).
import Phaser from 'phaser';
import { queueAssets } from '../assets.js';
import { hexToInt } from '../state.js';

export const TILE = 32;
const SIZE = { px: 4, spark: 8 };

export default class Preload extends Phaser.Scene {
  constructor() {
    super('Preload');
  }

  preload() {
    queueAssets(this); // the registered assets (assets/manifest.json), under their ids
  }

  create() {
    const pal = Object.fromEntries(Object.entries(this.registry.get('tables').theme.palette).map(([k, v]) => [k, hexToInt(v)]));
    const g = this.make.graphics({ x: 0, y: 0 }, false);
    const draw = (key, fn, size = TILE) => { g.clear(); fn(g); g.generateTexture(key, size, size); };
    for (const [k, v] of Object.entries(pal)) draw(`px-${k}`, (q) => q.fillStyle(v, 1).fillRect(0, 0, SIZE.px, SIZE.px), SIZE.px);
    draw('spark', (q) => q.fillStyle(pal.accent, 1).fillCircle(SIZE.spark / 2, SIZE.spark / 2, SIZE.spark / 2), SIZE.spark);
    const t = TILE;
    const dark = (c, by) => Phaser.Display.Color.IntegerToColor(c).darken(by).color;
    draw('hero', (q) => {
      q.fillStyle(dark(pal.accent, 30), 1).fillCircle(t / 2, t / 2, t / 2 - 2);
      q.fillStyle(pal.text, 1).fillCircle(t / 2, t / 2, t / 2 - 5);
      q.fillStyle(pal.background, 1).fillCircle(t / 2 - 5, t / 2 - 3, 2.5).fillCircle(t / 2 + 5, t / 2 - 3, 2.5);
      q.fillStyle(pal.accent, 1).fillRect(t / 2 - 5, t / 2 + 5, 10, 3);
    });
    draw('gem', (q) => {
      q.fillStyle(dark(pal.accent, 35), 1).fillTriangle(t / 2, 3, t - 6, t / 2, t / 2, t - 3).fillTriangle(t / 2, 3, 6, t / 2, t / 2, t - 3);
      q.fillStyle(pal.accent, 1).fillTriangle(t / 2, 6, t - 9, t / 2, t / 2, t - 6).fillTriangle(t / 2, 6, 9, t / 2, t / 2, t - 6);
      q.fillStyle(pal.text, 0.8).fillTriangle(t / 2, 8, t / 2 - 5, t / 2, t / 2 - 1, t / 2);
    });
    draw('hazard', (q) => {
      q.fillStyle(dark(pal.bad, 45), 1).fillRect(3, 3, t - 6, t - 6);
      q.fillStyle(pal.bad, 1);
      for (let i = 0; i < 3; i++) q.fillTriangle(5 + i * 8, t - 7, 9 + i * 8, 7, 13 + i * 8, t - 7);
    });
    draw('enemy', (q) => {
      q.fillStyle(pal.bad, 1).fillCircle(t / 2, t / 2 - 2, t / 2 - 5).fillRect(5, t / 2 - 2, t - 10, t / 2 - 3);
      q.fillStyle(pal.background, 1).fillTriangle(5, t - 5, 10, t - 9, 15, t - 5).fillTriangle(17, t - 5, 22, t - 9, 27, t - 5);
      q.fillStyle(pal.text, 1).fillCircle(t / 2 - 5, t / 2 - 3, 4).fillCircle(t / 2 + 5, t / 2 - 3, 4);
      q.fillStyle(pal.background, 1).fillCircle(t / 2 - 4, t / 2 - 2, 2).fillCircle(t / 2 + 6, t / 2 - 2, 2);
    });
    draw('exit-closed', (q) => {
      q.fillStyle(pal.panel, 1).fillRect(4, 2, t - 8, t - 2);
      q.lineStyle(2, pal.bad, 1).strokeRect(4, 2, t - 8, t - 2);
      q.fillStyle(pal.bad, 1);
      for (let i = 0; i < 3; i++) q.fillRect(9 + i * 6, 4, 2, t - 4);
    });
    draw('exit-open', (q) => {
      q.fillStyle(dark(pal.good, 40), 1).fillRect(4, 2, t - 8, t - 2);
      q.lineStyle(2, pal.good, 1).strokeRect(4, 2, t - 8, t - 2);
      q.fillStyle(pal.good, 1).fillTriangle(11, 9, t - 10, t / 2, 11, t - 9);
    });
    draw('heart', (q) => {
      q.fillStyle(pal.bad, 1).fillCircle(11, 12, 6).fillCircle(21, 12, 6).fillTriangle(5, 14, 27, 14, 16, 27);
    });
    g.destroy();
    this.scene.start('Menu');
  }
}
