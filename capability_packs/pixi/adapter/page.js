// The PixiJS pack's in-page engine adapter (tier2/packs/engine.py), installed after tier2's clock init script in
// every validation page. PixiJS (v7.2+ and v8) announces every Application and renderer it makes to its devtools
// hooks, globalThis.__PIXI_APP_INIT__ / __PIXI_RENDERER_INIT__: this script keeps the first of each (and still calls
// hooks a page or devtools set) and answers the validators' questions through window.__tier2Engine: info() (booted,
// the "scenes" — a tier2 game's active scene, else the stage —, renderer, frame), frame() (ticks of the app's ticker),
// snapshot() (the stage's display tree under stable ids), missingTextures() (sprites drawn with the empty texture)
// and discover() (the keys, pointer listeners and interactive objects the game registered, in page coordinates).
// It only observes: no game state changed.
(() => {
  if (window.__tier2Engine) return;
  const found = { app: null, renderer: null, frames: 0, ticker: null };
  const relay = (name, keep) => {
    let theirs = window[name];
    Object.defineProperty(window, name, {
      configurable: true,
      get: () => (...args) => {
        try { keep(...args); } catch (e) { /* observation only */ }
        if (typeof theirs === 'function') return theirs(...args);
        return undefined;
      },
      set: (fn) => { theirs = fn; },
    });
  };
  const count = (ticker) => {
    if (!ticker || found.ticker === ticker || typeof ticker.add !== 'function') return;
    found.ticker = ticker;
    try { ticker.add(() => { found.frames += 1; }, null, -1e9); } catch (e) { /* a ticker without priorities */ }
  };
  relay('__PIXI_APP_INIT__', (app) => { if (!found.app) { found.app = app; count(app.ticker); } });
  relay('__PIXI_RENDERER_INIT__', (r) => { if (!found.renderer) found.renderer = r; });
  // the tier2 hook's game ({app, scenes}) or the app PixiJS announced
  const appOf = (game) => (game && game.app) || (game && game.stage && game.renderer ? game : null) || found.app;
  const rendererOf = (app) => (app && app.renderer) || found.renderer;
  // v8 RendererType: WEBGL 1, WEBGPU 2, CANVAS 4; v7 RENDERER_TYPE: WEBGL 1, CANVAS 2
  const rendererName = (r) => {
    if (!r) return null;
    if (typeof r.name === 'string' && r.name) return r.name;
    if (r.gl || r.context && r.context.webGLVersion) return 'webgl';
    return r.type === 1 ? 'webgl' : 'canvas';
  };
  const stageOf = (app) => (app && app.stage) || (found.renderer && found.renderer.lastObjectRendered) || null;
  const info = (game) => {
    const app = appOf(game);
    const r = rendererOf(app);
    const stage = stageOf(app);
    const scenes = game && game.scenes && typeof game.scenes.active === 'function' ? game.scenes.active()
      : (stage ? ['stage'] : []);
    const frame = game && typeof game.frame === 'function' ? game.frame() : (found.ticker ? found.frames
      : (window.__tier2Clock ? window.__tier2Clock.frames : null));
    return { game: !!(app || r), booted: !!(r && stage), scenes, renderer: rendererName(r), frame,
      canvas: !!document.querySelector('canvas') };
  };
  const children = (o) => (o && Array.isArray(o.children) ? o.children : []);
  const isText = (o) => typeof o.text === 'string' && !!o.style;
  const kindOf = (o) => (isText(o) ? 'Text' : o.texture && !o.context && !o.geometry ? 'Sprite'
    : o.context || o.geometry ? 'Graphics' : children(o).length ? 'Container' : 'DisplayObject');
  const visibleInTree = (o) => {
    for (let p = o; p; p = p.parent) if (p.visible === false || p.renderable === false) return false;
    return true;
  };
  // objects get a stable id (a non-enumerable tag) so a spawned bullet does not shift every other object's key
  const snapshot = () => {
    const stage = stageOf(appOf(null));
    if (!stage) return null;
    window.__t2ids = window.__t2ids || 1;
    const r = (v) => (typeof v === 'number' && isFinite(v)) ? Math.round(v) : null;
    const objects = {};
    let n = 0;
    const walk = (o, depth) => {
      for (const c of children(o)) {
        if (n >= 120) return;
        n += 1;
        if (!c.__t2id) Object.defineProperty(c, '__t2id', { value: window.__t2ids++, enumerable: false });
        let gx = c.x, gy = c.y;
        try { const p = c.getGlobalPosition ? c.getGlobalPosition() : null; if (p) { gx = p.x; gy = p.y; } } catch (e) { /* detached */ }
        objects['stage#' + c.__t2id] = { type: kindOf(c), x: r(gx), y: r(gy), visible: c.visible ? 1 : 0,
          alpha: r((c.alpha || 0) * 100), text: isText(c) ? c.text.slice(0, 60) : null,
          frame: c.texture && c.texture.label ? String(c.texture.label).slice(0, 60) : null };
        if (depth < 4) walk(c, depth + 1);
      }
    };
    walk(stage, 0);
    return { scenes: 'stage', objects };
  };
  const missingTextures = () => {
    const stage = stageOf(appOf(null));
    let n = 0;
    const walk = (o) => {
      for (const c of children(o).slice(0, 500)) {
        const t = c.texture;
        if (c.visible !== false && t && !isText(c) && !c.context
            && (t.label === 'EMPTY' || (t.source && t.source.label === 'EMPTY') || (t.baseTexture && t.baseTexture.valid === false))) n += 1;
        walk(c);
      }
    };
    if (stage) walk(stage);
    return n;
  };
  const discover = () => {
    const app = appOf(null);
    const r = rendererOf(app);
    const stage = stageOf(app);
    const canvas = (app && (app.canvas || app.view)) || (r && (r.canvas || r.view)) || document.querySelector('canvas');
    if (!stage || !canvas || !canvas.getBoundingClientRect) return null;
    const box = canvas.getBoundingClientRect();
    const screen = (r && r.screen) || { width: canvas.width, height: canvas.height };
    const sx = box.width / (screen.width || 1), sy = box.height / (screen.height || 1);
    const names = new Set(window.__tier2KeyNames || []);
    const interactive = [], objects = [];
    let pointer = false;
    const events = (o) => (o && o._events ? Object.keys(o._events) : []);
    const place = (o) => {
      let b = null;
      try { b = o.getBounds(); } catch (e) { return null; }
      if (!b || !isFinite(b.x) || !isFinite(b.y)) return null;
      const x = b.x + b.width / 2, y = b.y + b.height / 2;
      if (x < 0 || y < 0 || x > screen.width || y > screen.height) return null;
      return [Math.round(box.left + x * sx), Math.round(box.top + y * sy), Math.round(b.width * sx), Math.round(b.height * sy)];
    };
    const walk = (o, depth) => {
      for (const c of children(o).slice(0, 300)) {
        if (!visibleInTree(c)) continue;
        const listens = events(c).some((e) => /^(pointer|mouse|touch)(down|up|tap)$|^(click|tap)$/.test(e));
        const live = c.eventMode === 'static' || c.eventMode === 'dynamic' || c.interactive === true;
        if (live && listens) {
          pointer = true;
          const p = place(c); if (p) interactive.push(p);
        } else if (depth < 6) {
          const p = place(c); if (p && p[2] >= 8 && p[3] >= 8 && !children(c).length) objects.push(p);
        }
        if (depth < 6) walk(c, depth + 1);
      }
    };
    if (events(stage).some((e) => /^(pointer|mouse|touch)/.test(e)) || events(stage).includes('globalpointermove')) pointer = true;
    walk(stage, 0);
    return { codes: [], names: [...names], pointer, interactive: interactive.slice(0, 60), objects: objects.slice(0, 150),
      webglRefused: !!window.__tier2WebglRefused };
  };
  const engine = { info, snapshot, missingTextures, discover, app: () => appOf(null), frame: () => info(window.__TIER2__ && window.__TIER2__.game).frame };
  Object.defineProperty(window, '__tier2Engine', { value: engine, writable: false });
})();
