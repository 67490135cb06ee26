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
from tier2.browser.session import SERVED_ORIGIN, resolve_served, served_path
from tier2.packs import load_pack
from tier2.settings.loader import REPO_ROOT, Settings

TIER2 = [sys.executable, "-m", "tier2"]


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300, stdin: str | None = None,
            ) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("TIER2_", "REDIS_URL"))}
    full_env.update(env or {})
    return subprocess.run([*TIER2, *args], cwd=REPO_ROOT, env=full_env, capture_output=True, timeout=timeout,
                          text=True, input=stdin)


async def _until(page: Any, expression: str, timeout_s: float) -> None:
    """Wait until ``expression`` holds in the page. Not `wait_for_function`: after its first check Playwright polls
    with an ``eval`` in the page, which the play route's CSP (no ``unsafe-eval``) refuses; `evaluate` is exempt."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not await page.evaluate(expression):
        if loop.time() > deadline:
            raise TimeoutError(f"not within {timeout_s} s: {expression}")
        await asyncio.sleep(0.05)


async def play_in_chromium(pool: BrowserPool, url: str) -> dict[str, Any]:
    """An independent check of a delivered game on the real clock: menu → play → a purchase changes state."""
    context = await pool.new_context(viewport={"width": 800, "height": 600})
    errors: list[str] = []
    try:
        if url.startswith("file://"):  # the shared browser is never root and cannot read a project by path: serve
            root = Path(url.removeprefix("file://")).parent  # the built site as tier2's own sessions do

            async def serve(route: Any) -> None:
                target = resolve_served([root], served_path(route.request.url))
                await (route.fulfill(path=str(target)) if target else route.fulfill(status=404, body="not found"))

            await context.route(f"{SERVED_ORIGIN}**", serve)
            url = f"{SERVED_ORIGIN}index.html"
        page = await context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(url, wait_until="load")
        await _until(page, "window.__TIER2__ && window.__TIER2__.scene() === 'Menu'", 20)
        title = await page.evaluate("document.title")
        await page.keyboard.press("Space")
        await _until(page, "window.__TIER2__.scene() === 'Play'", 10)
        before = await page.evaluate("window.__TIER2__.state()")
        await page.keyboard.press("Digit1")
        await _until(page, f"window.__TIER2__.state().money !== {before['money']}", 10)
        after = await page.evaluate("window.__TIER2__.state()")
        return {"title": title, "before": before, "after": after, "errors": errors}
    finally:
        await context.close()


def project_tables(project: Path) -> dict[str, Any]:
    import json

    return {p.name: json.loads(p.read_text()) for p in (project / "data").glob("*.json")}


class _Server(uvicorn.Server):
    """uvicorn's server with an event for "startup finished" (its lifespan ran and it is accepting)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()


@contextlib.asynccontextmanager
async def serve_in_process(settings: Settings, redis_url: str, workers: int = 1) -> AsyncIterator[httpx.AsyncClient]:
    """The real service (``build_app``) on uvicorn in this event loop, on a loopback socket bound before uvicorn
    starts (no free-port race with other tests or workers); yields a client once startup finished."""
    from tier2.app import build_app

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = _Server(uvicorn.Config(build_app(settings, redis_url, workers), log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    ready = asyncio.ensure_future(server.ready.wait())
    try:
        async with asyncio.timeout(60):
            await asyncio.wait([task, ready], return_when=asyncio.FIRST_COMPLETED)
        assert server.started, "the service did not start"
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            yield client
    finally:
        ready.cancel()
        server.should_exit = True
        await task
        sock.close()


TERMINAL = ("delivered", "failed", "stopped")


async def wait_finished(client: httpx.AsyncClient, run_id: str, headers: dict[str, str] | None = None,
                        timeout_s: float = 300) -> dict[str, Any]:
    """The run's record once it ended: blocks on its SSE stream, which the service closes after ``run_finished``
    (the terminal status is written before that event), instead of polling the status."""
    async with asyncio.timeout(timeout_s):
        events = await client.get(f"/v1/runs/{run_id}/events", headers=headers, timeout=None)
    assert events.status_code == 200 and "event: run_finished" in events.text, events.text[-2000:]
    run = (await client.get(f"/v1/runs/{run_id}", headers=headers)).json()
    assert run["status"] in TERMINAL, run
    return run


def template_zip(extra: dict[str, bytes] | None = None, compression: int = 0, pack: str = "phaser",
                 genre: str = "shop") -> bytes:
    """A pack's genre template as an upload (under ``my-game/``), plus ``extra`` archive members; ``compression``:
    a ``zipfile`` constant (stored by default)."""
    import io
    import zipfile

    buf = io.BytesIO()
    template = load_pack(REPO_ROOT / "capability_packs", pack).genre(genre).template_dir  # composed
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for path in template.rglob("*"):
            if path.is_file():
                zf.write(path, f"my-game/{path.relative_to(template)}")
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return buf.getvalue()


class DroppingProxy:
    """A TCP forwarder on loopback in front of a server: `drop()` cuts every open connection at once, as a network
    drop does (the browser sees its streams fail mid-response and must reconnect)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.dropped = 0
        self._open: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._server: asyncio.Server | None = None

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        pair = (writer, up_writer)
        self._open.add(pair)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        finally:
            self._open.discard(pair)
            for w in pair:
                with contextlib.suppress(ConnectionError, OSError):
                    await w.wait_closed()

    def drop(self) -> int:
        """Abort every open connection (both sides); returns how many were cut."""
        cut = list(self._open)
        for client, upstream in cut:
            client.transport.abort()
            upstream.transport.abort()
        self.dropped += len(cut)
        return len(cut)

    async def close(self) -> None:
        self.drop()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
