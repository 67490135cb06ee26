"""The pieces of `tier2.browser.network` that need no browser: where the page script goes in a game's HTML, the
page script's options, the dead proxy, loopback origins (the browser-level behaviour: tests/integration/
test_game_network.py and tests/e2e/test_play_no_network.py)."""

from __future__ import annotations

import socket

import pytest

from tier2.browser.network import NETWORK_ARGS, DeadProxy, inject_first_script, loopback_origin, no_network_script
from tier2.browser.pool import BrowserPool

TAG = b"<script>S</script>"


@pytest.mark.parametrize(("html", "expected"), [
    (b"<!doctype html><script>game()</script>", b"<!doctype html>" + TAG + b"<script>game()</script>"),
    (b"<script>first()</script><!doctype html>", TAG + b"<script>first()</script><!doctype html>"),
    (b"\xef\xbb\xbf  <!-- made by x --> <!DOCTYPE html>\n<html>",
     b"\xef\xbb\xbf  <!-- made by x --> <!DOCTYPE html>" + TAG + b"\n<html>"),
    (b"<!-- <script>in a comment</script> --><html>", b"<!-- <script>in a comment</script> -->" + TAG + b"<html>"),
    (b"<!-- never closed <script>x()</script>", TAG + b"<!-- never closed <script>x()</script>"),
    (b"", TAG),
])
def test_the_page_script_comes_before_anything_the_document_can_run(html: bytes, expected: bytes) -> None:
    assert inject_first_script(html, "S") == expected


def test_a_script_that_would_end_its_own_element_is_refused() -> None:
    with pytest.raises(ValueError):
        inject_first_script(b"<html>", "x = '</SCRIPT>'")


def test_the_page_script_refuses_sockets_only_when_asked() -> None:
    assert "{ sockets: true }" in no_network_script(sockets=True)
    assert "{ sockets: false }" in no_network_script(sockets=False)
    assert "</script" not in no_network_script(sockets=True).lower()


def test_the_dead_proxy_refuses_connections_and_holds_its_port() -> None:
    proxy = DeadProxy()
    try:
        assert proxy.arg == f"--proxy-server=http://127.0.0.1:{proxy.port}"
        with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
            probe.connect(("127.0.0.1", proxy.port))
        with socket.socket() as squatter, pytest.raises(OSError):
            squatter.bind(("127.0.0.1", proxy.port))
    finally:
        proxy.close()


def test_configured_flags_cannot_lift_the_network_flags() -> None:
    pool = BrowserPool("/usr/bin/true", ["--proxy-bypass-list=*", "--host-resolver-rules=MAP * 127.0.0.2"])
    last = {a.split("=", 1)[0]: a for a in pool.args}  # Chromium keeps a switch's last value
    assert [last[a.split("=", 1)[0]] for a in NETWORK_ARGS] == list(NETWORK_ARGS)


def test_loopback_origins() -> None:
    assert loopback_origin("http://127.0.0.1:8000/a?b") == ("http", "127.0.0.1", 8000)
    assert loopback_origin("http://localhost/") == ("http", "localhost", 80)
    assert loopback_origin("https://[::1]/x") == ("https", "::1", 443)
    for other in ("http://127.0.0.2:8000/", "ws://127.0.0.1:8000/", "http://127.0.0.1.example.com/",
                  "http://127.0.0.1:99999/", "file:///etc/passwd"):
        assert loopback_origin(other) is None, other


def test_a_game_never_runs_in_a_viewers_browser() -> None:
    from tier2.browser import GameSession

    viewer = BrowserPool("/usr/bin/true", viewer=True)
    assert not any(a in viewer.args for a in NETWORK_ARGS)
    with pytest.raises(ValueError, match="network"):
        GameSession(viewer, "http://localhost:4173/index.html")
