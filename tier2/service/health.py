"""Readiness of what a run needs: Redis, Chromium, the pack toolchain.

``GET /healthz`` (public) says only ``ok``/``degraded``; ``GET /v1/health`` (with a key) gives each part's state
and version (executables by file name, a fixed message for what is missing: exception text and paths stay in the
server log), and ``tier2 doctor`` gives the full local report (`check_health`)."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from tier2.browser import BrowserPool, find_chromium
from tier2.errors import Tier2Error
from tier2.runs.process.runtime import load_packs
from tier2.service.deps import RuntimeDep, tenant
from tier2.service.errors import error_responses
from tier2.service.schemas import BrowserHealth, HealthView, ProbeView, RedisHealth, ToolchainHealth
from tier2.settings.loader import Settings, load_security
from tier2.store.connect import connect

__all__ = ["router", "authed_router", "check_health", "public_health"]

log = logging.getLogger(__name__)

#: mounted without authentication (only ``GET /healthz``)
router = APIRouter(tags=["health"])
#: mounted behind the API key like every other route
authed_router = APIRouter(tags=["health"], dependencies=[Depends(tenant)])
#: what a caller reads when a part is not ok (the reason is logged)
_MISSING = {"redis": "Redis is unreachable", "browser": "Chromium is missing or does not start",
            "toolchain": "the pack toolchain (esbuild, node packages) is incomplete"}


async def _redis(url: str) -> dict[str, Any]:
    client = connect(url, decode_responses=False, socket_connect_timeout=2, socket_timeout=2)
    t = time.monotonic()
    try:
        await client.ping()
        info = await client.info("server")
        if "redis_version" not in info and info:  # a cluster answers per node: report the first
            info = next(iter(info.values()))
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
    """Every pack the service serves loads and has its toolchain (`load_packs`); the default one's details."""
    try:
        packs = load_packs(settings, load_security(settings.config_dir))
        pack = next(iter(packs.values()))  # the default, first
        return {"ok": True, "pack": pack.ref, "packs": [p.ref for p in packs.values()],
                "engine": pack.manifest.engine.model_dump(), "esbuild": str(pack.esbuild)}
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
    own_pool = False
    if pool is None and executable is not None and launch_browser:
        pool, own_pool = BrowserPool(executable, security.browser.args, isolation=security.sandbox.isolation), True
    try:
        parts = {"redis": await _redis(redis_url), "browser": await _browser(pool, executable, launch_browser),
                 "toolchain": _toolchain(settings)}
    finally:
        if own_pool and pool is not None:
            await pool.close()
    return {"ok": all(p["ok"] for p in parts.values()), **parts}


def _name(value: Any) -> str | None:
    return Path(value).name if isinstance(value, str) else None


def public_health(health: dict[str, Any]) -> HealthView:
    """`check_health`'s report for API callers: executables by file name, and a fixed message for a part that is
    not ok (its exception text, which may hold server paths, goes to the log)."""
    for part, message in _MISSING.items():
        if not health[part].get("ok"):
            log.warning("health: %s: %s", part, health[part].get("error"))
            health[part] = {**health[part], "error": message}
    redis_part, browser, toolchain = health["redis"], health["browser"], health["toolchain"]
    return HealthView(
        ok=bool(health["ok"]),
        redis=RedisHealth(ok=redis_part["ok"], version=redis_part.get("version"), ping_ms=redis_part.get("ping_ms"),
                          error=redis_part.get("error")),
        browser=BrowserHealth(ok=browser["ok"], executable=_name(browser.get("executable")),
                              version=browser.get("version"), error=browser.get("error")),
        toolchain=ToolchainHealth(ok=toolchain["ok"], pack=toolchain.get("pack"),
                                  packs=toolchain.get("packs") or [], engine=toolchain.get("engine"),
                                  esbuild=_name(toolchain.get("esbuild")), error=toolchain.get("error")),
    )


@router.get("/healthz", tags=["health"], response_model=ProbeView,
            responses={503: {"model": ProbeView, "description": "Something a run needs is missing"},
                       **{k: v for k, v in error_responses().items() if k in (400, 405)}})
async def healthz(rt: RuntimeDep) -> JSONResponse:
    """Public readiness probe: ``{"status": "ok"}`` (200) or ``{"status": "degraded"}`` (503), nothing else."""
    health = await check_health(rt.settings, rt.redis_url, rt.pool, launch_browser=False)
    probe = ProbeView(status="ok" if health["ok"] else "degraded")
    return JSONResponse(probe.model_dump(mode="json"), status_code=200 if health["ok"] else 503)


@authed_router.get("/v1/health", response_model=HealthView, responses={
    503: {"model": HealthView, "description": "Something a run needs is missing (see which part)"},
    **{k: v for k, v in error_responses().items() if k != 503}})
async def health_detail(rt: RuntimeDep) -> JSONResponse:
    """Redis, browser (launched: its version) and toolchain readiness, with versions; needs a key."""
    health = await check_health(rt.settings, rt.redis_url, rt.pool, launch_browser=True)
    view = public_health(health)
    return JSONResponse(view.model_dump(mode="json", exclude_none=True), status_code=200 if view.ok else 503)
