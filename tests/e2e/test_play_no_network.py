"""The Studio's play route in a viewer's ordinary Chromium (none of the validator's network flags; issue #21, M3):
the game's first script finds WebRTC, WebTransport and WebSocket refusing; no nested frame survives to run a script
of its own (srcdoc ones, in the page and in closed shadow roots, declared or attached; a ``javascript:`` one); an
SVG of the game that the frame is navigated to runs no script — and the STUN/TCP listeners a hostile game aims
at on 127.0.0.2 receive nothing. Real service (uvicorn, Redis), real Chromium."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from tests.e2e.helpers import serve_in_process
from tier2.browser import BrowserPool
from tier2.settings.loader import REPO_ROOT, Settings
from tier2.store.keys import Keys
from tier2.store.run_store import RunStore

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]
KEY = "play-key-of-tenant-a-0001"

#: a nested frame's own script (also inline in the game page: its hash is then in the page's policy)
CHILD = ("try { const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.2:%(udp)d'}]}); "
         "pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)); } catch (e) {}")
GAME = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><script>
const STUN = {iceServers: [{urls: 'stun:127.0.0.2:%(udp)d'}]};
const attempt = (make) => { try { make(); return 'made'; } catch (e) { return e.name; } };
const gather = (W) => attempt(() => { const pc = new W.RTCPeerConnection(STUN); pc.createDataChannel('x');
  pc.createOffer().then((o) => pc.setLocalDescription(o)); });
window.__seen = {rtc: gather(window), legacy: typeof webkitRTCPeerConnection === 'function' ?
  attempt(() => new webkitRTCPeerConnection(STUN)) : 'absent',
  socket: attempt(() => new WebSocket('ws://127.0.0.2:%(tcp)d/')),
  transport: attempt(() => new WebTransport('https://127.0.0.2:%(udp)d/'))};
</script></head><body><script>@CHILD@</script>
<iframe srcdoc="<script>@CHILD@</script>"></iframe>
<div><template shadowrootmode="closed"><iframe srcdoc="<script>@CHILD@</script>"></iframe></template></div>
<script>
const childHtml = '<script>' + @SOURCE@ + '<' + '/script>';
const nested = document.createElement('iframe'); document.body.appendChild(nested);
window.__seen.nested = gather(nested.contentWindow);
const host = document.createElement('div'); document.body.appendChild(host);
const hidden = document.createElement('iframe'); hidden.srcdoc = childHtml;
host.attachShadow({mode: 'closed'}).appendChild(hidden);
const scripted = document.createElement('iframe'); scripted.src = 'javascript:' + JSON.stringify(childHtml);
document.body.appendChild(scripted);
document.write('<div><template shadowrootmode="closed"><iframe srcdoc="' + childHtml + '"></iframe></template></div>');
Promise.resolve().then(() => { window.__seen.frames = window.length; window.__seen.done = true; });
</script></body></html>""".replace("@SOURCE@", json.dumps(CHILD)).replace("@CHILD@", CHILD)
SVG = """<svg xmlns="http://www.w3.org/2000/svg"><script>window.__ran = true;
const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.2:%(udp)d'}]}); pc.createDataChannel('x');
pc.createOffer().then((o) => pc.setLocalDescription(o));</script></svg>"""


class Outside:
    """A TCP and a UDP socket on 127.0.0.2 recording every connection and datagram."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.tcp_sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp_sock.bind(("127.0.0.2", 0))
        self.tcp_sock.listen(8)
        self.udp_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp_sock.bind(("127.0.0.2", 0))
        self.tcp, self.udp = self.tcp_sock.getsockname()[1], self.udp_sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()
        threading.Thread(target=self._receive, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, peer = self.tcp_sock.accept()
            except OSError:
                return
            conn.close()
            self.hits.append(f"tcp from {peer}")

    def _receive(self) -> None:
        while True:
            try:
                _, peer = self.udp_sock.recvfrom(2048)
            except OSError:
                return
            self.hits.append(f"udp from {peer}")

    def close(self) -> None:
        self.tcp_sock.close()
        self.udp_sock.close()


async def test_the_play_page_gives_a_game_no_webrtc_and_no_socket(tmp_path: Path, redis_url: str,
                                                                  viewer_pool: BrowserPool,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The viewer's browser is a `viewer_pool` one: none of the validator's network flags."""
    outside = Outside()
    monkeypatch.setenv("TIER2_API_KEYS", f"tenant-a:{KEY}")
    settings = Settings(workspaces=tmp_path / "ws", redis_url=redis_url, config_dir=REPO_ROOT / "config")
    project = settings.workspaces / "game-net"
    (project / "dist").mkdir(parents=True)
    (project / "dist/index.html").write_text(GAME % {"udp": outside.udp, "tcp": outside.tcp})
    (project / "dist/evil.svg").write_text(SVG % {"udp": outside.udp})
    store = RunStore.from_url(redis_url, Keys(prefix=settings.key_prefix))
    await store.accept_run("r-net", {"status": "delivered", "brief": "a hostile game", "tenant": "tenant-a",
                                     "project_id": "game-net", "project_dir": str(project)},
                           project_id="game-net", dispatch=False, tenant="tenant-a")
    try:
        async with serve_in_process(settings, redis_url, workers=0) as api:
            grant = (await api.post("/v1/runs/r-net/play-token", headers={"Authorization": f"Bearer {KEY}"})).json()
            served = await api.get(grant["url"])
            assert served.headers["content-security-policy"].startswith("sandbox allow-scripts;")
            assert "connect-src" in served.headers["content-security-policy"]
            svg_url = grant["url"].replace("index.html", "evil.svg")
            svg_csp = (await api.get(svg_url)).headers["content-security-policy"]
            assert svg_csp.startswith("sandbox;") and "allow-scripts" not in svg_csp
            context = await viewer_pool.new_context()
            try:
                page = await context.new_page()
                await page.goto(f"{api.base_url}/studio/")
                for name, url in (("game", grant["url"]), ("svg", svg_url)):  # as the Studio embeds the game
                    await page.evaluate("([id, src]) => { const f = document.createElement('iframe'); f.id = id; "
                                        "f.sandbox = 'allow-scripts'; f.src = src; document.body.appendChild(f); }",
                                        [name, url])
                game = await (await page.wait_for_selector("iframe#game")).content_frame()
                assert game is not None
                await game.wait_for_function("() => window.__seen && window.__seen.done")
                seen = await game.evaluate("window.__seen")
                svg = await (await page.wait_for_selector("iframe#svg")).content_frame()
                assert svg is not None
                await svg.wait_for_load_state("load")
                svg_ran = await svg.evaluate("typeof window.__ran")
            finally:
                await context.close()
    finally:
        await store.close()
        outside.close()
    legacy = seen.pop("legacy")
    assert seen == {"rtc": "NotSupportedError", "socket": "NotSupportedError", "transport": "NotSupportedError",
                    "nested": "SecurityError", "frames": 0, "done": True}, seen
    assert legacy in ("NotSupportedError", "absent")  # Chromium may have dropped the prefixed name
    assert svg_ran == "undefined"
    assert outside.hits == []
