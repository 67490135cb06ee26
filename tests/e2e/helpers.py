from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tier2.browser import BrowserPool
from tier2.settings.loader import REPO_ROOT

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
