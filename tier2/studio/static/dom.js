// DOM helpers. Every text from the API (briefs, documents, evidence) goes in as text nodes: nothing is ever parsed
// as HTML, so a hostile brief or design document cannot inject markup or script.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

export function money(usd) {
  if (usd === null || usd === undefined || Number.isNaN(Number(usd))) return '–';
  const n = Number(usd);
  return n < 0.01 && n > 0 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`;
}

export function age(epochS) {
  if (!epochS) return '–';
  const s = Math.max(0, Date.now() / 1000 - Number(epochS));
  if (s < 60) return `${Math.floor(s)} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export function clock(epochS) {
  return epochS ? new Date(Number(epochS) * 1000).toTimeString().slice(0, 8) : '';
}

export function badge(status) {
  return h('span', { class: `badge s-${String(status).replace(/[^a-z_]/g, '')}` }, status);
}

export function json(value) {
  return h('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}

// --- a small Markdown renderer: headings, paragraphs, lists, tables, fenced code, `code`, **bold**, *em*, links
// (shown as text: a document never navigates the Studio) ---

function inline(text) {
  const out = [];
  const re = /(`[^`]+`|\*\*[^*]+\*\*|\*[^*\s][^*]*\*|\[[^\]]+\]\([^)\s]+\))/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const t = m[0];
    if (t.startsWith('`')) out.push(h('code', {}, t.slice(1, -1)));
    else if (t.startsWith('**')) out.push(h('strong', {}, inline(t.slice(2, -2))));
    else if (t.startsWith('*')) out.push(h('em', {}, inline(t.slice(1, -1))));
    else out.push(h('span', { class: 'link' }, t.slice(1, t.indexOf(']'))));
    last = m.index + t.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const cells = (row) => row.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());

export function markdown(src) {
  const root = h('div', { class: 'md' });
  const lines = String(src).replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const code = [];
      for (i += 1; i < lines.length && !/^```/.test(lines[i]); i += 1) code.push(lines[i]);
      root.append(h('pre', {}, h('code', {}, code.join('\n'))));
      i += 1;
    } else if (/^#{1,6}\s/.test(line)) {
      const level = line.match(/^#+/)[0].length;
      root.append(h(`h${Math.min(level + 2, 6)}`, {}, inline(line.replace(/^#+\s*/, ''))));
      i += 1;
    } else if (/^\s*\|/.test(line) && i + 1 < lines.length && /^\s*\|?\s*:?-{3,}/.test(lines[i + 1])) {
      const head = h('tr', {}, cells(line).map((c) => h('th', {}, inline(c))));
      const body = [];
      for (i += 2; i < lines.length && /^\s*\|/.test(lines[i]); i += 1) {
        body.push(h('tr', {}, cells(lines[i]).map((c) => h('td', {}, inline(c)))));
      }
      root.append(h('table', {}, h('thead', {}, head), h('tbody', {}, body)));
    } else if (/^\s*([-*]|\d+\.)\s/.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items = [];
      for (; i < lines.length && /^\s*([-*]|\d+\.)\s/.test(lines[i]); i += 1) {
        items.push(h('li', {}, inline(lines[i].replace(/^\s*([-*]|\d+\.)\s+/, ''))));
      }
      root.append(h(ordered ? 'ol' : 'ul', {}, items));
    } else if (line.trim() === '') {
      i += 1;
    } else {
      const para = [];
      for (; i < lines.length && lines[i].trim() !== '' && !/^(#{1,6}\s|```|\s*\||\s*([-*]|\d+\.)\s)/.test(lines[i]);
        i += 1) para.push(lines[i]);
      if (!para.length) { para.push(line); i += 1; }
      root.append(h('p', {}, inline(para.join(' '))));
    }
  }
  return root;
}
