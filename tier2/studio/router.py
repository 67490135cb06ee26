"""``/studio``: the Studio's static files, each with a strict Content-Security-Policy.

Only the files shipped in ``static/`` are served, by exact name (no directory walking, no listing). The pages hold
no secret: the API key the user types stays in the tab's ``sessionStorage`` and goes to ``/v1`` as
``Authorization: Bearer``. The CSP allows this origin's own scripts, styles and API, ``blob:`` images (the
screenshots, fetched with the key) and same-origin frames (the game, itself sandboxed: `tier2.service.run_files`);
no inline script, no other host.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from fastapi import APIRouter
from fastapi.responses import FileResponse

from tier2.errors import NotFound

__all__ = ["STATIC_DIR", "STUDIO_CSP", "studio_router"]

STATIC_DIR: Final = Path(__file__).resolve().parent / "static"
STUDIO_CSP: Final = "; ".join([
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' blob: data:",
    "connect-src 'self'", "frame-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
])
_TYPES: Final = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\.(?:html|js|css|svg)$")
_HEADERS: Final = {"Content-Security-Policy": STUDIO_CSP, "X-Content-Type-Options": "nosniff",
                   "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Cache-Control": "no-cache",
                   "Cross-Origin-Opener-Policy": "same-origin"}


def _files(root: Path) -> dict[str, Path]:
    """The servable files: every file directly in ``root`` with a clean name and a known type."""
    return {p.name: p for p in sorted(root.iterdir()) if p.is_file() and _NAME.match(p.name)}


def studio_router(root: Path = STATIC_DIR) -> APIRouter:
    """The routes of the Studio: ``/studio`` (and ``/studio/``) is the page, ``/studio/<file>`` its files."""
    files = _files(root)
    router = APIRouter(include_in_schema=False)

    def _serve(name: str) -> FileResponse:
        path = files.get(name)
        if path is None:
            raise NotFound("no such Studio file")
        return FileResponse(path, media_type=_TYPES[path.suffix], headers=_HEADERS)

    @router.get("/studio")
    @router.get("/studio/")
    async def page() -> FileResponse:
        return _serve("index.html")

    @router.get("/studio/{name}")
    async def asset(name: str) -> FileResponse:
        return _serve(name)

    return router
