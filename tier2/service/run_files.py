"""Read-only views of a run's project for people: the design documents and spec, the validation report, and the
built game for a sandboxed ``<iframe>``.

HTTP only: the use cases (`tier2.runs.run_files`) decide which files exist for the caller (tenant-scoped, inside
the project by the path policy); the views mask server paths.

**The game in an iframe.** An iframe cannot send ``Authorization``, so ``POST /v1/runs/{id}/play-token`` hands out a
short-lived token bound to the run and the tenant (`tier2.service.auth.sign_play_token`), and the game is loaded
from ``/v1/runs/{id}/play/{token}/index.html`` — relative URLs (``bundle.js``, assets) resolve under the same
token. Those responses carry a CSP that makes the document sandboxed (scripts only, an opaque origin: no cookies,
no storage, no access to the page that embeds it) and allows loading nothing but the run's own game files: no
other network at all (`play_csp`). WebRTC is out of a CSP's reach, so every HTML page of the game gets the
no-network page script as its very first script (`tier2.browser.play_page`): ``RTCPeerConnection``,
``WebTransport`` and ``WebSocket`` refuse before the game's first line runs, in the viewer's own browser, and no
nested frame (whose document would not have that script) may exist; inline scripts run only by hash, so no
``javascript:`` URL does. Scripts run in HTML pages only: any other file (an SVG, XHTML or XML document the game
could navigate its frame to, where that script would not be) is sandboxed without scripts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path as FsPath
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import FileResponse, Response
from starlette.concurrency import run_in_threadpool

from tier2.browser.play_page import PlayPage, play_page
from tier2.errors import ApiError, ErrorCode
from tier2.runs.queries import require_run
from tier2.runs.run_files import design_files, play_file, validation_report
from tier2.service.auth import sign_play_token, verify_play_token
from tier2.service.deps import ApiKeysDep, RuntimeDep, TenantDep
from tier2.service.errors import error_responses
from tier2.service.schemas_browse import DesignView, PlayToken, ReportView
from tier2.service.views import mask_for, public_design, public_report

__all__ = ["play_csp", "router"]

router = APIRouter(prefix="/v1", tags=["runs"])
#: a Host header that may appear in a CSP source expression (anything else: the game may load nothing)
_HOST = re.compile(r"^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$")
_TOKEN = r"^[A-Za-z0-9_-]{1,800}\.[A-Za-z0-9_-]{1,100}$"
#: the game's pages: served with the no-network script first, the only documents that may run scripts
_PAGES = (".html", ".htm")
_MAX_PAGE_BYTES = 20_000_000


def play_csp(host: str, prefix: str, inline: Sequence[str] | None = ()) -> str:
    """The CSP of a game file: a sandboxed document (scripts only: ``sandbox allow-scripts``; no script at all when
    ``inline`` is None) that may load scripts, styles, images, media, fonts and data from ``host`` + ``prefix`` (the
    run's game under its token), inline styles and ``data:``/``blob:`` URLs, and nothing else: no other path of this
    server, no other host. Inline scripts run only when listed in ``inline`` (their hashes: a browser ignores
    ``'unsafe-inline'`` once a hash is given, so no ``javascript:`` URL runs; it stays for the others)."""
    own = f"{host}{prefix}" if _HOST.match(host) else "'none'"
    local = f"{own} data: blob:"
    hashes = "".join(f" {h}" for h in inline or ())
    return "; ".join([
        "sandbox allow-scripts" if inline is not None else "sandbox", "default-src 'none'",
        f"script-src {own} 'unsafe-inline'{hashes}",
        f"style-src {own} 'unsafe-inline'", f"img-src {local}", f"media-src {local}", f"font-src {local}",
        f"connect-src {local}", "worker-src blob:", "frame-src 'none'", "object-src 'none'", "base-uri 'none'",
        "form-action 'none'", "frame-ancestors 'self'",
    ])


@router.get("/runs/{run_id}/design", response_model=DesignView, response_model_exclude_unset=True,
            responses=error_responses(404, 409, 422))
async def get_design(run_id: str, rt: RuntimeDep, tenant: TenantDep) -> DesignView:
    """The design documents (``docs/design/*.md``, the GDD first) and ``design/spec.json`` as the design phase has
    written them so far (409 until the run has created its project)."""
    found = await design_files(rt, tenant, run_id)
    docs = [{"path": d.path, "text": d.text, "bytes": d.bytes, "truncated": d.truncated} for d in found.docs]
    return public_design(run_id, docs, found.spec, found.spec_error, mask_for(rt.settings, found.project_dir))


@router.get("/runs/{run_id}/report", response_model=ReportView, response_model_exclude_unset=True,
            responses=error_responses(404, 409, 422))
async def get_report(run_id: str, rt: RuntimeDep, tenant: TenantDep) -> ReportView:
    """The validation report: every gate with its findings and evidence, the notes, the screenshots (artifact
    URLs). Once the run has ended, the report its delivery names; before, the latest check (404: none yet)."""
    found = await validation_report(rt, tenant, run_id)
    return public_report(run_id, found.path, found.report, mask_for(rt.settings, found.project_dir))


@router.post("/runs/{run_id}/play-token", response_model=PlayToken, responses=error_responses(404, 422))
async def play_token(run_id: str, rt: RuntimeDep, keys: ApiKeysDep, tenant: TenantDep) -> PlayToken:
    """A short-lived token to load the run's built game in a sandboxed ``<iframe>`` (which cannot send an
    Authorization header): bound to this run and tenant, it opens the run's ``dist/`` files and nothing else."""
    await require_run(rt.store, tenant, run_id)
    token, expires = sign_play_token(keys, tenant, run_id)
    return PlayToken(token=token, expires_at=expires, url=f"/v1/runs/{run_id}/play/{token}/index.html")


@router.get("/runs/{run_id}/play/{token}/{name:path}", response_class=FileResponse,
            responses={200: {"description": "A file of the run's built game (`dist/`), with a sandboxing CSP",
                             "content": {"text/html": {"schema": {"type": "string"}}}},
                       **error_responses(404, 413, 422)})
async def play(run_id: str, name: str, request: Request, rt: RuntimeDep, keys: ApiKeysDep,
               token: Annotated[str, Path(max_length=1000, pattern=_TOKEN)]) -> Response:
    """A file of the run's game for the play token's holder (``index.html`` is the game)."""
    tenant = verify_play_token(keys, token, run_id)
    if tenant is None:
        raise ApiError(ErrorCode.UNAUTHORIZED, 401, "invalid or expired play token")
    found = await play_file(rt, tenant, run_id, name or "index.html")  # never through a link (tier2.hostio)
    prefix = f"/v1/runs/{run_id}/play/{token}/"
    page = await run_in_threadpool(_page, found.data) if FsPath(found.path).suffix.lower() in _PAGES else None
    headers = {
        "Content-Security-Policy": play_csp(request.headers.get("host", ""), prefix,
                                            page.script_hashes if page is not None else None),
        "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "private, no-store",
        # the sandboxed game has an opaque origin: its module scripts and loader requests for its own files are
        # cross-origin requests; the token in the URL is the capability, the files are the game's own
        "Access-Control-Allow-Origin": "*",
    }
    if page is None:
        return Response(found.data, media_type=found.media_type, headers=headers)
    return Response(page.body, media_type="text/html", headers=headers)


def _page(data: bytes) -> PlayPage:
    """A game page (already read as a regular file, no link followed: `tier2.runs.run_files.play_file`), bounded."""
    if len(data) > _MAX_PAGE_BYTES:
        raise ApiError(ErrorCode.PAYLOAD_TOO_LARGE, 413, f"a game page is larger than {_MAX_PAGE_BYTES} bytes")
    return play_page(data)
