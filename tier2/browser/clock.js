// tier2 virtual clock: installed before any page script. requestAnimationFrame callbacks run only when the
// validator calls __tier2Clock.advance(ms), one batch per 16.667 virtual ms; performance.now() and Date.now()
// follow virtual time. Between advances nothing runs: no CPU burnt, fully reproducible.
(() => {
  if (window.__tier2Clock) return;
  const FRAME = 1000 / 60;
  const realPerfNow = performance.now.bind(performance);
  const realDateNow = Date.now;
  const dateBase = realDateNow();
  let now = realPerfNow();
  const start = now;
  let queue = [];
  let nextId = 1;
  const cancelled = new Set();
  const clock = {
    frames: 0,
    realMs: 0,  // real time spent in frame callbacks (WebGL's own cost shows in the page's next task, see step())
    installed: true,
    now: () => now,
    advance(ms) {
      const t0 = realPerfNow();
      const steps = Math.max(1, Math.round(ms / FRAME));
      for (let i = 0; i < steps; i++) {
        now += FRAME;
        const batch = queue;
        queue = [];
        for (const [id, cb] of batch) {
          if (cancelled.has(id)) { cancelled.delete(id); continue; }
          // as in a browser: a throwing callback is an uncaught error (reported), the other callbacks still run
          try { cb(now); } catch (e) { reportError(e); }
        }
        clock.frames += 1;
      }
      clock.realMs += realPerfNow() - t0;
      return clock.frames;
    },
    pending: () => queue.length,
  };
  window.requestAnimationFrame = (cb) => { const id = nextId++; queue.push([id, cb]); return id; };
  window.cancelAnimationFrame = (id) => { cancelled.add(id); };
  performance.now = () => now;
  Date.now = () => dateBase + (now - start);
  // error latch: records uncaught errors even before the validator attaches listeners
  window.__tier2Errors = [];
  window.addEventListener('error', (e) => {
    window.__tier2Errors.push(String((e.error && e.error.stack) || e.message || e));
  });
  window.addEventListener('unhandledrejection', (e) => {
    window.__tier2Errors.push('unhandledrejection: ' + String((e.reason && e.reason.stack) || e.reason));
  });
  // blocking dialogs would hang a headless page: record and auto-dismiss
  window.__tier2Dialogs = [];
  window.alert = (m) => { window.__tier2Dialogs.push('alert: ' + m); };
  window.confirm = (m) => { window.__tier2Dialogs.push('confirm: ' + m); return false; };
  window.prompt = (m) => { window.__tier2Dialogs.push('prompt: ' + m); return null; };
  // engine introspection for games without a test hook is the pack's engine adapter (its page.js, installed
  // right after this script): it finds the game object and defines window.__tier2Engine
  // controls discovery: key names that keyboard listeners compare against (read from the listener's source)
  const keyNames = new Set();
  window.__tier2KeyNames = keyNames;
  window.__tier2ScanKeys = (fn) => {
    let src = '';
    try { src = String(fn).slice(0, 20000); } catch (e) { return; }
    for (const m of src.matchAll(/["'`](Arrow(?:Up|Down|Left|Right)|Key[A-Z]|Digit[0-9]|Space|Enter|Escape)["'`]/g))
      keyNames.add(m[1]);
    for (const m of src.matchAll(/\.(?:key|code)\s*===?\s*["'`]([a-zA-Z0-9 ])["'`]/g))
      keyNames.add(m[1] === ' ' ? 'Space' : /[0-9]/.test(m[1]) ? 'Digit' + m[1] : 'Key' + m[1].toUpperCase());
    for (const m of src.matchAll(/\.(?:keyCode|which)\s*===?\s*(\d+)/g)) keyNames.add('#' + m[1]);
  };
  const realAdd = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, fn, ...rest) {
    if ((type === 'keydown' || type === 'keyup' || type === 'keypress') && fn) window.__tier2ScanKeys(fn);
    return realAdd.call(this, type, fn, ...rest);
  };
  // Canvas-renderer runs: refuse WebGL contexts so an engine's automatic renderer choice falls back to Canvas
  // (software WebGL costs ~10x more per frame); a separate default-renderer session checks WebGL itself.
  if (window.__tier2ForceCanvas) {
    const realGetContext = HTMLCanvasElement.prototype.getContext;
    HTMLCanvasElement.prototype.getContext = function (type, ...rest) {
      if (/webgl/i.test(String(type))) { window.__tier2WebglRefused = true; return null; }
      return realGetContext.call(this, type, ...rest);
    };
  }
  Object.defineProperty(window, '__tier2Clock', { value: clock, writable: false });
})();
