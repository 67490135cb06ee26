"""`GameSession.canvas_box` (one evaluate) finds and measures the canvas exactly as Playwright's
``query_selector("canvas")`` + ``bounding_box()`` did, on real Chromium, for the layouts games use."""

from __future__ import annotations

from pathlib import Path

import pytest

from tier2.browser import GameSession
from tier2.browser.session import SERVED_ORIGIN

pytestmark = [pytest.mark.browser]

PAGES = {
    "centred": "<style>body{margin:0} #g{width:800px;margin:37px auto} canvas{display:block}</style>"
               "<div id=g><canvas width=640 height=480></canvas></div>",
    "css_scaled": "<style>body{margin:13px} canvas{width:401.5px;height:300.25px;border:3px solid red}</style>"
                  "<canvas width=800 height=600></canvas>",
    "second_of_two": "<div style='display:none'></div><canvas width=10 height=10 style='margin-left:5px'></canvas>"
                     "<canvas width=800 height=600></canvas>",
    "shadow_root": "<div id=host></div><script>const r = document.getElementById('host').attachShadow({mode:'open'});"
                   "r.innerHTML = '<p>title</p><canvas width=300 height=200 style=\"margin:21px\"></canvas>';</script>",
    "light_before_shadow": "<div id=host></div><canvas width=50 height=40></canvas><script>"
                           "document.getElementById('host').attachShadow({mode:'open'}).innerHTML = "
                           "'<canvas width=300 height=200></canvas>';</script>",
    "hidden": "<canvas width=800 height=600 style='display:none'></canvas>",
    "invisible": "<canvas width=800 height=600 style='visibility:hidden;margin-top:9px'></canvas>",
    "none": "<p>no canvas here</p>",
}


@pytest.mark.parametrize("name", sorted(PAGES))
async def test_canvas_box_matches_playwrights_selector_and_box(name: str, pool, tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(f"<!doctype html><html><body>{PAGES[name]}</body></html>")
    async with GameSession(pool, SERVED_ORIGIN + "index.html", serve_root=tmp_path) as s:
        assert await s.load(10)
        handle = await s.p.query_selector("canvas")
        expected = await handle.bounding_box() if handle else None
        assert await s.canvas_box() == expected
    if name not in ("hidden", "none"):
        assert expected is not None and expected["width"] > 0
