// Preload: loads the registered assets (assets/manifest.json, if any); every other texture is drawn here with Graphics + generateTexture.
// One texture per tile kind (a plate and a shape, so kinds differ by shape as well as colour).
import Phaser from 'phaser';
import { queueAssets } from '../assets.js';
import { hexToInt } from '../state.js';

export const TILE_PX = 64;
const SPARK = 8;
const PX = 4;

function polygon(cx, cy, r, n, turn, inner = 0) {
  const pts = [];
  const count = inner ? n * 2 : n;
  for (let i = 0; i < count; i++) {
    const a = turn + (i * Math.PI * 2) / count;
    const rr = inner && i % 2 ? inner : r;
    pts.push(new Phaser.Geom.Point(cx + Math.cos(a) * rr, cy + Math.sin(a) * rr));
  }
  return pts;
}

export default class Preload extends Phaser.Scene {
  constructor() {
    super('Preload');
  }

  preload() {
    queueAssets(this); // the registered assets (assets/manifest.json), under their ids
  }

  create() {
    const { board, theme } = this.registry.get('tables');
    const g = this.make.graphics({ x: 0, y: 0 }, false);
    board.kinds.forEach((k, i) => this.tileTexture(g, k, `tile-${i}`));
    for (const [k, v] of Object.entries(theme.palette)) {
      g.clear();
      g.fillStyle(hexToInt(v), 1).fillRect(0, 0, PX, PX);
      g.generateTexture(`px-${k}`, PX, PX);
    }
    g.clear();
    g.fillStyle(0xffffff, 1).fillCircle(SPARK / 2, SPARK / 2, SPARK / 2);
    g.generateTexture('spark', SPARK, SPARK);
    g.destroy();
    this.scene.start('Menu');
  }

  tileTexture(g, kind, key) {
    const s = TILE_PX;
    const c = s / 2;
    const r = s * 0.34;
    const base = Phaser.Display.Color.IntegerToColor(hexToInt(kind.color));
    const dark = base.clone().darken(45).color;
    const light = base.clone().lighten(25).color;
    g.clear();
    g.fillStyle(dark, 1).fillRoundedRect(2, 2, s - 4, s - 4, 12);
    g.fillStyle(base.color, 1);
    switch (kind.shape) {
      case 'circle': g.fillCircle(c, c, r); break;
      case 'diamond': g.fillPoints(polygon(c, c, r * 1.15, 4, -Math.PI / 2), true); break;
      case 'square': g.fillRect(c - r * 0.85, c - r * 0.85, r * 1.7, r * 1.7); break;
      case 'triangle': g.fillPoints(polygon(c, c + r * 0.15, r * 1.1, 3, -Math.PI / 2), true); break;
      case 'hexagon': g.fillPoints(polygon(c, c, r, 6, 0), true); break;
      case 'star': g.fillPoints(polygon(c, c, r * 1.15, 5, -Math.PI / 2, r * 0.5), true); break;
      case 'ring':
        g.fillCircle(c, c, r);
        g.fillStyle(dark, 1).fillCircle(c, c, r * 0.45);
        break;
      default: // cross
        g.fillRect(c - r * 0.35, c - r, r * 0.7, r * 2);
        g.fillRect(c - r, c - r * 0.35, r * 2, r * 0.7);
    }
    g.fillStyle(light, 0.9).fillCircle(c - r * 0.35, c - r * 0.35, r * 0.18);
    g.generateTexture(key, s, s);
  }
}
