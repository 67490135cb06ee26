// Shared drawing helpers of the scenes (no rules here: those live in state.js).
import { hexToInt } from './state.js';

export const FONT = 'Trebuchet MS, Verdana, sans-serif';

export function text(scene, x, y, s, size, color, opts = {}) {
  return scene.add.text(x, y, s, {
    fontFamily: FONT, fontSize: `${size}px`, color, fontStyle: opts.bold ? 'bold' : '', align: opts.align || 'left',
    wordWrap: opts.wrap ? { width: opts.wrap } : undefined,
  });
}

// Shrinks a text's font until it fits `maxW` pixels (never below `minSize`): long names never overrun a panel.
export function fitText(t, maxW, minSize = 12) {
  let size = parseInt(t.style.fontSize, 10);
  while (t.width > maxW && size > minSize) {
    size -= 1;
    t.setFontSize(size);
  }
  return t;
}

// An outlined card with a filled band on top (software WebGL pays per drawn pixel: no big fills).
export function card(scene, pal, cx, cy, w, h, band, edge) {
  const g = scene.add.graphics();
  const left = cx - w / 2;
  const top = cy - h / 2;
  g.fillStyle(hexToInt(pal.panel), 1).fillRect(left, top, w, band);
  g.lineStyle(4, hexToInt(edge), 1).strokeRect(left, top, w, h);
  return g;
}

// Start / back keys: a keydown of one of `codes` or a click calls `fn` once.
export function onStartInput(scene, codes, fn) {
  let done = false;
  const go = () => { if (!done) { done = true; fn(); } };
  scene.input.keyboard.on('keydown', (ev) => { if (!ev.repeat && codes.includes(ev.code)) go(); });
  scene.input.on('pointerdown', go);
}
