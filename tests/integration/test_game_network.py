"""No network from a game under validation (issue #21, M2), in real Chromium: a hostile page fetches another
loopback address and the service's own loopback port, opens WebSockets (from the page and from a worker), gathers
WebRTC candidates against a STUN server (from the page, a fresh frame, a srcdoc and a javascript: frame),
preconnects and opens a WebTransport; a validated loopback URL answers a redirect to another address. Listeners
bound by the test on 127.0.0.2 (TCP and UDP) and 127.0.0.1 receive nothing, and the validation report lists every
attempt as blocked."""

from __future__ import annotations

import functools
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.fixtures.fixture_games import install_game
from tier2.settings.loader import Policy
from tier2.validators import ValidationRunner
from tier2.validators.report import ValidationReport

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@dataclass
class Listeners:
    """A TCP and a UDP socket on 127.0.0.2 and a TCP one on 127.0.0.1 (a loopback service such as tier2's API):
    every connection or datagram they receive is recorded."""

    tcp: int = 0
    udp: int = 0
    local: int = 0
    hits: list[str] = field(default_factory=list)
    socks: list[socket.socket] = field(default_factory=list)

    def open(self) -> None:
        for host, kind in (("127.0.0.2", socket.SOCK_STREAM), ("127.0.0.2", socket.SOCK_DGRAM),
                           ("127.0.0.1", socket.SOCK_STREAM)):
            sock = socket.socket(socket.AF_INET, kind)
            sock.bind((host, 0))
            if kind == socket.SOCK_STREAM:
                sock.listen(16)
            self.socks.append(sock)
            threading.Thread(target=self._serve, args=(sock, f"{host} {kind.name}"), daemon=True).start()
        self.tcp, self.udp, self.local = (s.getsockname()[1] for s in self.socks)

    def _serve(self, sock: socket.socket, label: str) -> None:
        while True:
            try:
                if sock.type == socket.SOCK_STREAM:
                    conn, peer = sock.accept()
                    conn.close()
                else:
                    _, peer = sock.recvfrom(2048)
            except OSError:
                return
            self.hits.append(f"{label} from {peer}")

    def close(self) -> None:
        for sock in self.socks:
            sock.close()


@pytest.fixture
def outside() -> Iterator[Listeners]:
    listeners = Listeners()
    listeners.open()
    yield listeners
    listeners.close()


HOSTILE_JS = """
const T = 'http://127.0.0.2:%(tcp)d', STUN = {iceServers: [{urls: 'stun:127.0.0.2:%(udp)d'}]};
const gather = (W) => { try { const pc = new W.RTCPeerConnection(STUN); pc.createDataChannel('x');
  pc.createOffer().then((o) => pc.setLocalDescription(o)); } catch (e) { window.__refused.push(String(e)); } };
window.__refused = [];
fetch(T + '/fetch').catch(() => {});
fetch('http://127.0.0.1:%(local)d/v1/runs').catch(() => {});
try { new WebSocket('ws://127.0.0.2:%(tcp)d/page'); } catch (e) { window.__refused.push(String(e)); }
new Worker(URL.createObjectURL(new Blob(["new WebSocket('ws://127.0.0.2:%(tcp)d/worker')"])));
gather(window);
const frame = document.createElement('iframe'); document.body.appendChild(frame); gather(frame.contentWindow);
const link = document.createElement('link'); link.rel = 'preconnect'; link.href = T; document.head.appendChild(link);
try { new WebTransport('https://127.0.0.2:%(udp)d/wt'); } catch (e) { window.__refused.push(String(e)); }
const child = "<script>try { const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.2:%(udp)d'}]});" +
  "pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)); } catch (e) {}<" + "/script>";
const srcdoc = document.createElement('iframe'); srcdoc.srcdoc = child; document.body.appendChild(srcdoc);
const scripted = document.createElement('iframe'); scripted.src = 'javascript:' + JSON.stringify(child);
document.body.appendChild(scripted);
"""


def _hostile_game(dest: Path, ports: Listeners, script: str = HOSTILE_JS) -> Path:
    """The outside-fetch fixture game (it plays on localhost) with a hostile script before the game's."""
    game = install_game("outside-fetch", dest)
    (game / "hostile.js").write_text(script % {"tcp": ports.tcp, "udp": ports.udp, "local": ports.local})
    index = game / "index.html"
    index.write_text(index.read_text().replace('<body>', '<body><script src="hostile.js"></script>'))
    return game


