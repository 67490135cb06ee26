"""Readiness of what a run needs: Redis, Chromium, the pack toolchain.

``GET /healthz`` (public) says only ``ok``/``degraded``; ``GET /v1/health`` (with a key) and ``tier2 doctor`` give
the details."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from tier2.browser import BrowserPool, find_chromium
from tier2.errors import Tier2Error
from tier2.packs import load_pack
from tier2.service.auth import tenant_of
from tier2.settings.loader import Settings, load_security

__all__ = ["router", "authed_router", "check_health"]

#: mounted without authentication (only ``GET /healthz``)
router = APIRouter(tags=["health"])
#: mounted behind the API key like every other route
authed_router = APIRouter(tags=["health"], dependencies=[Depends(tenant_of)])


async def _redis(url: str) -> dict[str, Any]:
    client = aioredis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
    t = time.monotonic()
    try:
        await client.ping()
        info = await client.info("server")
        return {"ok": True, "version": info.get("redis_version"), "ping_ms": round((time.monotonic() - t) * 1000, 1)}
    except Exception as exc:  # noqa: BLE001 - report, don't raise
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        await client.aclose()


async def _browser(pool: BrowserPool | None, executable: str | None, launch: bool) -> dict[str, Any]:
    if executable is None:
        return {"ok": False, "error": "Chromium not found"}
    out: dict[str, Any] = {"ok": True, "executable": executable}
    if launch and pool is not None:
        try:
            out["version"] = await asyncio.wait_for(pool.version(), 30)
        except Exception as exc:  # noqa: BLE001
            out.update(ok=False, error=f"{type(exc).__name__}: {exc}")
    return out


def _toolchain(settings: Settings) -> dict[str, Any]:
    try:
        pack = load_pack(settings.packs_dir, settings.pack, settings.skills_dir)
        pack.check_toolchain()
        return {"ok": True, "pack": pack.ref, "engine": pack.manifest.engine.model_dump(), "esbuild": str(pack.esbuild)}
    except Tier2Error as exc:
        return {"ok": False, "error": str(exc)}


async def check_health(
    settings: Settings, redis_url: str, pool: BrowserPool | None = None, launch_browser: bool = False,
) -> dict[str, Any]:
    security = load_security(settings.config_dir)
    try:
        executable: str | None = find_chromium(settings.chromium, security.browser.executables)
    except Tier2Error:
        executable = None
    own_pool = pool is None and executable is not None and launch_browser
    if own_pool:
        pool = BrowserPool(executable, security.browser.args)  # type: ignore[arg-type]
    try:
        parts = {"redis": await _redis(redis_url), "browser": await _browser(pool, executable, launch_browser),
                 "toolchain": _toolchain(settings)}
    finally:
        if own_pool and pool is not None:
            await pool.close()
    return {"ok": all(p["ok"] for p in parts.values()), **parts}


def _without_paths(value: Any) -> Any:
    """The detailed report for API callers: executables by name, not by server path."""
    if isinstance(value, dict):
        return {k: (Path(v).name if k in ("executable", "esbuild") and isinstance(v, str) else _without_paths(v))
                for k, v in value.items()}
    return value


@router.get("/healthz", tags=["health"])
async def healthz(request: Request) -> JSONResponse:
    """Public readiness probe: ``{"status": "ok"}`` (200) or ``{"status": "degraded"}`` (503), nothing else."""
    rt = request.app.state.tier2
    health = await check_health(rt.settings, rt.redis_url, rt.pool, launch_browser=False)
    return JSONResponse({"status": "ok" if health["ok"] else "degraded"}, status_code=200 if health["ok"] else 503)


@authed_router.get("/v1/health")
async def health_detail(request: Request) -> JSONResponse:
    """Redis, browser (launched: its version) and toolchain readiness, with versions; needs a key."""
    rt = request.app.state.tier2
    health = await check_health(rt.settings, rt.redis_url, rt.pool, launch_browser=True)
    return JSONResponse(_without_paths(health), status_code=200 if health["ok"] else 503)
