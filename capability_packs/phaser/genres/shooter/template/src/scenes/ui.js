// Shared drawing helpers of the scenes: legible text that always fits its box, outlined cards.
import { hexToInt } from '../state.js';

export const FONT = 'Trebuchet MS, Verdana, sans-serif';
export const MIN_FONT = 12;

// A text object; `opts.maxWidth` shrinks the font (never below MIN_FONT) until the text fits, wrapping if it must.
export function label(scene, x, y, text, size, color, opts = {}) {
  const t = scene.add.text(x, y, text, {
    fontFamily: FONT, fontSize: `${size}px`, color, fontStyle: opts.bold ? 'bold' : '', align: opts.align || 'center',
  });
  if (opts.maxWidth) fit(t, size, opts.maxWidth, opts.maxLines || 1);
  if (opts.stroke) t.setStroke(opts.stroke, Math.max(2, Math.round(size / 6)));
  return t.setOrigin(opts.originX ?? 0.5, opts.originY ?? 0.5);
}

export function fit(t, size, maxWidth, maxLines = 1) {
  let s = size;
  if (maxLines > 1) t.setWordWrapWidth(maxWidth, true);
  const tooBig = () => (maxLines > 1 ? t.getWrappedText().length > maxLines : t.width > maxWidth);
  while (tooBig() && s > MIN_FONT) {
    s -= 1;
    t.setFontSize(`${s}px`);
  }
  return t;
}

// An outlined card with a filled heading band (software WebGL pays per drawn pixel: no large fills).
export function card(scene, cx, cy, w, h, band, fill, line) {
  const g = scene.add.graphics();
  const left = cx - w / 2;
  const top = cy - h / 2;
  g.fillStyle(hexToInt(fill), 1).fillRect(left, top, w, band);
  g.lineStyle(4, hexToInt(line), 1).strokeRect(left, top, w, h);
  return g;
}

// Listen for the start keys (and a click) once; `go` runs at most once.
export function onStart(scene, keys, go) {
  let done = false;
  const fire = () => {
    if (done) return;
    done = true;
    go();
  };
  scene.input.keyboard.on('keydown', (ev) => {
    if (!ev.repeat && keys.includes(ev.code === 'NumpadEnter' ? 'Enter' : ev.code)) fire();
  });
  scene.input.on('pointerdown', fire);
}
