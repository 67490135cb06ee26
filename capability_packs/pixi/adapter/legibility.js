// The PixiJS pack's legibility collector (its engine adapter, read by tier2/validators/legibility, called with the
// screen name). Walks the stage in render order and returns, in the game's pixels (the renderer's screen; `zoom` is
// the canvas' CSS size over it): every visible Text / BitmapText / HTMLText with its box, font size, colours and
// effective alpha; every shape a text may sit on (Graphics fills and outlines from the graphics context's
// instructions — v8 — or geometry data — v7 —, sprites as images of unknown colour); the renderer's background.
// It only observes: no judgement here, no game state changed, no clock advanced. Returns JSON text (or null).
(screen) => {
  const hook = window.__TIER2__;
  const game = hook && hook.game;
  const engine = window.__tier2Engine;
  const found = (game && game.app) || (engine && typeof engine.app === 'function' ? engine.app() : null);
  const r = found && found.renderer;
  const stage = found && found.stage;
  if (!r || !stage) return null;
  const MAX_TEXTS = 200, MAX_SHAPES = 1000, MAX_CHARS = 200, MIN_IMAGE_AREA = 256;
  const r1 = (v) => Math.round(v * 10) / 10;
  const box4 = (x0, y0, x1, y1) => [r1(Math.min(x0, x1)), r1(Math.min(y0, y1)), r1(Math.abs(x1 - x0)), r1(Math.abs(y1 - y0))];
  const rgbInt = (c) => [(c >> 16) & 255, (c >> 8) & 255, c & 255];
  const scratch = document.createElement('canvas').getContext('2d');
  const css = (v) => {  // a colour as PixiJS takes it (number, CSS string, [r,g,b] 0..1, {color}) -> [r, g, b, a]
    if (v === null || v === undefined) return null;
    if (typeof v === 'number' && isFinite(v)) return [...rgbInt(v), 1];
    if (Array.isArray(v) && v.length >= 3) return [Math.round(v[0] * 255), Math.round(v[1] * 255), Math.round(v[2] * 255), v.length > 3 ? v[3] : 1];
    if (typeof v === 'object') {
      if (typeof v.toUint8RgbArray === 'function') { const a = v.toUint8RgbArray(); return [a[0], a[1], a[2], typeof v.alpha === 'number' ? v.alpha : 1]; }
      if ('color' in v) { const c = css(v.color); return c ? [c[0], c[1], c[2], typeof v.alpha === 'number' ? v.alpha : c[3]] : null; }
      if ('fill' in v) return css(v.fill);
      return null;
    }
    if (typeof v !== 'string' || !v.trim() || !scratch) return null;
    scratch.fillStyle = '#010203';
    scratch.fillStyle = v;
    const s = String(scratch.fillStyle);
    if (s === '#010203' && !/^#010203$/i.test(v.trim())) return null;
    let m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(s);
    if (m) return [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16), 1];
    m = /^rgba?\(([^)]+)\)$/.exec(s);
    if (!m) return null;
    const p = m[1].split(',').map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const W = (r.screen && r.screen.width) || r.width, H = (r.screen && r.screen.height) || r.height;
  const canvas = r.canvas || r.view;
  const zoom = canvas && canvas.getBoundingClientRect ? (canvas.getBoundingClientRect().width / (W || 1)) : 1;
  const bgc = r.background ? css(r.background.color) : null;
  const bga = r.background && typeof r.background.alpha === 'number' ? r.background.alpha : 1;
  const sceneKey = hook && typeof hook.scene === 'function' ? hook.scene() : 'stage';
  const viewport = box4(0, 0, W, H);
  const out = {
    screen, width: W, height: H, zoom: r1(zoom * 100) / 100, renderer: typeof r.name === 'string' ? r.name : (r.type === 1 ? 'webgl' : 'canvas'),
    background: bgc && bga > 0 ? bgc.slice(0, 3) : null,
    scenes: [{ key: sceneKey, viewport, cameras: 1 }], texts: [], shapes: [], skipped: { texts: 0, shapes: 0, grids: 0, commands: 0 },
  };
  let order = 0;
  const pushShape = (s) => {
    if (out.shapes.length >= MAX_SHAPES) { out.skipped.shapes += 1; return; }
    out.shapes.push(s);
  };
  const rect = (m, x0, y0, x1, y1) => {
    const pts = [[x0, y0], [x1, y0], [x0, y1], [x1, y1]].map(([x, y]) => (m ? [m.a * x + m.c * y + m.tx, m.b * x + m.d * y + m.ty] : [x, y]));
    const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
    return box4(Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys));
  };
  const boundsOf = (o) => {
    try { const b = o.getBounds(); const bb = b.rectangle || b; return box4(bb.x, bb.y, bb.x + bb.width, bb.y + bb.height); } catch (e) { return null; }
  };
  const fontPx = (size) => {
    if (typeof size === 'number') return size;
    const m = /([\d.]+)\s*(px|pt|em|rem|%)?/i.exec(String(size || ''));
    if (!m) return null;
    const n = parseFloat(m[1]), unit = (m[2] || 'px').toLowerCase();
    return unit === 'pt' ? n * 4 / 3 : unit === 'em' || unit === 'rem' ? n * 16 : unit === '%' ? n * 0.16 : n;
  };
  const graphics = (g, alpha, base) => {
    const m = g.worldTransform || null;
    const ins = g.context && Array.isArray(g.context.instructions) ? g.context.instructions : null;
    if (ins) {  // v8: {action: 'fill' | 'stroke' | 'texture', data: {style: {color, alpha}, path}}
      for (const i of ins.slice(0, 2000)) {
        if (!i || !i.data || (i.action !== 'fill' && i.action !== 'stroke')) continue;
        const style = i.data.style || {};
        const b = i.data.path && i.data.path.bounds;
        if (!b || !isFinite(b.minX) || b.maxX <= b.minX || b.maxY <= b.minY) continue;
        const colour = css(style.color);
        if (!colour) continue;
        pushShape({ ...base, kind: i.action === 'fill' ? 'fill' : 'outline', box: rect(m, b.minX, b.minY, b.maxX, b.maxY),
          colour: colour.slice(0, 3), alpha: r1(alpha * (typeof style.alpha === 'number' ? style.alpha : 1) * 100) / 100,
          panel: i.action === 'fill', order: order++ });
      }
      return;
    }
    const data = g.geometry && Array.isArray(g.geometry.graphicsData) ? g.geometry.graphicsData : [];
    for (const d of data.slice(0, 2000)) {  // v7: {shape, fillStyle: {visible, color, alpha}, lineStyle}
      const s = d.shape;
      if (!s) continue;
      const bx = typeof s.width === 'number' ? [s.x, s.y, s.x + s.width, s.y + s.height]
        : typeof s.radius === 'number' ? [s.x - s.radius, s.y - s.radius, s.x + s.radius, s.y + s.radius] : null;
      if (!bx) continue;
      for (const [st, kind] of [[d.fillStyle, 'fill'], [d.lineStyle, 'outline']]) {
        if (!st || !st.visible) continue;
        pushShape({ ...base, kind, box: rect(m, ...bx), colour: rgbInt(st.color), alpha: r1(alpha * st.alpha * 100) / 100,
          panel: kind === 'fill', order: order++ });
      }
    }
  };
  // the highest alpha a running tween of this object reaches (a tier2 game's scene tweens: a blinking hint is judged
  // at its peak, not at the frame the screenshot caught)
  const tweens = game && game.current && Array.isArray(game.current.tweens) ? game.current.tweens : [];
  const alphaPeak = (o, alpha) => {
    let peak = null;
    for (const tw of tweens) {
      if (tw.target !== o || !tw.to || typeof tw.to.alpha !== 'number') continue;
      for (const v of [tw.from && tw.from.alpha, tw.to.alpha]) if (typeof v === 'number' && isFinite(v)) peak = Math.max(peak ?? v, v);
    }
    return peak === null || !o.alpha ? null : r1(Math.min(1, alpha * Math.max(peak, o.alpha) / o.alpha) * 100) / 100;
  };
  const text = (o, alpha, masked, base) => {
    if (out.texts.length >= MAX_TEXTS) { out.skipped.texts += 1; return; }
    const raw = String(o.text === undefined ? '' : o.text);
    if (!raw.trim()) return;
    const st = o.style || {};
    const m = o.worldTransform;
    const scaleY = m ? Math.hypot(m.c, m.d) : 1;
    const fp = fontPx(st.fontSize);
    const rec = { ...base, text: raw.slice(0, MAX_CHARS), box: boundsOf(o), alpha: r1(alpha * 100) / 100, alpha_peak: alphaPeak(o, alpha),
      masked, order: order++, lines: null, clip: null, colour: css(st.fill !== undefined ? st.fill : st.color),
      stroke: null, stroke_px: 0, bg: null, bold: /bold|[6-9]00/i.test(String(st.fontWeight || '')),
      font_px: fp === null ? null : r1(fp * scaleY), line_px: null, viewport };
    rec.line_px = rec.font_px;
    const stroke = st.stroke;
    const width = stroke && typeof stroke === 'object' && typeof stroke.width === 'number' ? stroke.width : (st.strokeThickness || 0);
    if (stroke !== undefined && stroke !== null && width > 0) { rec.stroke = css(stroke); rec.stroke_px = r1(width * scaleY); }
    out.texts.push(rec);
  };
  const walk = (o, alpha, masked) => {
    for (const c of (Array.isArray(o.children) ? o.children : [])) {
      if (!c || c.visible === false || c.renderable === false) continue;
      const a = alpha * (typeof c.alpha === 'number' ? c.alpha : 1);
      if (a <= 0) continue;
      const cm = masked || !!c.mask;
      const isText = typeof c.text === 'string' && !!c.style;
      const base = { scene: sceneKey, type: isText ? 'Text' : c.context || c.geometry ? 'Graphics' : c.texture ? 'Sprite' : 'Container' };
      if (isText) text(c, a, cm, base);
      else if (c.context || (c.geometry && c.geometry.graphicsData)) graphics(c, a, base);
      else if (c.texture) {
        const box = boundsOf(c);
        if (box && box[2] * box[3] >= MIN_IMAGE_AREA) pushShape({ ...base, kind: 'image', box, colour: null, alpha: r1(a * 100) / 100, grid: null, panel: true, masked: cm, order: order++ });
      }
      if (!isText) walk(c, a, cm);
    }
  };
  if (bgc && bga > 0) pushShape({ scene: sceneKey, type: 'Camera', kind: 'fill', box: viewport, colour: bgc.slice(0, 3), alpha: bga, panel: false, order: order++ });
  walk(stage, typeof stage.alpha === 'number' ? stage.alpha : 1, false);
  return JSON.stringify(out);
}
