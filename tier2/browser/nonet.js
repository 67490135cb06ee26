// tier2: no network from a game page but its own files. Runs before the game's first script.
// WebRTC (a peer connection sends STUN/TURN datagrams that no request filter sees) and WebTransport (QUIC) are
// replaced by constructors that refuse. With `viewer` (the Studio's play page, in a browser that has a network
// behind it) WebSocket refuses too, and no nested frame may exist: a srcdoc frame's scripts would run without this
// script first (the validator's browser runs it in every frame itself and closes WebSockets). Each refusal is
// noted on the console with the marker below (the validator reads it into the blocked requests); the page cannot
// restore the originals, and what this script calls later was taken before the game's code could replace it.
(() => {
  const OPTIONS = { viewer: false }; // replaced by tier2.browser.network.no_network_script
  const MARK = '__tier2_blocked__ ';
  const G = globalThis;
  const apply = Reflect.apply;
  const debug = console.debug;
  const note = (text) => { try { apply(debug, console, [MARK + text]); } catch (e) { /* no console */ } };
  const urlsOf = (name, args) => {
    if (/PeerConnection$/.test(name)) {
      const servers = (args[0] && args[0].iceServers) || [];
      const urls = [];
      for (const s of servers) { for (const u of [].concat((s && s.urls) || [])) urls.push(String(u)); }
      return urls.length ? urls : [name];
    }
    return [String(args[0] === undefined ? name : args[0])];
  };
  const refuser = (name, kind) => function () {
    for (const u of urlsOf(name, arguments)) note(u.slice(0, 300) + ' [' + kind + ']');
    throw new DOMException(name + ' is disabled: a tier2 game has no network', 'NotSupportedError');
  };
  const fix = (owner, name, value) => {
    try {
      Object.defineProperty(owner, name, { value, writable: false, configurable: false, enumerable: false });
    } catch (e) { /* already fixed */ }
  };
  for (const name of Object.getOwnPropertyNames(G)) {
    if (!/^(webkit)?RTC/.test(name)) continue;
    if (/PeerConnection$/.test(name)) fix(G, name, refuser(name, 'webrtc'));
    else { try { delete G[name]; } catch (e) { /* not configurable */ } }
  }
  fix(G, 'RTCPeerConnection', refuser('RTCPeerConnection', 'webrtc'));
  fix(G, 'WebTransport', refuser('WebTransport', 'webtransport'));
  if (!OPTIONS.viewer || typeof document === 'undefined') return;
  fix(G, 'WebSocket', refuser('WebSocket', 'websocket'));

  // No nested frame: each one is removed as soon as it is in the document or in a shadow root (before its
  // document can load: that is a later task), and no markup may declare a shadow root this script cannot see.
  const FRAMES = 'iframe,frame,object,embed,fencedframe,portal';
  const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
  const nodeType = getter(Node.prototype, 'nodeType');
  const added = getter(MutationRecord.prototype, 'addedNodes');
  const listLength = getter(NodeList.prototype, 'length');
  const item = NodeList.prototype.item;
  const matches = Element.prototype.matches;
  const remove = Element.prototype.remove;
  const selectIn = Element.prototype.querySelectorAll;
  const selectInFragment = DocumentFragment.prototype.querySelectorAll;
  const observe = MutationObserver.prototype.observe;
  const each = (list, fn) => { const n = apply(listLength, list, []); for (let i = 0; i < n; i++) fn(apply(item, list, [i])); };
  const drop = (el) => { note('nested frame [frame]'); apply(remove, el, []); };
  const sweep = (node) => {
    const type = apply(nodeType, node, []);
    if (type === 1) {
      if (apply(matches, node, [FRAMES])) { drop(node); return; }
      each(apply(selectIn, node, [FRAMES]), drop);
    } else if (type === 11) each(apply(selectInFragment, node, [FRAMES]), drop);
  };
  const observer = new MutationObserver((records) => {
    for (let i = 0; i < records.length; i++) each(apply(added, records[i], []), sweep);
  });
  const watch = (root) => apply(observe, observer, [root, { childList: true, subtree: true }]);
  watch(document);
  const attachShadow = Element.prototype.attachShadow;
  fix(Element.prototype, 'attachShadow', function attachShadow_(init) {
    const root = apply(attachShadow, this, [init]);
    watch(root);
    return root;
  });
  // declarative shadow roots (closed ones are out of reach) come only from markup these parse: the attribute
  // loses its name (an ASCII case-insensitive match, done with functions taken before the game's code ran)
  const Str = String;
  const code = String.prototype.charCodeAt;
  const slice = String.prototype.slice;
  const WORD = 'shadowroot';
  const at = (s, i) => { for (let k = 0; k < WORD.length; k++) { if ((apply(code, s, [i + k]) | 32) !== apply(code, WORD, [k])) return false; } return true; };
  const tameOne = (value) => {
    const s = Str(value);
    let out = '';
    let from = 0;
    for (let i = 0; i + WORD.length <= s.length; i++) {
      if (at(s, i)) { out += apply(slice, s, [from, i]) + 'data-refused-'; from = i; i += WORD.length - 1; }
    }
    return out + apply(slice, s, [from]);
  };
  const tame = (args) => { const out = []; for (let i = 0; i < args.length; i++) out[i] = tameOne(args[i]); return out; };
  for (const [owner, name] of [[Document.prototype, 'write'], [Document.prototype, 'writeln'],
    [Element.prototype, 'setHTMLUnsafe'], [ShadowRoot.prototype, 'setHTMLUnsafe'], [Document, 'parseHTMLUnsafe']]) {
    const original = owner[name];
    if (typeof original !== 'function') continue;
    fix(owner, name, function () { return apply(original, this, tame(arguments)); });
  }
})();
