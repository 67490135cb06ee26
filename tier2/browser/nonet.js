// tier2: no network from a game page but its own files. Runs before the game's first script, in every frame.
// WebRTC (a peer connection sends STUN/TURN datagrams that no request filter sees) and WebTransport (QUIC) are
// replaced by constructors that refuse; with `sockets`, WebSocket too (the Studio's play page: the validator's
// browser closes every WebSocket itself and reports it). Each refusal is noted on the console with the marker below
// (the validator reads it into the blocked requests); the page cannot restore the originals.
(() => {
  const OPTIONS = { sockets: false }; // replaced by tier2.browser.network.no_network_script
  const MARK = '__tier2_blocked__ ';
  const note = Function.prototype.bind.call(console.debug, console);
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
    for (const u of urlsOf(name, arguments)) note(MARK + u.slice(0, 300) + ' [' + kind + ']');
    throw new DOMException(name + ' is disabled: a tier2 game has no network', 'NotSupportedError');
  };
  const fix = (name, value) => {
    try {
      Object.defineProperty(globalThis, name, { value, writable: false, configurable: false, enumerable: false });
    } catch (e) { /* already fixed */ }
  };
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    if (!/^(webkit)?RTC/.test(name)) continue;
    if (/PeerConnection$/.test(name)) fix(name, refuser(name, 'webrtc'));
    else { try { delete globalThis[name]; } catch (e) { /* not configurable */ } }
  }
  fix('RTCPeerConnection', refuser('RTCPeerConnection', 'webrtc'));
  fix('WebTransport', refuser('WebTransport', 'webtransport'));
  if (OPTIONS.sockets) fix('WebSocket', refuser('WebSocket', 'websocket'));
})();
