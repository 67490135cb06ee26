// Registered assets (assets/manifest.json, written by tier2's RequestAsset tool; the build copies them to
// dist/assets/). Preload queues every one under its id; the scenes skin an entity of a role with the role's asset
// when one is registered and keep their drawn shapes otherwise; the hook reports which texture each role's display
// objects use (window.__TIER2__.assets()). The same file in every genre template of the pack.
import manifest from '../assets/manifest.json';

const KEY = /^[a-z][a-z0-9_]{0,31}\.[a-z0-9][a-z0-9_]{0,47}$/;
const ROLES = ['player', 'enemy', 'pickup', 'goods', 'customer', 'obstacle', 'backdrop', 'sound'];
const MAX_ASSETS = 24;
const failed = [];

const fileOf = (a) => `assets/${a.id}.${a.role === 'sound' ? 'wav' : 'png'}`;

export const registered = (manifest && Array.isArray(manifest.assets) ? manifest.assets : [])
  .filter((a) => a && typeof a.id === 'string' && KEY.test(a.id) && ROLES.includes(a.role)
    && a.id.split('.')[0] === a.role && a.file === fileOf(a))
  .slice(0, MAX_ASSETS);

// In a scene's preload(): load every registered asset under its id (a sound as bytes: the games run noAudio).
export function queueAssets(scene) {
  if (!registered.length) return;
  scene.load.on('loaderror', (file) => {
    if (!failed.includes(file.key)) failed.push(file.key);
  });
  for (const a of registered) {
    if (a.role === 'sound') scene.load.binary(a.id, a.file);
    else scene.load.image(a.id, a.file);
  }
}

// The loaded asset keys of a role, in manifest order.
export function assetsFor(scene, role) {
  return registered.filter((a) => a.role === role && scene.textures.exists(a.id)).map((a) => a.id);
}

// Tag a display object with its role; with a registered asset for the role (the i-th, cycling), draw it with that
// asset at the size its drawn shape had when first skinned (what collides stays what is seen). Call it again after
// a setTexture of the drawn shape (the object keeps its first size). ``distinct``: only the i-th asset itself (kinds
// that must look different, e.g. a puzzle's tiles, keep their drawn shapes when fewer assets are registered).
export function skin(obj, role, i = 0, distinct = false) {
  obj.tier2Role = role;
  const keys = assetsFor(obj.scene, role);
  if (!keys.length || (distinct && keys.length <= i)) return obj;
  if (!obj.tier2Size) obj.tier2Size = [obj.displayWidth, obj.displayHeight];
  obj.setTexture(keys[((i % keys.length) + keys.length) % keys.length]);
  return obj.setDisplaySize(obj.tier2Size[0], obj.tier2Size[1]);
}

// A full-view backdrop from the registered backdrop asset (dimmed so texts stay legible); null without one.
export function addBackdrop(scene, width, height, depth) {
  const keys = assetsFor(scene, 'backdrop');
  if (!keys.length) return null;
  const img = scene.add.image(width / 2, height / 2, keys[0]).setDisplaySize(width, height).setDepth(depth)
    .setAlpha(0.35);
  img.tier2Role = 'backdrop';
  return img;
}

// What the hook reports: registered ids, which loaded, which failed, and role -> texture keys in use on screen.
export function assetReport(game) {
  const roles = {};
  const visit = (o) => {
    if (!o) return;
    if (Array.isArray(o.list)) o.list.forEach(visit);
    if (o.tier2Role && o.active !== false && o.visible !== false && o.texture && o.texture.key) {
      const seen = roles[o.tier2Role] || (roles[o.tier2Role] = []);
      if (!seen.includes(o.texture.key)) seen.push(o.texture.key);
    }
  };
  const mgr = game.scene;
  for (const s of mgr && mgr.isBooted ? mgr.getScenes(true) : []) s.children.list.forEach(visit);
  const loaded = registered.filter((a) => (a.role === 'sound' ? game.cache.binary.exists(a.id)
    : game.textures.exists(a.id))).map((a) => a.id);
  return { registered: registered.map((a) => a.id), loaded, failed: failed.slice(), roles };
}
