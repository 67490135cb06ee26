"""``/openapi.json``, ``/docs`` (Swagger UI) and ``/redoc``: behind the API key unless ``TIER2_PUBLIC_DOCS=true``.

FastAPI's own docs routes cannot take a dependency, so `tier2.app` drops them and mounts these instead.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from tier2.service.deps import tenant

__all__ = ["docs_router"]


def docs_router(public: bool) -> APIRouter:
    """The three docs routes; with ``public=False`` each needs ``Authorization: Bearer <key>`` like the API."""
    router = APIRouter(dependencies=[] if public else [Depends(tenant)], include_in_schema=False)

    @router.get("/openapi.json")
    async def openapi(request: Request) -> JSONResponse:
        app: FastAPI = request.app
        return JSONResponse(app.openapi())

    @router.get("/docs")
    async def swagger(request: Request) -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{request.app.title} API")

    @router.get("/redoc")
    async def redoc(request: Request) -> HTMLResponse:
        return get_redoc_html(openapi_url="/openapi.json", title=f"{request.app.title} API")

    return router
