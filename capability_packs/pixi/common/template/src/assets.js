// Registered assets (assets/manifest.json, written by tier2's RequestAsset tool; the build copies them to
// dist/assets/). Preload loads every one under its id; the scenes draw an entity of a role with the role's asset
// when one is registered (skin: a Sprite at the drawn shape's size) and keep their drawn shapes otherwise; the hook
// reports which asset each role's display objects use (window.__TIER2__.assets()). The same file in every genre
// template of the pack.
import { Assets, Sprite } from 'pixi.js';
import manifest from '../assets/manifest.json';

const KEY = /^[a-z][a-z0-9_]{0,31}\.[a-z0-9][a-z0-9_]{0,47}$/;
const ROLES = ['player', 'enemy', 'pickup', 'goods', 'customer', 'obstacle', 'backdrop', 'sound'];
const MAX_ASSETS = 24;
const failed = [];
const loaded = new Map(); // id -> Texture (a sound: true)

const fileOf = (a) => `assets/${a.id}.${a.role === 'sound' ? 'wav' : 'png'}`;

export const registered = (manifest && Array.isArray(manifest.assets) ? manifest.assets : [])
  .filter((a) => a && typeof a.id === 'string' && KEY.test(a.id) && ROLES.includes(a.role)
    && a.id.split('.')[0] === a.role && a.file === fileOf(a))
  .slice(0, MAX_ASSETS);

// In Preload: load every registered asset under its id (a sound as bytes: the games are silent).
export async function loadAssets() {
  await Promise.all(registered.map(async (a) => {
    try {
      if (a.role === 'sound') {
        const res = await fetch(a.file);
        if (!res.ok) throw new Error(String(res.status));
        loaded.set(a.id, true);
      } else {
        loaded.set(a.id, await Assets.load({ alias: a.id, src: a.file }));
      }
    } catch (e) {
      if (!failed.includes(a.id)) failed.push(a.id);
    }
  }));
}

// The loaded asset ids of a role, in manifest order.
export const assetsFor = (role) => registered.filter((a) => a.role === role && loaded.has(a.id)).map((a) => a.id);

// Tag a drawn shape with its role; with a registered asset for the role (the i-th, cycling), a Sprite of that asset
// at the shape's size and place takes its place in the parent (what collides stays what is seen) and is returned.
// ``distinct``: only the i-th asset itself (kinds that must look different keep their drawn shapes).
export function skin(shape, role, i = 0, distinct = false) {
  shape.tier2Role = role;
  const ids = assetsFor(role);
  if (!ids.length || (distinct && ids.length <= i)) return shape;
  const id = ids[((i % ids.length) + ids.length) % ids.length];
  const b = shape.getLocalBounds();
  const sprite = new Sprite(loaded.get(id));
  sprite.tier2Role = role;
  sprite.tier2Asset = id;
  sprite.width = Math.max(1, b.width);
  sprite.height = Math.max(1, b.height);
  sprite.position.set(shape.x + b.x, shape.y + b.y);
  if (shape.parent) {
    shape.parent.addChildAt(sprite, shape.parent.getChildIndex(shape));
    shape.parent.removeChild(shape);
  }
  return sprite;
}

// A full-view backdrop from the registered backdrop asset (dimmed so texts stay legible); null without one.
export function addBackdrop(scene, width, height) {
  const ids = assetsFor('backdrop');
  if (!ids.length) return null;
  const img = new Sprite(loaded.get(ids[0]));
  img.width = width;
  img.height = height;
  img.alpha = 0.35;
  img.tier2Role = 'backdrop';
  img.tier2Asset = ids[0];
  scene.addChildAt(img, 0);
  return img;
}

// What the hook reports: registered ids, which loaded, which failed, and role -> asset ids in use on screen.
export function assetReport(game) {
  const roles = {};
  const visit = (o) => {
    if (!o || o.visible === false) return;
    if (o.tier2Role && o.tier2Asset) {
      const seen = roles[o.tier2Role] || (roles[o.tier2Role] = []);
      if (!seen.includes(o.tier2Asset)) seen.push(o.tier2Asset);
    }
    (o.children || []).forEach(visit);
  };
  if (game.booted) visit(game.app.stage);
  return { registered: registered.map((a) => a.id), loaded: registered.filter((a) => loaded.has(a.id)).map((a) => a.id),
    failed: failed.slice(), roles };
}
