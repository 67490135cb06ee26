from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from tier2.browser import BrowserPool
from tier2.settings.loader import REPO_ROOT, Settings

TIER2 = [sys.executable, "-m", "tier2"]


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300, stdin: str | None = None,
            ) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("TIER2_", "REDIS_URL"))}
    full_env.update(env or {})
    return subprocess.run([*TIER2, *args], cwd=REPO_ROOT, env=full_env, capture_output=True, timeout=timeout,
                          text=True, input=stdin)


async def play_in_chromium(pool: BrowserPool, url: str) -> dict[str, Any]:
    """An independent check of a delivered game on the real clock: menu → play → a purchase changes state."""
    context = await pool.new_context(viewport={"width": 800, "height": 600})
    errors: list[str] = []
    try:
        page = await context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(url, wait_until="load")
        await page.wait_for_function("window.__TIER2__ && window.__TIER2__.scene() === 'Menu'", timeout=20_000)
        title = await page.evaluate("document.title")
        await page.keyboard.press("Space")
        await page.wait_for_function("window.__TIER2__.scene() === 'Play'", timeout=10_000)
        before = await page.evaluate("window.__TIER2__.state()")
        await page.keyboard.press("Digit1")
        await page.wait_for_function(f"window.__TIER2__.state().money !== {before['money']}", timeout=10_000)
        after = await page.evaluate("window.__TIER2__.state()")
        return {"title": title, "before": before, "after": after, "errors": errors}
    finally:
        await context.close()


def project_tables(project: Path) -> dict[str, Any]:
    import json

    return {p.name: json.loads(p.read_text()) for p in (project / "data").glob("*.json")}


@contextlib.asynccontextmanager
async def serve_in_process(settings: Settings, redis_url: str, workers: int = 1) -> AsyncIterator[httpx.AsyncClient]:
    """The real service (``build_app``) on uvicorn in this event loop, on a free loopback port; yields a client."""
    from tier2.app import build_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(build_app(settings, redis_url, workers), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve())
    for _ in range(400):
        if server.started or task.done():
            break
        await asyncio.sleep(0.05)
    assert server.started, "the service did not start"
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            yield client
    finally:
        server.should_exit = True
        await task
