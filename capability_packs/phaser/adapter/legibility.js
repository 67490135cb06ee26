// The Phaser pack's legibility collector (its engine adapter, read by tier2/validators/legibility, called with the screen name).
// Walks the display list of every rendered scene (containers and layers included) in render order and returns,
// in screen pixels of the game's canvas (main camera applied): every visible Text / BitmapText with its ink
// boxes (one per drawn line), font size, colours and effective alpha; every shape a text may sit on
// (Rectangle and other Shapes, Graphics fills and outlines parsed from the command buffer, Image / Sprite /
// NineSlice / TileSprite with a coarse colour grid of their texture frame); the camera and game backgrounds.
// It only observes: no judgement here, no game state changed, no clock advanced. Returns JSON text (or null).
(screen) => {
  const game = (window.__TIER2__ && window.__TIER2__.game) || window.__tier2Game;
  if (!game || !game.isBooted || !game.scene || !Array.isArray(game.scene.scenes)) return null;
  const MAX_TEXTS = 200, MAX_SHAPES = 1000, MAX_GRIDS = 80, MAX_CMDS = 40000, GRID = 8, MAX_CHARS = 200;
  const MIN_IMAGE_AREA = 256;  // images smaller than 16 x 16 px (dots, particles, icons) carry no text
  const r1 = (v) => Math.round(v * 10) / 10;
  const box4 = (x0, y0, x1, y1) => [r1(Math.min(x0, x1)), r1(Math.min(y0, y1)), r1(Math.abs(x1 - x0)), r1(Math.abs(y1 - y0))];
  const rgbInt = (c) => [(c >> 16) & 255, (c >> 8) & 255, c & 255];
  const scratch = document.createElement('canvas');
  scratch.width = GRID;
  scratch.height = GRID;
  const sctx = scratch.getContext('2d', { willReadFrequently: true });
  const css = (v) => {  // any CSS colour string -> [r, g, b, a] (null when not a plain colour)
    if (typeof v !== 'string' || !v.trim() || !sctx) return null;
    sctx.fillStyle = '#010203';
    sctx.fillStyle = v;
    const s = String(sctx.fillStyle);
    if (s === '#010203' && !/^#010203$/i.test(v.trim())) return null;
    let m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(s);
    if (m) return [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16), 1];
    m = /^rgba?\(([^)]+)\)$/.exec(s);
    if (!m) return null;
    const p = m[1].split(',').map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const renderer = game.renderer && game.renderer.type === 2 ? 'webgl' : 'canvas';
  const W = (game.scale && game.scale.width) || game.config.width;
  const H = (game.scale && game.scale.height) || game.config.height;
  const zoom = (game.scale && game.scale.zoom) || 1;
  const bgc = game.config.backgroundColor;
  const out = {
    screen, width: W, height: H, zoom, renderer,
    background: game.config.transparent || !bgc ? null : [bgc.red, bgc.green, bgc.blue],
    scenes: [], texts: [], shapes: [], skipped: { texts: 0, shapes: 0, grids: 0, commands: 0 },
  };
  let order = 0;
  let grids = 0;
  const images = [];  // [shape, game object] of every collected image
  const cache = (window.__tier2LegibilityGrids = window.__tier2LegibilityGrids || new Map());  // by texture + frame
  const seen = new Map();  // this call: every frame once (render textures change between calls)

  const toScreen = (cam, x, y, sf) => {
    const zx = cam.zoomX || cam.zoom || 1, zy = cam.zoomY || cam.zoom || 1;
    const ox = cam.width * (cam.originX === undefined ? 0.5 : cam.originX);
    const oy = cam.height * (cam.originY === undefined ? 0.5 : cam.originY);
    return [cam.x + ox + zx * (x - cam.scrollX * sf[0] - ox), cam.y + oy + zy * (y - cam.scrollY * sf[1] - oy)];
  };
  const worldRect = (cam, sf, x0, y0, x1, y1) => {
    const a = toScreen(cam, x0, y0, sf), b = toScreen(cam, x1, y1, sf);
    return box4(a[0], a[1], b[0], b[1]);
  };
  // axis-aligned screen box of local points through a world matrix (a, b, c, d, tx, ty)
  const localRect = (cam, sf, m, pts) => {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const [x, y] of pts) {
      const wx = m ? m.a * x + m.c * y + m.tx : x, wy = m ? m.b * x + m.d * y + m.ty : y;
      x0 = Math.min(x0, wx); y0 = Math.min(y0, wy); x1 = Math.max(x1, wx); y1 = Math.max(y1, wy);
    }
    return worldRect(cam, sf, x0, y0, x1, y1);
  };
  const matrixOf = (o) => {
    try { return o.getWorldTransformMatrix ? o.getWorldTransformMatrix() : null; } catch (e) { return null; }
  };
  const boundsOf = (cam, sf, o) => {
    try {
      const b = o.getBounds();
      return worldRect(cam, sf, b.x, b.y, b.x + b.width, b.y + b.height);
    } catch (e) { return null; }
  };
  const alphaPeak = (scene, o, alpha) => {  // the highest alpha a running tween of this object reaches
    let peak = null;
    try {
      for (const t of scene.tweens.getTweensOf(o) || []) {
        if (t.isPlaying && !t.isPlaying()) continue;
        for (const d of t.data || []) {
          if (!d || d.key !== 'alpha') continue;
          for (const v of [d.start, d.end, d.current]) if (typeof v === 'number' && isFinite(v)) peak = Math.max(peak ?? v, v);
        }
      }
    } catch (e) { return null; }
    return peak === null || !o.alpha ? null : r1(Math.min(1, alpha * Math.max(peak, o.alpha) / o.alpha) * 100) / 100;
  };
  const fontPx = (size) => {
    if (typeof size === 'number') return size;
    const m = /([\d.]+)\s*(px|pt|em|rem|%)?/i.exec(String(size || ''));
    if (!m) return null;
    const n = parseFloat(m[1]), unit = (m[2] || 'px').toLowerCase();
    return unit === 'pt' ? n * 4 / 3 : unit === 'em' || unit === 'rem' ? n * 16 : unit === '%' ? n * 0.16 : n;
  };

  // Texture colours: a GRID x GRID grid of [r, g, b, a] over a frame (alpha-weighted), cached for image sources.
  const gridOf = (frame, n) => {
    if (!frame || !frame.source || !sctx) return null;
    const img = frame.source.image || frame.source.canvas;
    if (!img || !(img instanceof HTMLImageElement || img instanceof HTMLCanvasElement || img instanceof ImageBitmap)) return null;
    const dynamic = frame.source.isRenderTexture || (frame.texture && frame.texture.renderTarget) || !frame.texture;
    const key = dynamic ? null : `${frame.texture.key}|${frame.name}|${n}`;
    if (key && cache.has(key)) return cache.get(key);
    if (seen.has(frame) && seen.get(frame).n === n) return seen.get(frame).cells;
    if (grids >= MAX_GRIDS) { out.skipped.grids += 1; return null; }
    grids += 1;
    let cells = null;
    try {
      sctx.clearRect(0, 0, GRID, GRID);
      sctx.imageSmoothingEnabled = true;
      sctx.imageSmoothingQuality = 'high';
      sctx.drawImage(img, frame.cutX, frame.cutY, frame.cutWidth, frame.cutHeight, 0, 0, n, n);
      const px = sctx.getImageData(0, 0, n, n).data;
      cells = [];
      for (let i = 0; i < n * n; i++) cells.push([px[4 * i], px[4 * i + 1], px[4 * i + 2], r1(px[4 * i + 3] / 255 * 100) / 100]);
    } catch (e) { cells = null; }  // a tainted or undrawable source: colour unknown
    if (key) cache.set(key, cells);
    seen.set(frame, { n, cells });
    return cells;
  };

  const pushShape = (s) => {
    if (out.shapes.length >= MAX_SHAPES) { out.skipped.shapes += 1; return; }
    out.shapes.push(s);
  };

  const graphics = (g, cam, sf, alpha, base) => {
    const buf = g.commandBuffer || [];
    const m = matrixOf(g);
    let fill = null, fillA = 1, line = null, lineA = 1, path = [], strokes = [];
    let tx = 0, ty = 0, kx = 1, ky = 1;
    const stack = [];
    const pt = (x, y) => [tx + x * kx, ty + y * ky];
    const emit = (kind, pts, colour, a, panel) => {
      if (pts.length < 2 || a <= 0) return;
      pushShape({ ...base, kind, box: localRect(cam, sf, m, pts), colour: colour === null ? null : rgbInt(colour),
        alpha: r1(a * alpha * 100) / 100, panel, order: order++ });
    };
    const flushStrokes = () => {
      if (strokes.length === 4) {
        const vert = strokes.filter((s) => Math.abs(s[0][0] - s[1][0]) < 1e-6).length;
        const horiz = strokes.filter((s) => Math.abs(s[0][1] - s[1][1]) < 1e-6).length;
        if (vert === 2 && horiz === 2) emit('outline', strokes.flat(), line, lineA, true);  // Graphics.strokeRect
      }
      strokes = [];
    };
    const n = Math.min(buf.length, MAX_CMDS);
    if (buf.length > MAX_CMDS) out.skipped.commands += buf.length - MAX_CMDS;
    for (let i = 0; i < n;) {
      const c = buf[i];
      const a = (k) => buf[i + k];
      if (c === 0) { path.push(pt(a(1) - a(3), a(2) - a(3)), pt(a(1) + a(3), a(2) + a(3))); i += 8; }  // ARC
      else if (c === 1) { path = []; i += 1; }  // BEGIN_PATH
      else if (c === 2) { i += 1; }  // CLOSE_PATH
      else if (c === 3) { flushStrokes(); emit('fill', [pt(a(1), a(2)), pt(a(1) + a(3), a(2) + a(4))], fill, fillA, true); i += 5; }
      else if (c === 4 || c === 5) { path.push(pt(a(1), a(2))); i += 3; }  // LINE_TO, MOVE_TO
      else if (c === 6) { line = a(2); lineA = a(3); i += 4; }  // LINE_STYLE
      else if (c === 7) { fill = a(1); fillA = a(2); i += 3; }  // FILL_STYLE
      else if (c === 8) { flushStrokes(); if (path.length >= 2) emit('fill', path, fill, fillA, true); i += 1; }  // FILL_PATH
      else if (c === 9) {  // STROKE_PATH: four two-point strokes in a row are a strokeRect
        if (path.length === 2) { strokes.push(path.slice()); if (strokes.length === 4) flushStrokes(); }
        else { flushStrokes(); if (path.length >= 3) emit('outline', path, line, lineA, true); }
        i += 1;
      }
      else if (c === 10) { flushStrokes(); emit('fill', [pt(a(1), a(2)), pt(a(3), a(4)), pt(a(5), a(6))], fill, fillA, false); i += 7; }
      else if (c === 11) { i += 7; }  // STROKE_TRIANGLE
      else if (c === 14) { stack.push([tx, ty, kx, ky]); i += 1; }  // SAVE
      else if (c === 15) { [tx, ty, kx, ky] = stack.pop() || [0, 0, 1, 1]; i += 1; }  // RESTORE
      else if (c === 16) { tx += a(1) * kx; ty += a(2) * ky; i += 3; }  // TRANSLATE
      else if (c === 17) { kx *= a(1); ky *= a(2); i += 3; }  // SCALE
      else if (c === 18) { i += 2; }  // ROTATE (ignored: boxes stay axis-aligned)
      else if (c === 21) { fill = null; i += 6; }  // GRADIENT_FILL_STYLE: colour unknown
      else if (c === 22) { i += 7; }  // GRADIENT_LINE_STYLE
      else break;  // an unknown command: stop rather than misread the buffer
    }
    flushStrokes();
  };

  const textLines = (o, cam, sf, m) => {  // one ink box per drawn line (Text), and whether a fixed size clips it
    const st = o.style;
    if (!st || !o.context || typeof o.getWrappedText !== 'function' || !st.metrics) return null;
    const lines = o.getWrappedText();
    const n = st.maxLines > 0 ? Math.min(st.maxLines, lines.length) : lines.length;
    const ctx = o.context;
    st.syncFont(o.canvas, ctx);
    const stroke = st.strokeThickness || 0, ls = o.letterSpacing || 0;
    const widths = [];
    for (let i = 0; i < n; i++) {
      const s = lines[i];
      let w = stroke;
      if (!ls) w += ctx.measureText(s).width;
      else { for (const ch of s) w += ctx.measureText(ch).width; w += ls * Math.max(0, s.length - 1); }
      widths.push(Math.ceil(w));
    }
    const lh = st.metrics.fontSize + stroke, gap = o.lineSpacing || 0;
    const pad = o.padding || { left: 0, right: 0, top: 0, bottom: 0 };
    const maxW = widths.length ? Math.max(...widths) : 0;
    const textW = st.fixedWidth ? Math.max(o.width - pad.left - pad.right, maxW) : maxW;
    const boxes = [];
    for (let i = 0; i < n; i++) {
      if (!lines[i].trim()) continue;
      let x = pad.left;
      if (st.rtl || st.align === 'right') x += textW - widths[i];
      else if (st.align === 'center') x += (textW - widths[i]) / 2;
      const y = pad.top + i * (lh + gap);
      // what the text's own canvas keeps: a fixed width/height crops the line
      const x0 = Math.max(0, x), y0 = Math.max(0, y), x1 = Math.min(o.width, x + widths[i]), y1 = Math.min(o.height, y + lh);
      if (x1 <= x0 || y1 <= y0) continue;
      const ox = o.displayOriginX || 0, oy = o.displayOriginY || 0;
      boxes.push(localRect(cam, sf, m, [[x0 - ox, y0 - oy], [x1 - ox, y0 - oy], [x0 - ox, y1 - oy], [x1 - ox, y1 - oy]]));
    }
    const natural = [maxW + pad.left + pad.right, lh * n + gap * Math.max(0, n - 1) + pad.top + pad.bottom];
    const clipped = natural[0] > o.width + 1 || natural[1] > o.height + 1;
    return { boxes, clip: clipped ? { natural: natural.map(r1), fixed: [r1(o.width), r1(o.height)] } : null };
  };

  const text = (o, scene, cam, sf, alpha, masked, base) => {
    if (out.texts.length >= MAX_TEXTS) { out.skipped.texts += 1; return; }
    const raw = String(o.text === undefined ? '' : o.text);
    if (!raw.trim()) return;
    const m = matrixOf(o);
    const scaleY = (m ? Math.hypot(m.c, m.d) : 1) * (cam.zoomY || cam.zoom || 1);
    const rec = { ...base, text: raw.slice(0, MAX_CHARS), box: boundsOf(cam, sf, o), alpha: r1(alpha * 100) / 100,
      alpha_peak: alphaPeak(scene, o, alpha), masked, order: order++, lines: null, clip: null, colour: null,
      stroke: null, stroke_px: 0, bg: null, bold: false, font_px: null, line_px: null };
    if (o.type === 'Text') {
      const st = o.style || {};
      const fp = fontPx(st.fontSize);
      rec.font_px = fp === null ? null : r1(fp * scaleY);
      rec.line_px = st.metrics ? r1(st.metrics.fontSize * scaleY) : null;
      rec.bold = /bold|[6-9]00/i.test(String(st.fontStyle || ''));
      rec.colour = css(st.color);
      if ((st.strokeThickness || 0) > 0) { rec.stroke = css(st.stroke); rec.stroke_px = r1(st.strokeThickness * scaleY); }
      rec.bg = css(st.backgroundColor);
      try {
        const lines = textLines(o, cam, sf, m);
        if (lines) { rec.lines = lines.boxes; rec.clip = lines.clip; }
      } catch (e) { rec.lines = null; }
    } else {  // BitmapText: glyph colour = the opaque pixels of its font texture (tinted on WebGL)
      rec.font_px = r1((o.fontSize || 0) * scaleY);
      rec.line_px = rec.font_px;
      const cells = gridOf(o.frame || (o.texture && o.texture.get && o.texture.get()), 1);
      if (cells && cells[0][3] > 0) {
        let c = cells[0].slice(0, 3);
        const tint = o.tintTopLeft;
        if (renderer === 'webgl' && typeof tint === 'number' && tint !== 0xffffff) c = c.map((v, k) => Math.round(v * rgbInt(tint)[k] / 255));
        rec.colour = [...c, 1];
      }
    }
    out.texts.push(rec);
  };

  const walk = (list, scene, cam, sf, alpha, masked) => {
    for (const o of list || []) {
      if (!o || o.visible === false || (o.cameraFilter && (o.cameraFilter & cam.id))) continue;
      const a = alpha * (typeof o.alpha === 'number' ? o.alpha : 1);
      if (a <= 0) continue;
      const osf = sf || [o.scrollFactorX ?? 1, o.scrollFactorY ?? 1];
      const omask = masked || !!o.mask;
      const base = { scene: scene.sys.settings.key, type: o.type };
      if ((o.type === 'Container' || o.type === 'Layer') && Array.isArray(o.list)) {
        walk(o.list, scene, cam, osf, a, omask);
      } else if (o.type === 'Text' || o.type === 'BitmapText' || o.type === 'DynamicBitmapText') {
        text(o, scene, cam, osf, a, omask, base);
      } else if (o.type === 'Graphics') {
        graphics(o, cam, osf, a, base);
      } else if (o.type === 'Rectangle' || (o.isFilled !== undefined && o.fillColor !== undefined && o.geom)) {
        const box = boundsOf(cam, osf, o);
        const panel = o.type === 'Rectangle';
        if (box && o.isFilled) pushShape({ ...base, kind: 'fill', box, colour: rgbInt(o.fillColor), alpha: r1(a * o.fillAlpha * 100) / 100, panel, order: order++ });
        else if (box && o.isStroked) pushShape({ ...base, kind: 'outline', box, colour: rgbInt(o.strokeColor), alpha: r1(a * o.strokeAlpha * 100) / 100, panel, order: order++ });
      } else if (o.frame && (o.type === 'Image' || o.type === 'Sprite' || o.type === 'NineSlice' || o.type === 'TileSprite')) {
        const box = boundsOf(cam, osf, o);
        if (!box || box[2] * box[3] < MIN_IMAGE_AREA) continue;
        const shape = { ...base, kind: 'image', box, colour: null, alpha: r1(a * 100) / 100, grid: null, panel: true,
          masked: omask, order: order++ };
        pushShape(shape);
        images.push([shape, o]);  // its colour grid is read at the end, only if a text lies over it
      } else if (o.type === 'TilemapLayer' || o.type === 'RenderTexture' || o.type === 'Video' || o.type === 'Shader') {
        const box = boundsOf(cam, osf, o);
        if (box) pushShape({ ...base, kind: 'image', box, colour: null, alpha: r1(a * 100) / 100, grid: null, panel: false, order: order++ });
      }
    }
  };

  for (const scene of game.scene.scenes) {
    const sys = scene && scene.sys;
    if (!sys || !sys.settings.visible || sys.settings.status < 3 || sys.settings.status >= 7) continue;
    const cam = scene.cameras && scene.cameras.main;
    if (!cam || cam.visible === false || cam.alpha <= 0) continue;
    const viewport = box4(cam.x, cam.y, cam.x + cam.width, cam.y + cam.height);
    const bg = cam.backgroundColor;
    out.scenes.push({ key: sys.settings.key, viewport, cameras: scene.cameras.cameras.length });
    if (bg && !cam.transparent && bg.alpha > 0) {
      pushShape({ scene: sys.settings.key, type: 'Camera', kind: 'fill', box: viewport, colour: [bg.red, bg.green, bg.blue],
        alpha: r1(bg.alpha / 255 * cam.alpha * 100) / 100, panel: false, order: order++ });
    }
    const list = (scene.children && scene.children.list) || [];
    walk(list, scene, cam, null, cam.alpha, false);
    for (const t of out.texts) if (t.scene === sys.settings.key && !t.viewport) t.viewport = viewport;
  }
  const meets = (a, b) => a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3];
  for (const [shape, o] of images) {
    if (!out.texts.some((t) => t.box && meets(t.box, shape.box))) continue;
    const n = o.type === 'TileSprite' ? 1 : GRID;
    let cells = gridOf(o.frame, n);
    if (cells && (o.flipX || o.flipY)) {
      cells = cells.map((_, k) => { const x = k % n, y = Math.floor(k / n); return cells[(o.flipY ? n - 1 - y : y) * n + (o.flipX ? n - 1 - x : x)]; });
    }
    shape.grid = cells ? { n, cells } : null;
  }
  return JSON.stringify(out);  // one string: Playwright transfers it far faster than the object tree
}
