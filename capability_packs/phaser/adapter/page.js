// The Phaser pack's in-page engine adapter (tier2/packs/engine.py), installed after tier2's clock init script in
// every validation page. It finds the Phaser.Game of a game without the tier2 hook and answers the validators'
// questions about it through window.__tier2Engine: info() (booted, active scenes, renderer, loop frame),
// frame(), snapshot() (the active scenes' display lists under stable ids), missingTextures() (objects drawn with
// Phaser's placeholder for a texture that did not load) and discover() (the keys, pointer listeners and
// interactive objects the game registered, in page coordinates). It only observes: no game state changed.
(() => {
  if (window.__tier2Engine) return;
  // Phaser's Game.boot binds game.step to the game, so the first bind() whose receiver looks like a Phaser.Game
  // reveals it (Phaser 3 and 4 alike, minified bundles too)
  const realBind = Function.prototype.bind;
  Function.prototype.bind = function (thisArg, ...rest) {
    if (!window.__tier2Game && thisArg && typeof thisArg === 'object' && thisArg.loop && thisArg.scene
        && thisArg.config && 'isBooted' in thisArg) {
      window.__tier2Game = thisArg;
    }
    return realBind.call(this, thisArg, ...rest);
  };
  const RENDERERS = {1: 'canvas', 2: 'webgl'};  // Phaser.CANVAS, Phaser.WEBGL
  const DIGITS = ['ZERO', 'ONE', 'TWO', 'THREE', 'FOUR', 'FIVE', 'SIX', 'SEVEN', 'EIGHT', 'NINE'];
  const KEYS = {SPACE: 'Space', ENTER: 'Enter', ESC: 'Escape', LEFT: 'ArrowLeft', RIGHT: 'ArrowRight', UP: 'ArrowUp',
    DOWN: 'ArrowDown', SHIFT: 'Shift', CTRL: 'Control', ALT: 'Alt', TAB: 'Tab', BACKSPACE: 'Backspace'};
  DIGITS.forEach((d, i) => { KEYS[d] = 'Digit' + i; });
  // the keyboard plugin's event key names (keydown-SPACE, keydown-A) -> KeyboardEvent.code names
  const keyName = (n) => (n && n.length === 1 && /[A-Z]/i.test(n)) ? 'Key' + n.toUpperCase() : (KEYS[n] || null);
  const sceneKeys = (g) => (g && g.scene && g.scene.getScenes) ? g.scene.getScenes(true).map((s) => s.sys.settings.key) : [];
  const info = (game) => {
    const g = game || window.__tier2Game;
    const r = g && g.renderer ? g.renderer.type : null;
    return {game: !!g, booted: !!(g && g.isBooted), scenes: sceneKeys(g),
            renderer: r === null ? null : (RENDERERS[r] || String(r)), frame: g && g.loop ? g.loop.frame : null,
            canvas: !!document.querySelector('canvas')};
  };
  // objects get a stable id (a non-enumerable tag) so a spawned bullet does not shift every other object's key
  const snapshot = () => {
    const g = window.__tier2Game;
    if (!g || !g.scene) return null;
    window.__t2ids = window.__t2ids || 1;
    const r = (v) => (typeof v === 'number' && isFinite(v)) ? Math.round(v) : null;
    const active = g.scene.getScenes ? g.scene.getScenes(true) : [];
    const objects = {};
    for (const s of active) {
      const list = (s.children && s.children.list) ? s.children.list : [];
      for (const o of list.slice(0, 120)) {
        if (!o.__t2id) Object.defineProperty(o, '__t2id', {value: window.__t2ids++, enumerable: false});
        objects[s.sys.settings.key + '#' + o.__t2id] = {type: o.type, x: r(o.x), y: r(o.y), visible: o.visible ? 1 : 0,
          alpha: r((o.alpha || 0) * 100), text: (typeof o.text === 'string') ? o.text.slice(0, 60) : null,
          frame: (o.frame && o.frame.name !== undefined) ? String(o.frame.name) : null};
      }
    }
    return {scenes: active.map((s) => s.sys.settings.key).join(','), objects};
  };
  const missingTextures = () => {
    const g = window.__tier2Game; let n = 0;
    if (!g || !g.scene || !g.scene.getScenes) return 0;
    const walk = (list) => { for (const o of list.slice(0, 500)) {
      if (o.visible !== false && o.texture && o.texture.key === '__MISSING') n++;
      if (o.list && o.list.length) walk(o.list);
    } };
    for (const s of g.scene.getScenes(true)) walk((s.children && s.children.list) || []);
    return n;
  };
  const discover = () => {
    const g = window.__tier2Game; const c = g && g.canvas;
    if (!g || !g.scene || !c) return null;
    const box = c.getBoundingClientRect();
    const sx = box.width / (g.scale ? g.scale.width : c.width), sy = box.height / (g.scale ? g.scale.height : c.height);
    const codes = new Set(); const names = new Set(window.__tier2KeyNames || []); let pointer = false;
    const interactive = []; const objects = [];
    const events = (em) => (em && em._events) ? Object.keys(em._events) : [];
    const handlers = (em, name) => { const h = em._events[name]; return Array.isArray(h) ? h : (h ? [h] : []); };
    const place = (s, o) => {
      let b = null;
      try { b = o.getBounds ? o.getBounds() : null; } catch (e) { b = null; }
      const w = b ? b.width : (o.displayWidth || o.width || 0), h = b ? b.height : (o.displayHeight || o.height || 0);
      let x = b ? b.centerX : o.x, y = b ? b.centerY : o.y;
      if (typeof x !== 'number' || !isFinite(x) || typeof y !== 'number' || !isFinite(y)) return null;
      const cam = s.cameras && s.cameras.main;
      if (cam) {
        const z = cam.zoom || 1, fx = o.scrollFactorX === undefined ? 1 : o.scrollFactorX;
        const fy = o.scrollFactorY === undefined ? 1 : o.scrollFactorY;
        x = (x - cam.scrollX * fx - cam.width / 2) * z + cam.width / 2 + cam.x;
        y = (y - cam.scrollY * fy - cam.height / 2) * z + cam.height / 2 + cam.y;
      }
      const gw = g.scale ? g.scale.width : c.width, gh = g.scale ? g.scale.height : c.height;
      if (x < 0 || y < 0 || x > gw || y > gh) return null;
      return [Math.round(box.left + x * sx), Math.round(box.top + y * sy), Math.round(w * sx), Math.round(h * sy)];
    };
    const visible = (o) => {
      for (let p = o; p; p = p.parentContainer) if (p.visible === false) return false;
      return true;
    };
    for (const s of g.scene.getScenes(true)) {
      const kb = s.input && s.input.keyboard;
      if (kb) {
        for (const k of (kb.keys || [])) if (k && k.keyCode) codes.add(k.keyCode);
        for (const e of events(kb)) {
          if (e.startsWith('keydown-') || e.startsWith('keyup-')) { const k = keyName(e.split('-')[1]); if (k) names.add(k); }
          if (e === 'keydown' || e === 'keyup') for (const h of handlers(kb, e)) window.__tier2ScanKeys(h.fn);
        }
      }
      if (s.input && events(s.input).some((e) => /^(game)?pointer(down|up)/.test(e))) pointer = true;
      const list = (s.input && s.input._list && s.input._list.length) ? s.input._list : [];
      for (const o of list.slice(0, 200)) {
        if (!o.input || !o.input.enabled || !visible(o) || o.active === false) continue;
        const p = place(s, o); if (p) interactive.push(p);
      }
      for (const o of ((s.children && s.children.list) || []).slice(0, 300)) {
        if (!visible(o) || o.input) continue;
        const p = place(s, o); if (p && p[2] >= 8 && p[3] >= 8) objects.push(p);
      }
    }
    const mgr = g.input && g.input.keyboard;
    for (const code of (mgr && mgr.captures) || []) codes.add(code);
    return {codes: [...codes], names: [...names], pointer, interactive: interactive.slice(0, 60),
            objects: objects.slice(0, 150), webglRefused: !!window.__tier2WebglRefused};
  };
  const engine = {info, snapshot, missingTextures, discover,
    frame: () => { const g = window.__tier2Game; return g && g.loop ? g.loop.frame : null; }};
  Object.defineProperty(window, '__tier2Engine', { value: engine, writable: false });
})();
