// The shooter's pieces drawn with Graphics, centred on (0, 0). Sizes follow the data (hit radii), so what you see
// is what collides: the ship, each enemy shape, shots and sparks.
import { Graphics } from 'pixi.js';
import { hex } from './ui.js';

const shade = (c, amount) => {
  const ch = [(c >> 16) & 255, (c >> 8) & 255, c & 255]
    .map((v) => Math.round(amount < 0 ? v * (1 + amount / 100) : v + (255 - v) * (amount / 100)));
  return (ch[0] << 16) | (ch[1] << 8) | ch[2];
};

export function ship(pal, r) {
  const g = new Graphics();
  g.poly([-r, r * 0.8, 0, -r * 0.2, r, r * 0.8]).fill(shade(hex(pal.player), -35)); // wings
  g.poly([0, -r, -r * 0.45, r, r * 0.45, r]).fill(hex(pal.player)); // hull
  g.ellipse(0, r * 0.05, r * 0.35, r * 0.6).fill(hex(pal.accent)); // cockpit
  g.rect(-r * 0.3, r * 0.9, r * 0.6, r * 0.18).fill(hex(pal.shot)); // engine glow
  return g;
}

export function enemy(e) {
  const r = e.radius;
  const base = hex(e.color);
  const dark = shade(base, -40);
  const light = shade(base, 25);
  const g = new Graphics();
  if (e.shape === 'dart') {
    g.poly([-r, -r * 0.7, r, -r * 0.7, 0, r]).fill(base);
    g.poly([-r * 0.35, -r * 0.7, r * 0.35, -r * 0.7, 0, r * 0.2]).fill(dark);
  } else if (e.shape === 'saucer') {
    g.ellipse(0, r * 0.15, r, r * 0.45).fill(base).ellipse(0, -r * 0.2, r / 2, r * 0.4).fill(light);
    for (const dx of [-0.55, 0, 0.55]) g.circle(dx * r, r * 0.2, r * 0.12);
    g.fill(dark);
  } else if (e.shape === 'crab') {
    const u = r / 4;
    g.rect(-3 * u, -2 * u, 6 * u, 4 * u).rect(-4 * u, -u, u, 3 * u).rect(3 * u, -u, u, 3 * u)
      .rect(-2 * u, -3 * u, u, u).rect(u, -3 * u, u, u).rect(-3 * u, 2 * u, u, u * 1.5).rect(2 * u, 2 * u, u, u * 1.5).fill(base);
    g.rect(-1.8 * u, -u, u, u).rect(0.8 * u, -u, u, u).fill(dark);
  } else if (e.shape === 'orb') {
    g.circle(0, 0, r).fill(base).circle(0, r * 0.1, r * 0.45).fill(0xffffff).circle(0, r * 0.2, r * 0.22).fill(dark);
  } else if (e.shape === 'wing') {
    g.poly([-r, -r * 0.6, 0, r * 0.1, -r * 0.2, r * 0.7]).poly([r, -r * 0.6, 0, r * 0.1, r * 0.2, r * 0.7]).fill(base);
    g.ellipse(0, 0, r * 0.25, r * 0.6).fill(dark);
  } else {
    // rock: a lumpy polygon whose corners come from the id (deterministic, no Math.random)
    const pts = [];
    const n = 9;
    for (let i = 0; i < n; i++) {
      const code = e.id.charCodeAt(i % e.id.length);
      const k = 0.72 + ((code * (i + 3)) % 28) / 100;
      const a = (i / n) * Math.PI * 2;
      pts.push(Math.cos(a) * r * k, Math.sin(a) * r * k);
    }
    g.poly(pts).fill(base).circle(-r * 0.3, -r * 0.2, r * 0.2).circle(r * 0.25, r * 0.3, r * 0.15).fill(dark);
  }
  return g;
}

export function dot(r, fill, core) {
  return new Graphics().circle(0, 0, r).fill(hex(fill)).circle(0, 0, Math.max(1, r / 2)).fill({ color: hex(core), alpha: 0.85 });
}

export function shot(pal, r) {
  return new Graphics().roundRect(-r, -2 * r, r * 2, r * 4, r).fill(hex(pal.shot))
    .rect(-r / 2, -1.5 * r, r, r * 2).fill({ color: 0xffffff, alpha: 0.9 });
}
