// The pack's scene runtime over a PixiJS 8 Application (the same in every genre template): a Game holds the app,
// the registry (tables, state) and one active Scene at a time — Boot, Preload, Menu, Play, GameOver, the scene
// names of contract 2 —; it routes the keyboard to the active scene (onKey, onKeyUp), ticks it once per frame of
// the app's ticker (what window.__tier2Clock drives in validation) and counts frames. Scenes are Containers: they draw with
// Graphics, Text and Sprites, listen to pointer events on their objects and animate with tween().
import { Application, Container } from 'pixi.js';

export const WIDTH = 800;
export const HEIGHT = 600;
const CAPTURED = new Set(['Space', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight']);

// ?renderer=canvas | webgl (the validator's two sessions); anything else: PixiJS's own choice
function preference() {
  const wanted = new URLSearchParams(window.location.search).get('renderer');
  return wanted === 'canvas' || wanted === 'webgl' ? wanted : undefined;
}

const ease = (t) => 0.5 - Math.cos(Math.PI * t) / 2;

export class Scene extends Container {
  constructor(key) {
    super();
    this.key = key;
    this.label = key;
    this.tweens = [];
  }

  get registry() {
    return this.game.registry;
  }

  // Animate numeric fields of `target` (dotted keys reach one level down: 'scale.x') to `to` over `ms`.
  tween(target, to, ms, opts = {}) {
    const from = {};
    for (const k of Object.keys(to)) from[k] = get(target, k);
    const tw = { target, from, to, ms: Math.max(1, ms), t: -(opts.delay || 0), yoyo: !!opts.yoyo,
      repeat: opts.repeat || 0, onComplete: opts.onComplete || null, dir: 1 };
    this.tweens.push(tw);
    return tw;
  }

  killTweensOf(target) {
    this.tweens = this.tweens.filter((tw) => tw.target !== target);
  }

  tick(dtMs) {
    for (const tw of this.tweens.slice()) {
      tw.t += dtMs;
      if (tw.t < 0) continue;
      let p = Math.min(1, tw.t / tw.ms);
      if (tw.dir < 0) p = 1 - p;
      for (const k of Object.keys(tw.to)) set(tw.target, k, tw.from[k] + (tw.to[k] - tw.from[k]) * ease(p));
      if (tw.t < tw.ms) continue;
      if (tw.yoyo && tw.dir > 0) { tw.dir = -1; tw.t = 0; continue; }
      if (tw.repeat !== 0) { tw.repeat -= tw.repeat > 0 ? 1 : 0; tw.dir = 1; tw.t = 0; continue; }
      this.tweens.splice(this.tweens.indexOf(tw), 1);
      if (tw.onComplete) tw.onComplete();
    }
    if (this.update) this.update(dtMs);
  }
}

function get(o, k) {
  const [a, b] = k.split('.');
  return b ? o[a][b] : o[a];
}
function set(o, k, v) {
  const [a, b] = k.split('.');
  if (b) o[a][b] = v; else o[a] = v;
}

export class Game {
  constructor({ background, scenes }) {
    this.app = new Application();
    this.background = background;
    this.sceneClasses = scenes;
    this.registry = new Map();
    this.current = null;
    this.booted = false;
    this.frames = 0;
    this.scenes = { active: () => (this.current ? [this.current.key] : []), start: (key) => this.start(key) };
  }

  frame() {
    return this.frames;
  }

  async boot(parent) {
    await this.app.init({ width: WIDTH, height: HEIGHT, background: this.background, preference: preference(),
      preserveDrawingBuffer: true, antialias: true, resolution: 1, autoDensity: false });
    const canvas = this.app.canvas;
    canvas.style.width = '100%';
    canvas.style.height = '100%';
    canvas.style.objectFit = 'contain';
    parent.appendChild(canvas);
    this.app.stage.eventMode = 'static';
    this.app.stage.hitArea = this.app.screen;
    window.addEventListener('keydown', (ev) => {
      if (CAPTURED.has(ev.code)) ev.preventDefault();
      if (this.current && this.current.onKey) this.current.onKey(ev);
    });
    window.addEventListener('keyup', (ev) => {
      if (this.current && this.current.onKeyUp) this.current.onKeyUp(ev);
    });
    this.app.ticker.add((ticker) => {
      this.frames += 1;
      if (this.current) this.current.tick(ticker.deltaMS);
    });
    this.booted = true;
    this.start('Boot');
  }

  start(key) {
    const Cls = this.sceneClasses.find((c) => c.KEY === key);
    if (!Cls) throw new Error(`tier2: no scene ${key}`);
    if (this.current) {
      this.app.stage.removeChild(this.current);
      this.current.destroy({ children: true });
    }
    const scene = new Cls(key);
    scene.game = this;
    this.current = scene;
    this.app.stage.addChild(scene);
    scene.create();
  }
}
