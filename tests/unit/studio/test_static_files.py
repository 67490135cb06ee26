"""The Studio's files as served: a strict CSP on every one, only the shipped files by exact name, every module the
page imports served, no inline script or style (the CSP would block it), no HTML parsing of API text, and the event
types the page listens for are exactly tier2's."""

from __future__ import annotations

import re
import typing
from collections.abc import AsyncIterator

import httpx
import pytest

from tier2.app import build_app
from tier2.events import Tier2Event
from tier2.settings.loader import Settings
from tier2.studio import STUDIO_CSP
from tier2.studio.router import STATIC_DIR


@pytest.fixture
async def client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[httpx.AsyncClient]:
    app = build_app(Settings(workspaces=tmp_path_factory.mktemp("studio")), "redis://127.0.0.1:1/0", workers=0)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://studio.test") as c:
        yield c  # no lifespan: the Studio's files need nothing but the app


async def test_the_page_and_its_files_are_served_with_a_strict_csp(client: httpx.AsyncClient) -> None:
    for path in ("/studio", "/studio/"):
        r = await client.get(path)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html"), path
        assert r.headers["content-security-policy"] == STUDIO_CSP
        assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"
    assert "script-src 'self'" in STUDIO_CSP and "'unsafe-inline'" not in STUDIO_CSP and "frame-ancestors 'none'" \
        in STUDIO_CSP
    page = (await client.get("/studio")).text
    wanted = set(re.findall(r'(?:src|href)="/studio/([^"]+)"', page))
    for js in STATIC_DIR.glob("*.js"):
        wanted |= set(re.findall(r"from '\./([^']+)'", js.read_text()))
    assert {"app.js", "studio.css", "api.js", "dom.js", "run.js", "runs.js"} <= wanted
    for name in sorted(wanted):
        r = await client.get(f"/studio/{name}")
        assert r.status_code == 200, name
        assert r.headers["content-security-policy"] == STUDIO_CSP
        kind = {"js": "text/javascript", "css": "text/css"}[name.rsplit(".", 1)[1]]
        assert r.headers["content-type"].startswith(kind), name


@pytest.mark.parametrize("path", ["/studio/router.py", "/studio/__init__.py", "/studio/../app.py",
                                  "/studio/%2e%2e/app.py", "/studio/static/app.js", "/studio/APP.JS",
                                  "/studio/missing.js", "/studio/.hidden.js"])
async def test_nothing_but_the_shipped_files(client: httpx.AsyncClient, path: str) -> None:
    r = await client.get(path)
    assert r.status_code == 404, (path, r.status_code)
    assert "def " not in r.text


def test_no_inline_script_or_style_and_no_html_parsing() -> None:
    page = (STATIC_DIR / "index.html").read_text()
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", page) == []
    assert "<style" not in page
    for path in STATIC_DIR.iterdir():
        text = path.read_text()
        assert not re.search(r"\sstyle=", text), path.name
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert sink not in text, (path.name, sink)


def test_the_page_listens_for_every_event_type() -> None:
    api = (STATIC_DIR / "api.js").read_text()
    listed = re.search(r"EVENT_TYPES = \[(.*?)\];", api, re.S)
    assert listed is not None
    in_js = re.findall(r"'([a-z_]+)'", listed.group(1))
    in_python = [cls.model_fields["type"].default for cls in typing.get_args(typing.get_args(Tier2Event)[0])]
    assert sorted(in_js) == sorted(in_python) and len(in_js) == len(set(in_js))
