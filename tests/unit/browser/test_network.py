"""The pieces of `tier2.browser.network` that need no browser: the page script's options, the dead proxy, the
launch flags, loopback origins (the browser-level behaviour: tests/integration/test_game_network.py and
tests/e2e/test_play_no_network.py)."""

from __future__ import annotations

import socket

import pytest

from tier2.browser.network import NETWORK_ARGS, DeadProxy, loopback_origin, no_network_script
from tier2.browser.pool import BrowserPool


def test_the_page_script_refuses_sockets_and_frames_only_for_a_viewer() -> None:
    assert "{ viewer: true }" in no_network_script(viewer=True)
    assert "{ viewer: false }" in no_network_script(viewer=False)
    assert "</script" not in no_network_script(viewer=True).lower()


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


def test_a_validated_url_opens_its_own_origin_only_and_served_folders_none(tmp_path) -> None:
    from tier2.browser import GameSession

    pool = BrowserPool("/usr/bin/true")
    # vite preview's default port is the served origin's: a URL there is still the user's server
    assert GameSession(pool, "http://localhost:4173/index.html").network.origin == ("http", "localhost", 4173)
    assert GameSession(pool, "http://127.0.0.1:8080/g/").network.origin == ("http", "127.0.0.1", 8080)
    served = GameSession(pool, "http://localhost:4173/index.html", serve_root=tmp_path).network
    assert served.origin is None and served.serve is not None
