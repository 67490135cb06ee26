// Presentation helpers shared by the scenes (no game rules here).
import { ACTIONS, START_KEYS } from './state.js';

export const FONT = 'Trebuchet MS, Verdana, sans-serif';
const KEY_NAMES = { ArrowLeft: '←', ArrowRight: '→', ArrowUp: '↑', ArrowDown: '↓', Escape: 'Esc', Space: 'Space', Enter: 'Enter' };

export const keyLabel = (code) => KEY_NAMES[code] || code.replace(/^Key/, '').replace(/^Digit/, '');
export const keysLabel = (keys) => keys.map(keyLabel).join('/');

// "←/A run left · →/D run right · Space/↑/W jump · Esc quit to menu" — from the action table, never typed by hand.
export function controlsHint(names = ['left', 'right', 'jump', 'abandon']) {
  return names.map((n) => `${keysLabel(ACTIONS[n].keys)} ${ACTIONS[n].label}`).join('  ·  ');
}

export const startHint = (what) => `${START_KEYS.map(keyLabel).join(' / ')} / click: ${what}`;

export const hexToInt = (hex) => parseInt(String(hex).slice(1), 16);

export function fillText(template, vars) {
  return String(template).replace(/\{(\w+)\}/g, (m, k) => (vars[k] !== undefined ? String(vars[k]) : m));
}

// Shrink a text's font (down to minPx) and then cut it with an ellipsis until it is at most maxW wide.
export function fitText(t, maxW, minPx = 12) {
  let size = parseInt(t.style.fontSize, 10);
  while (t.width > maxW && size > minPx) {
    size -= 1;
    t.setFontSize(size);
  }
  let s = t.text;
  while (t.width > maxW && s.length > 1) {
    s = s.slice(0, -1);
    t.setText(`${s.trimEnd()}…`);
  }
  return t;
}

export const seconds = (ms) => {
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
