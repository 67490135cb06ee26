// The PixiJS pack's in-page engine adapter (tier2/packs/engine.py), installed after tier2's clock init script in
// every validation page. A tier2 game's hook ({app, scenes, frame}: contract mode) names its app, scenes and frame
// counter. Generic mode: it finds the renderer, the stage and (when there is one) the Application of
// a PixiJS game that has no tier2 hook — PixiJS 7 and 8, minified bundles too — and answers the validators'
// questions through window.__tier2Engine: info() (booted, its "scenes", renderer, loop frame), frame(),
// snapshot() (the stage's display tree under stable ids), missingTextures() (sprites whose image did not load)
// and discover() (the key names its DOM listeners compare against, its pointer-interactive display objects and
// other sizeable ones, in page coordinates). It only observes: no game state changed.
//
// How the game is found, without the game's cooperation (every way feeds the same record):
// * PixiJS 8 (and 7.3+) call globalThis.__PIXI_APP_INIT__(app) / __PIXI_RENDERER_INIT__(renderer) for devtools;
// * every PixiJS version's EventSystem (InteractionManager before 7) binds its DOM handlers to itself, and holds
//   the renderer: the first bind() whose receiver has setTargetElement and (_)onPointerDown reveals it;
// * a game that publishes its app for the devtools (globalThis.__PIXI_APP__ = app).
// A renderer's screen renders (not render-to-texture) are counted (the loop's frame counter), and the last
// container rendered to the screen is the stage.
(() => {
  if (window.__tier2Engine) return;
  const found = {renderers: [], app: null};
  const MAX_OBJECTS = 400;
  const tag = (o) => {
    if (!o.__t2id) Object.defineProperty(o, '__t2id', {value: (window.__t2ids = (window.__t2ids || 0) + 1)});
    return o.__t2id;
  };
  const adoptRenderer = (r) => {
    if (!r || typeof r !== 'object' || typeof r.render !== 'function' || r.__t2rec) return;
    const rec = {r, renders: 0, stage: null};
    Object.defineProperty(r, '__t2rec', {value: rec});
    const render = r.render;
    r.render = function (...args) {
      const a = args[0];
      const options = a && !a.children && typeof a === 'object' ? a : null;  // v8: render({container, target})
      const root = options ? options.container : a;
      const offscreen = options ? !!(options.target || options.renderTexture) : args[1] !== undefined && args[1] !== null;
      if (!offscreen && root && root.children) {
        rec.renders += 1;
        rec.stage = root;
      }
      return render.apply(this, args);
    };
    found.renderers.push(rec);
  };
  const adoptApp = (app) => {
    if (!app || typeof app !== 'object') return;
    found.app = found.app || app;
    if (app.renderer) adoptRenderer(app.renderer);
  };
  // devtools hooks: ours first, then whatever the page installs (kept)
  for (const [name, adopt] of [['__PIXI_APP_INIT__', adoptApp], ['__PIXI_RENDERER_INIT__', adoptRenderer]]) {
    let page = null;
    const hook = (x, ...rest) => {
      try { adopt(x); } catch (e) { /* observing only */ }
      return typeof page === 'function' ? page(x, ...rest) : undefined;
    };
    Object.defineProperty(globalThis, name, {configurable: true, get: () => hook, set: (v) => { page = v; }});
  }
  let published = null;
  Object.defineProperty(globalThis, '__PIXI_APP__', {configurable: true, get: () => published,
    set: (v) => { published = v; try { adoptApp(v); } catch (e) { /* observing only */ } }});
  const realBind = Function.prototype.bind;
  Function.prototype.bind = function (thisArg, ...rest) {
    if (thisArg && typeof thisArg === 'object' && typeof thisArg.setTargetElement === 'function'
        && ('onPointerDown' in thisArg || '_onPointerDown' in thisArg) && !thisArg.__t2seen) {
      Object.defineProperty(thisArg, '__t2seen', {value: true});
      // the constructor sets .renderer (before or after its binds): read it once the constructor has returned
      queueMicrotask(() => { try { adoptRenderer(thisArg.renderer); } catch (e) { /* observing only */ } });
    }
    return realBind.call(this, thisArg, ...rest);
  };

  const canvasOf = (r) => r.canvas || r.view || null;
  // the tier2 hook's game ({app, scenes, frame}) when the page has one
  const hooked = () => (window.__TIER2__ && window.__TIER2__.game) || null;
  const appOf = (game) => (game && game.app) || (game && game.stage && game.renderer ? game : null);
  const primary = () => {
    const app = appOf(hooked());
    if (app) adoptApp(app);
    if (found.app && found.app.renderer) adoptRenderer(found.app.renderer);
    let best = null;
    for (const rec of found.renderers) {
      const c = canvasOf(rec.r);
      const shown = !!(c && c.isConnected);
      if (!best || (shown && !best.shown) || (shown === best.shown && rec.renders > best.rec.renders)) best = {rec, shown};
    }
    return best ? best.rec : null;
  };
  const stageOf = (rec) => {
    const app = appOf(hooked()) || found.app;
    return (rec && (rec.stage || rec.r.lastObjectRendered || (app && app.stage))) || null;
  };
  const kids = (o) => (o && Array.isArray(o.children) ? o.children : []);
  const shown = (o) => o && o.visible !== false && o.renderable !== false && o.alpha !== 0;
  const kind = (r) => {
    if (!r) return null;
    if (typeof r.name === 'string' && r.name) return r.name === 'gl' ? 'webgl' : r.name;  // v8: webgl | webgpu
    if (r.gl) return 'webgl';
    if (r.gpu) return 'webgpu';
    return r.context || r.canvasContext ? 'canvas' : (r.type === undefined ? null : String(r.type));
  };
  const typeOf = (o) => {
    if (typeof o.text === 'string') return 'Text';
    if (o.geometry && o.geometry.graphicsData || o.context && Array.isArray(o.context.instructions)) return 'Graphics';
    if (o.texture && typeof o.texture === 'object') return typeof o.currentFrame === 'number' ? 'AnimatedSprite' : 'Sprite';
    return 'Container';  // never by its children: an empty container getting its first one is not a new object
  };
  const screenOf = (rec) => (rec && rec.r.screen) || {width: 800, height: 600};
  const boundsOf = (o) => {
    try {
      const b = o.getBounds();
      return b && isFinite(b.x) && isFinite(b.width) ? b : null;
    } catch (e) { return null; }
  };
  // "scenes": the screens a game swaps — the visible containers (with children of their own, covering at least a
  // quarter of the screen) under the stage, below any chain of single containers (named in the scene too: a
  // screen swapped inside a root container is a new scene); the chain alone, or "stage", when there is something
  // on the stage but no such screen
  const nameOf = (o) => String(o.label || o.name || (o.constructor && o.constructor.name) || 'Container') + '#' + tag(o);
  const scenes = (rec) => {
    const stage = stageOf(rec);
    if (!stage) return [];
    let node = stage;
    const chain = [];
    for (let depth = 0; depth < 4; depth++) {
      const visible = kids(node).filter(shown);
      if (visible.length !== 1 || !kids(visible[0]).length) break;
      node = visible[0];
      chain.push(nameOf(node));
    }
    const s = screenOf(rec), area = Math.max(1, s.width * s.height);
    const prefix = chain.length ? chain.join('/') + '/' : '';
    const names = [];
    for (const o of kids(node).filter(shown).slice(0, 40)) {
      if (!kids(o).length) continue;
      const b = boundsOf(o);
      if (!b || b.width * b.height < area / 4) continue;
      names.push(prefix + nameOf(o));
    }
    if (names.length) return names;
    if (chain.length) return [chain.join('/')];
    return kids(stage).some(shown) ? ['stage'] : [];
  };
  const info = (given) => {
    const game = given || hooked();
    if (game) adoptApp(appOf(game));
    const rec = primary();
    const own = game && game.scenes && typeof game.scenes.active === 'function';
    const sc = own ? game.scenes.active() : (rec ? scenes(rec) : []);
    const frame = game && typeof game.frame === 'function' ? game.frame()
      : game && typeof game.frames === 'number' ? game.frames : (rec ? rec.renders : null);
    return {game: !!rec, booted: !!(rec && (own || rec.renders > 0) && stageOf(rec)), scenes: sc,
            renderer: kind(rec && rec.r), frame, canvas: !!document.querySelector('canvas')};
  };
  // depth-first over the display tree, in render order
  const walk = (root, visit, onlyShown) => {
    let n = 0;
    const go = (o) => {
      if (n >= MAX_OBJECTS || (onlyShown && !shown(o))) return;
      n += 1;
      visit(o);
      for (const c of kids(o)) go(c);
    };
    for (const c of kids(root)) go(c);
  };
  const r0 = (v) => (typeof v === 'number' && isFinite(v)) ? Math.round(v) : null;
  const snapshot = () => {
    const rec = primary();
    const stage = stageOf(rec);
    if (!stage) return null;
    const objects = {};
    walk(stage, (o) => {
      const t = o.texture && typeof o.texture === 'object' ? o.texture : null;
      const entry = {type: typeOf(o), x: r0(o.x), y: r0(o.y), visible: shown(o) ? 1 : 0, alpha: r0((o.alpha || 0) * 100),
        rot: r0((o.rotation || 0) * 100), text: typeof o.text === 'string' ? o.text.slice(0, 60) : null,
        frame: typeof o.currentFrame === 'number' ? String(o.currentFrame) : (t ? 't' + tag(t) : null)};
      if (entry.type === 'Graphics') {  // redrawn shapes (a snake drawn each frame) change their bounds, not x/y
        try {
          const b = o.getLocalBounds();
          entry.shape = [b.x, b.y, b.width, b.height].map((v) => Math.round(v)).join(',');
        } catch (e) { entry.shape = null; }
      }
      objects['#' + tag(o)] = entry;
    }, false);
    return {scenes: scenes(rec).join(','), objects};
  };
  const broken = (t) => {
    const src = t && (t.source || t.baseTexture);
    const img = src && (src.resource && (src.resource.source || src.resource));
    return typeof HTMLImageElement !== 'undefined' && img instanceof HTMLImageElement && img.complete
      && img.naturalWidth === 0;
  };
  // a tier2 game draws an asset it lacks with the empty texture; any other game may use it on purpose (a hit area)
  const empty = (t) => t.label === 'EMPTY' || (t.source && t.source.label === 'EMPTY');
  const missingTextures = () => {
    const stage = stageOf(primary());
    const own = !!hooked();
    let n = 0;
    if (stage) {
      walk(stage, (o) => {
        if (o.texture && typeof o.text !== 'string' && (broken(o.texture) || (own && empty(o.texture)))) n++;
      }, true);
    }
    return n;
  };
  const POINTER = /^(pointer|mouse|touch|click|tap|rightclick|rightdown|rightup|global(pointer|mouse|touch)move)/;
  const listens = (o) => {
    if (o._events && Object.keys(o._events).some((e) => POINTER.test(e))) return true;
    for (const k of ['onpointerdown', 'onpointerup', 'onpointertap', 'onclick', 'ontap', 'onmousedown',
      'ontouchstart', 'onglobalpointermove', 'onpointermove']) if (typeof o[k] === 'function') return true;
    return false;
  };
  const interactive = (o) => o.eventMode === 'static' || o.eventMode === 'dynamic' || o.interactive === true;
  const discover = () => {
    const rec = primary();
    const stage = stageOf(rec);
    const c = rec && canvasOf(rec.r);
    if (!stage || !c || !c.getBoundingClientRect) return null;
    const box = c.getBoundingClientRect(), s = screenOf(rec);
    const sx = box.width / (s.width || box.width || 1), sy = box.height / (s.height || box.height || 1);
    const inter = [], objects = [];
    let pointer = interactive(stage) && listens(stage);
    walk(stage, (o) => {
      const listening = interactive(o) && listens(o);
      pointer = pointer || listening;
      const b = boundsOf(o);
      if (!b) return;
      const cx = b.x + b.width / 2, cy = b.y + b.height / 2;
      if (cx < 0 || cy < 0 || cx > s.width || cy > s.height) return;
      const p = [Math.round(box.left + cx * sx), Math.round(box.top + cy * sy), Math.round(b.width * sx),
                 Math.round(b.height * sy)];
      if (listening) inter.push(p);
      else if (!kids(o).length && p[2] >= 8 && p[3] >= 8) objects.push(p);
    }, true);
    return {codes: [], names: [...(window.__tier2KeyNames || [])], pointer, interactive: inter.slice(0, 60),
            objects: objects.slice(0, 150), webglRefused: !!window.__tier2WebglRefused};
  };
  const engine = {info, snapshot, missingTextures, discover, frame: () => info().frame,
    // the app (the hook's, the one PixiJS announced), else what stands for it: the renderer and its stage
    app: () => {
      const app = appOf(hooked()) || found.app;
      if (app) return app;
      const rec = primary();
      return rec ? {renderer: rec.r, stage: stageOf(rec)} : null;
    }};
  Object.defineProperty(window, '__tier2Engine', {value: engine, writable: false});
})();
