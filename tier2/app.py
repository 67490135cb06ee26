"""Composition root: AgentScope's `create_app` with tier2's backends, extension points and routers. Wiring only."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from urllib.parse import urlparse

from agentscope.app import create_app
from agentscope.app.deps import get_current_user_id
from agentscope.app.message_bus import RedisMessageBus
from agentscope.app.storage import RedisStorage
from fastapi import FastAPI

from tier2 import __version__
from tier2.agentscope_ext import Tier2Agent, game_tools_factory
from tier2.models.offline import OfflineCredential
from tier2.packs import load_pack
from tier2.runs import open_runtime
from tier2.runs.owner import sweep_orphans
from tier2.runs.worker import Worker, ensure_group
from tier2.service import health, projects, runs, trajectory
from tier2.service.auth import tenant_of
from tier2.settings.api_keys import ApiKeys
from tier2.settings.loader import Settings
from tier2.workspace import ProjectWorkspaceManager

__all__ = ["build_app"]

log = logging.getLogger(__name__)


def _redis_params(url: str) -> dict[str, object]:
    u = urlparse(url)
    db = int((u.path or "/0").strip("/") or 0)
    return {"host": u.hostname or "127.0.0.1", "port": u.port or 6379, "db": db, "password": u.password}


def build_app(settings: Settings, redis_url: str, workers: int = 1) -> FastAPI:
    """The service; ``workers`` in-process workers take runs from the dispatch stream (0: only external
    ``tier2 worker`` processes run them)."""
    params = _redis_params(redis_url)
    storage = RedisStorage(**params)  # type: ignore[arg-type]
    bus = RedisMessageBus(**params)  # type: ignore[arg-type]
    pack = load_pack(settings.packs_dir, settings.pack, settings.skills_dir)
    wsm = ProjectWorkspaceManager(settings.workspaces, pack.skill_dirs)  # AgentScope sessions, per tenant
    app: FastAPI

    app = create_app(
        storage=storage, message_bus=bus, workspace_manager=wsm, enable_index_worker=False,
        extra_credentials=[OfflineCredential], custom_agent_cls=Tier2Agent,
        extra_agent_tools=game_tools_factory(storage, wsm, lambda: app.state.tier2),
        title="tier2", version=__version__,
    )
    agentscope_lifespan = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(a: FastAPI) -> AsyncIterator[None]:
        async with open_runtime(settings, redis_url) as rt:
            a.state.tier2 = rt
            orphans = await sweep_orphans(rt.store)  # foreground runs whose process died: end them visibly
            if orphans:
                log.warning("ended %d run(s) orphaned by a dead process: %s", len(orphans), ", ".join(orphans))
            await ensure_group(rt)
            stop = asyncio.Event()
            a.state.tier2_workers = [Worker(rt) for _ in range(workers)]
            tasks = [asyncio.create_task(w.serve(stop)) for w in a.state.tier2_workers]
            log.info("tier2 service: %d in-process worker(s), redis %s", workers, redis_url)
            try:
                async with agentscope_lifespan(a):
                    yield
            finally:
                stop.set()  # running attempts are interrupted and released: they resume in another worker
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    app.router.lifespan_context = lifespan
    app.state.tier2_api_keys = ApiKeys.from_env()
    app.state.tier2_workers = []
    app.dependency_overrides[get_current_user_id] = tenant_of  # AgentScope's routes use the same tenants
    app.include_router(health.router)
    app.include_router(runs.router)
    app.include_router(projects.router)
    app.include_router(trajectory.router)
    return app