async def _validate(pool, pack, target: str, out: Path) -> ValidationReport:
    policy = Policy(timeouts={"validation_s": 30, "boot_s": 10})
    return await ValidationRunner(pool, pack, policy).validate_target(target, out, mode="generic")


def _blocked(report: ValidationReport) -> list[str]:
    gate = next(g for g in report.gates if g.id == "l1.no_errors")
    return list(gate.evidence.get("blocked_requests", []))


async def test_a_served_game_reaches_nothing_and_every_attempt_is_reported(pool, pack, tmp_path: Path,
                                                                          outside: Listeners) -> None:
    game = _hostile_game(tmp_path / "game", outside)
    report = await _validate(pool, pack, str(game), tmp_path / "r")
    blocked = _blocked(report)
    assert outside.hits == []
    expected = [f"http://127.0.0.2:{outside.tcp}/fetch [fetch]", f"http://127.0.0.1:{outside.local}/v1/runs [fetch]",
                f"ws://127.0.0.2:{outside.tcp}/page [websocket]", f"ws://127.0.0.2:{outside.tcp}/worker [websocket]",
                f"stun:127.0.0.2:{outside.udp} [webrtc]", f"https://127.0.0.2:{outside.udp}/wt [webtransport]"]
    assert [e for e in expected if e not in blocked] == [], blocked
    assert report.passed, report.feedback()  # a generic game that plays without them: warnings


class _Redirecting(SimpleHTTPRequestHandler):
    """A user's game server: ``/moved/<file>`` redirects inside the origin, ``/away`` to another address."""

    away = ""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/moved/"):
            self._redirect(self.path.removeprefix("/moved"))
        elif self.path.startswith("/away"):
            self._redirect(self.away)
        else:
            super().do_GET()

    def _redirect(self, to: str) -> None:
        self.send_response(302)
        self.send_header("Location", to)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


async def test_a_redirect_off_the_validated_origin_is_refused(pool, pack, tmp_path: Path,
                                                              outside: Listeners) -> None:
    away = f"http://127.0.0.2:{outside.tcp}/after"
    game = _hostile_game(tmp_path / "game", outside, "fetch('/away').catch(() => {});\n"
                         "const img = new Image(); img.src = '/away?img'; document.body.appendChild(img);\n")
    index = game / "index.html"  # the game's own script through a redirect inside the origin: followed
    index.write_text(index.read_text().replace('src="game.js"', 'src="moved/game.js"'))
    handler = type("Handler", (_Redirecting,), {"away": away})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(game)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        report = await _validate(pool, pack, f"{origin}/index.html", tmp_path / "r")
    finally:
        server.shutdown()
        server.server_close()
    assert outside.hits == []
    blocked = _blocked(report)
    assert f"{away} [redirect from {origin}/away]" in blocked, blocked
    assert f"{away} [redirect from {origin}/away?img]" in blocked, blocked
    assert report.passed, report.feedback()  # the game itself came through its same-origin redirect


async def test_the_browser_alone_reaches_nothing(pool, outside: Listeners) -> None:
    """The launch flags on their own (a page with no init script, no route: what a game escaping both would
    have): a fetch, a WebSocket and WebRTC candidate gathering all end without a packet reaching 127.0.0.2."""
    context = await pool.new_context()
    try:
        page = await context.new_page()
        ends = await page.evaluate("""([tcp, udp]) => Promise.all([
          fetch(`http://127.0.0.2:${tcp}/`).then(() => 'reached', () => 'failed'),
          new Promise((done) => { const ws = new WebSocket(`ws://127.0.0.2:${tcp}/`);
            ws.onopen = () => done('open'); ws.onclose = () => done('closed'); }),
          new Promise((done) => { const pc = new RTCPeerConnection({iceServers: [{urls: `stun:127.0.0.2:${udp}`}]});
            const found = []; pc.onicecandidate = (e) => { if (e.candidate) found.push(e.candidate.candidate);
              else done(found); };
            pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)); }),
        ])""", [outside.tcp, outside.udp])
    finally:
        await context.close()
    assert ends == ["failed", "closed", []]
    assert outside.hits == []
