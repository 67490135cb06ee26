// The maze's pieces drawn with Graphics, TILE px square centred on (0, 0) (scaled to the cell size in Play): the
// hero, a gem, a hazard, an enemy, the exit (closed / open) and a heart.
import { Graphics } from 'pixi.js';
import { hex } from './ui.js';

export const TILE = 32;

const darken = (c, by) => {
  const f = 1 - by / 100;
  return (Math.round(((c >> 16) & 255) * f) << 16) | (Math.round(((c >> 8) & 255) * f) << 8) | Math.round((c & 255) * f);
};

export function piece(kind, palette) {
  const pal = Object.fromEntries(Object.entries(palette).map(([k, v]) => [k, hex(v)]));
  const t = TILE;
  const h = t / 2;
  const g = new Graphics();
  if (kind === 'hero') {
    g.circle(0, 0, h - 2).fill(darken(pal.accent, 30)).circle(0, 0, h - 5).fill(pal.text);
    g.circle(-5, -3, 2.5).circle(5, -3, 2.5).fill(pal.background).rect(-5, 5, 10, 3).fill(pal.accent);
  } else if (kind === 'gem') {
    g.poly([0, 3 - h, h - 6, 0, 0, h - 3, 6 - h, 0]).fill(darken(pal.accent, 35));
    g.poly([0, 6 - h, h - 9, 0, 0, h - 6, 9 - h, 0]).fill(pal.accent);
    g.poly([0, 8 - h, -5, 0, -1, 0]).fill({ color: pal.text, alpha: 0.8 });
  } else if (kind === 'hazard') {
    g.rect(3 - h, 3 - h, t - 6, t - 6).fill(darken(pal.bad, 45));
    for (let i = 0; i < 3; i++) g.poly([5 + i * 8 - h, h - 7, 9 + i * 8 - h, 7 - h, 13 + i * 8 - h, h - 7]);
    g.fill(pal.bad);
  } else if (kind === 'enemy') {
    g.circle(0, -2, h - 5).rect(5 - h, -2, t - 10, h - 3).fill(pal.bad);
    g.poly([5 - h, h - 5, 10 - h, h - 9, 15 - h, h - 5]).poly([17 - h, h - 5, 22 - h, h - 9, 27 - h, h - 5]).fill(pal.background);
    g.circle(-5, -3, 4).circle(5, -3, 4).fill(pal.text).circle(-4, -2, 2).circle(6, -2, 2).fill(pal.background);
  } else if (kind === 'exit-closed') {
    g.rect(4 - h, 2 - h, t - 8, t - 2).fill(pal.panel).stroke({ width: 2, color: pal.bad });
    for (let i = 0; i < 3; i++) g.rect(9 + i * 6 - h, 4 - h, 2, t - 4);
    g.fill(pal.bad);
  } else if (kind === 'exit-open') {
    g.rect(4 - h, 2 - h, t - 8, t - 2).fill(darken(pal.good, 40)).stroke({ width: 2, color: pal.good });
    g.poly([11 - h, 9 - h, h - 10, 0, 11 - h, h - 9]).fill(pal.good);
  } else if (kind === 'heart') {
    g.circle(11 - h, 12 - h, 6).circle(21 - h, 12 - h, 6).poly([5 - h, 14 - h, 27 - h, 14 - h, 0, 27 - h]).fill(pal.bad);
  } else {
    throw new Error(`tier2: no maze piece ${kind}`);
  }
  return g;
}
