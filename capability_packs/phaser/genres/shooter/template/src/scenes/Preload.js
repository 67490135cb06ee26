// Preload: loads the registered assets (assets/manifest.json, if any); every other texture is drawn here with Graphics + generateTexture.
// Sizes follow the data (hit radii), so what you see is what collides.
import Phaser from 'phaser';
import { queueAssets } from '../assets.js';
import { hexToInt } from '../state.js';

const PAD = 2;
const STAR = 2;
const SPARK = 6;
const PX = 4;

const shade = (hex, amount) => {
  const c = Phaser.Display.Color.IntegerToColor(hexToInt(hex));
  return amount < 0 ? c.darken(-amount).color : c.lighten(amount).color;
};

export default class Preload extends Phaser.Scene {
  constructor() {
    super('Preload');
  }

  preload() {
    queueAssets(this); // the registered assets (assets/manifest.json), under their ids
  }

  create() {
    const { theme, player, enemies } = this.registry.get('tables');
    const pal = theme.palette;
    const g = this.make.graphics({ x: 0, y: 0 }, false);
    this.ship(g, pal, player.radius);
    for (const e of enemies.enemies) {
      this.enemy(g, e);
      this.dot(g, `eshot-${e.id}`, e.shot_radius, pal.enemy_shot, '#ffffff');
      this.dot(g, `spark-${e.id}`, SPARK / 2, e.color, e.color);
    }
    g.clear();
    const sr = player.shot_radius;
    g.fillStyle(hexToInt(pal.shot), 1).fillRoundedRect(0, 0, sr * 2, sr * 4, sr);
    g.fillStyle(0xffffff, 0.9).fillRect(sr / 2, sr / 2, sr, sr * 2);
    g.generateTexture('shot', sr * 2, sr * 4);
    this.dot(g, 'spark-player', SPARK / 2, pal.player, pal.accent);
    this.dot(g, 'spark-shot', SPARK / 2, pal.shot, pal.shot);
    g.clear();
    g.fillStyle(hexToInt(pal.star), 1).fillRect(0, 0, STAR, STAR);
    g.generateTexture('star', STAR, STAR);
    for (const [k, v] of Object.entries(pal)) {
      g.clear();
      g.fillStyle(hexToInt(v), 1).fillRect(0, 0, PX, PX);
      g.generateTexture(`px-${k}`, PX, PX);
    }
    g.destroy();
    this.scene.start('Menu');
  }

  dot(g, key, r, fill, core) {
    g.clear();
    g.fillStyle(hexToInt(fill), 1).fillCircle(r + 1, r + 1, r);
    g.fillStyle(hexToInt(core), 0.85).fillCircle(r + 1, r + 1, Math.max(1, r / 2));
    g.generateTexture(key, 2 * r + 2, 2 * r + 2);
  }

  ship(g, pal, r) {
    const s = 2 * r + 2 * PAD;
    const c = s / 2;
    g.clear();
    g.fillStyle(shade(pal.player, -35), 1);
    g.fillTriangle(c - r, c + r * 0.8, c, c - r * 0.2, c + r, c + r * 0.8); // wings
    g.fillStyle(hexToInt(pal.player), 1);
    g.fillTriangle(c, c - r, c - r * 0.45, c + r, c + r * 0.45, c + r); // hull
    g.fillStyle(hexToInt(pal.accent), 1);
    g.fillEllipse(c, c + r * 0.05, r * 0.35, r * 0.6); // cockpit
    g.fillStyle(hexToInt(pal.shot), 1);
    g.fillRect(c - r * 0.3, c + r * 0.9, r * 0.6, r * 0.18); // engine glow
    g.generateTexture('ship', s, s);
  }

  enemy(g, e) {
    const r = e.radius;
    const s = 2 * r + 2 * PAD;
    const c = s / 2;
    const base = hexToInt(e.color);
    const dark = shade(e.color, -40);
    const light = shade(e.color, 25);
    g.clear();
    g.fillStyle(base, 1);
    if (e.shape === 'dart') {
      g.fillTriangle(c - r, c - r * 0.7, c + r, c - r * 0.7, c, c + r);
      g.fillStyle(dark, 1).fillTriangle(c - r * 0.35, c - r * 0.7, c + r * 0.35, c - r * 0.7, c, c + r * 0.2);
    } else if (e.shape === 'saucer') {
      g.fillEllipse(c, c + r * 0.15, 2 * r, r * 0.9);
      g.fillStyle(light, 1).fillEllipse(c, c - r * 0.2, r, r * 0.8);
      g.fillStyle(dark, 1);
      for (const dx of [-0.55, 0, 0.55]) g.fillCircle(c + dx * r, c + r * 0.2, r * 0.12);
    } else if (e.shape === 'crab') {
      const u = r / 4;
      g.fillRect(c - 3 * u, c - 2 * u, 6 * u, 4 * u);
      g.fillRect(c - 4 * u, c - u, u, 3 * u).fillRect(c + 3 * u, c - u, u, 3 * u);
      g.fillRect(c - 2 * u, c - 3 * u, u, u).fillRect(c + u, c - 3 * u, u, u);
      g.fillRect(c - 3 * u, c + 2 * u, u, u * 1.5).fillRect(c + 2 * u, c + 2 * u, u, u * 1.5);
      g.fillStyle(dark, 1).fillRect(c - 1.8 * u, c - u, u, u).fillRect(c + 0.8 * u, c - u, u, u);
    } else if (e.shape === 'orb') {
      g.fillCircle(c, c, r);
      g.fillStyle(0xffffff, 1).fillCircle(c, c + r * 0.1, r * 0.45);
      g.fillStyle(dark, 1).fillCircle(c, c + r * 0.2, r * 0.22);
    } else if (e.shape === 'wing') {
      g.fillTriangle(c - r, c - r * 0.6, c, c + r * 0.1, c - r * 0.2, c + r * 0.7);
      g.fillTriangle(c + r, c - r * 0.6, c, c + r * 0.1, c + r * 0.2, c + r * 0.7);
      g.fillStyle(dark, 1).fillEllipse(c, c, r * 0.5, r * 1.2);
    } else {
      // rock: a lumpy polygon whose corners come from the id (deterministic, no Math.random)
      const pts = [];
      const n = 9;
      for (let i = 0; i < n; i++) {
        const code = e.id.charCodeAt(i % e.id.length);
        const k = 0.72 + ((code * (i + 3)) % 28) / 100;
        const a = (i / n) * Math.PI * 2;
        pts.push(new Phaser.Geom.Point(c + Math.cos(a) * r * k, c + Math.sin(a) * r * k));
      }
      g.fillPoints(pts, true);
      g.fillStyle(dark, 1).fillCircle(c - r * 0.3, c - r * 0.2, r * 0.2).fillCircle(c + r * 0.25, c + r * 0.3, r * 0.15);
    }
    g.generateTexture(`enemy-${e.id}`, s, s);
  }
}
