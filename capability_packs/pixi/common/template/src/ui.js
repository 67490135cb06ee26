// Drawing helpers shared by every genre's scenes (no rules here: those live in state.js).
import { Graphics, Text } from 'pixi.js';

export const FONT = 'Trebuchet MS, Verdana, sans-serif';
export const hex = (c) => parseInt(String(c).slice(1), 16);

// A text at (x, y) with its anchor at `ax, ay` (0: left/top, 0.5: centre), added to `parent`.
export function text(parent, x, y, s, size, color, opts = {}) {
  const t = new Text({ text: s, style: {
    fontFamily: FONT, fontSize: size, fill: color, fontWeight: opts.bold ? 'bold' : 'normal', align: opts.align || 'left',
    wordWrap: !!opts.wrap, wordWrapWidth: opts.wrap || 0,
  } });
  t.anchor.set(opts.ax ?? 0, opts.ay ?? 0);
  t.position.set(x, y);
  parent.addChild(t);
  return t;
}

// Shrinks a text's font until it fits `maxW` pixels (never below `minSize`): long names never overrun a panel.
export function fitText(t, maxW, minSize = 12) {
  let size = Number(t.style.fontSize);
  while (t.width > maxW && size > minSize) {
    size -= 1;
    t.style.fontSize = size;
  }
  return t;
}

// Sets a text's content (and colour) only when it changes: a canvas text re-render costs a texture upload.
export function put(t, s, color) {
  if (t.text !== s) t.text = s;
  if (color && t.style.fill !== color) t.style.fill = color;
  return t;
}

// An outlined card with a filled band on top, centred on (cx, cy).
export function card(parent, pal, cx, cy, w, h, band, edge) {
  const g = new Graphics();
  const left = cx - w / 2;
  const top = cy - h / 2;
  g.rect(left, top, w, band).fill(hex(pal.panel));
  g.rect(left, top, w, h).stroke({ width: 4, color: hex(edge) });
  parent.addChild(g);
  return g;
}

// Start / back input: a keydown of one of `codes` or a click anywhere calls `fn` once.
export function onStartInput(scene, codes, fn) {
  let done = false;
  const go = () => { if (!done) { done = true; fn(); } };
  scene.onKey = (ev) => { if (!ev.repeat && codes.includes(ev.code)) go(); };
  const stage = scene.game.app.stage;
  stage.on('pointerdown', go);
  scene.on('destroyed', () => stage.off('pointerdown', go));
}
