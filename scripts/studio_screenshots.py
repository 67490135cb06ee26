"""Screenshots of the Studio for the docs, taken from the real thing: a private Redis and ``tier2 serve`` (the offline
model, API keys on), Chromium driving the Studio like a person — sign in, start two runs from briefs on the New-run
page, watch them end, play the delivered game.

Writes ``runs-list.png``, ``run-page.png`` (the delivered run, its game playing in the sandboxed frame) and
``failed-gate.png`` (the run whose brief asks for a genre the offline writer cannot build: the gate that says so,
with its evidence) into ``docs/studio/``.

Usage: ``.venv/bin/python scripts/studio_screenshots.py [--out DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from playwright.async_api import Page

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tier2.browser import BrowserPool, find_chromium  # noqa: E402
from tier2.settings.loader import load_security  # noqa: E402
from tier2.testing.cluster import LocalCluster  # noqa: E402

KEY = "studio-demo-key-0001"
BRIEFS = ("a cozy bakery tycoon: bake bread and cakes for the village, don't go broke",
          "a space shooter where I dodge asteroids and shoot alien ships")
RUN_MS = 300_000


async def start_run(page: Page, base: str, brief: str) -> str:
    await page.goto(f"{base}/studio/#/new")
    await page.fill("#brief", brief)
    await page.fill("#budget-usd", "0.5")
    await page.click("#start-run")
    await page.wait_for_url("**/studio/#/runs/r-*")
    await page.wait_for_selector("#stream-state[data-state=ended]", timeout=RUN_MS)
    await page.wait_for_selector("#gates-summary")
    await page.wait_for_function("() => [...document.querySelectorAll('#shots img')].every(i => i.complete)")
    return page.url.rsplit("/", 1)[1]


async def shoot(base: str, out: Path, pool: BrowserPool) -> None:
    context = await pool.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = await context.new_page()
        await page.goto(f"{base}/studio/")
        await page.fill("#api-key", KEY)
        await page.click("#sign-in button")
        await page.wait_for_selector("#runs")
        delivered = await start_run(page, base, BRIEFS[0])
        failed = await start_run(page, base, BRIEFS[1])
        gate = page.locator("#gates details[data-passed=false]").first
        await gate.scroll_into_view_if_needed()
        await page.locator("#gates").screenshot(path=str(out / "failed-gate.png"))

        await page.goto(f"{base}/studio/#/runs/{delivered}")
        await page.wait_for_selector("#stream-state[data-state=ended]", timeout=RUN_MS)
        await page.wait_for_selector("#play-game")
        await page.click("#play-game")
        frame = await (await page.wait_for_selector("iframe#game")).content_frame()
        assert frame is not None
        await frame.wait_for_function("() => window.__TIER2__ && window.__TIER2__.scene() === 'Menu'",
                                      timeout=60_000)
        await page.wait_for_function("() => [...document.querySelectorAll('#shots img')].every(i => i.complete)")
        await page.screenshot(path=str(out / "run-page.png"), full_page=True)

        await page.goto(f"{base}/studio/#/runs")
        await page.wait_for_selector(f"#runs-body tr[data-run-id='{failed}']")
        await page.screenshot(path=str(out / "runs-list.png"))
    finally:
        await context.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "studio")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tier2-studio-shots-") as tmp, \
            LocalCluster(Path(tmp), env={"TIER2_API_KEYS": f"studio-demo:{KEY}"}) as cluster:
        cluster.start_service(workers=1)
        security = load_security(cluster.config)

        async def run() -> None:
            async with BrowserPool(find_chromium(None, security.browser.executables), viewer=True) as pool:
                await shoot(cluster.base, args.out, pool)

        asyncio.run(run())
    for name in ("runs-list.png", "run-page.png", "failed-gate.png"):
        print(args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
