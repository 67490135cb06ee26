"""The real app's HTTP routes over ASGI, reading through a runtime that holds only a run store: no browser, no pack,
no lifespan — for route tests whose records a test writes itself."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from tier2.app import build_app
from tier2.runs import Runtime
from tier2.service import deps
from tier2.settings.loader import REPO_ROOT, PolicyStore, Settings, load_security
from tier2.store.run_store import RunStore

#: ``TIER2_API_KEYS`` for two keyed tenants (set it before `routes_client`)
TWO_TENANTS = "tenant-a:key-of-tenant-a-0001,tenant-b:key-of-tenant-b-0002"


@contextlib.asynccontextmanager
async def routes_client(store: RunStore, workspaces: Path, redis_url: str, base_url: str = "http://test",
                        ) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(workspaces=workspaces, redis_url=redis_url)
    app = build_app(settings, redis_url, workers=0)
    rt = Runtime(settings=settings, security=load_security(REPO_ROOT / "config"),
                 policies=PolicyStore(REPO_ROOT / "config"), pack=None, pool=None, store=store,  # type: ignore[arg-type]
                 redis_url=redis_url)
    app.dependency_overrides[deps.runtime] = lambda: rt
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base_url) as c:
        yield c
