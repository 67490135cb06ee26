"""Composition root: AgentScope's `create_app` with tier2's backends and routers. Wiring only.

`create_app` is the factory for the storage, message bus and lifespan; the routes it mounts (``/agent/``,
``/chat/``, ``/sessions/``, ``/credential/``, ``/workspace/``, models, schedules, knowledge bases) would run agents
and show credentials outside tier2's controls (budget, breakers, tenants), so they are not served: the router is
emptied and only tier2's routes are added (`TIER2_ROUTES` lists them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any, TypedDict
from urllib.parse import parse_qs, unquote, urlparse

from agentscope.app import create_app
from agentscope.app.message_bus import RedisMessageBus
from agentscope.app.storage import RedisStorage
from fastapi import FastAPI
from fastapi.middleware import Middleware

from tier2 import __version__
from tier2.models.offline import OfflineCredential
from tier2.packs import load_pack
from tier2.runs import open_runtime
from tier2.runs.process.owner import sweep_orphans
from tier2.runs.process.worker import Worker, ensure_group
from tier2.service import health, projects, run_files, runs, trajectory
from tier2.service.docs import docs_router
from tier2.service.errors import install_error_handlers
from tier2.service.hosts import TrustedHosts
from tier2.settings.api_keys import ApiKeys
from tier2.settings.loader import Settings
from tier2.settings.secrets import install_log_redaction, redact_url
from tier2.store.connect import connect, parse_redis_url
from tier2.store.run_index import RunIndex
from tier2.studio import studio_router
from tier2.workspace import ProjectWorkspaceManager

__all__ = ["build_app", "served_routes", "TIER2_ROUTES"]

log = logging.getLogger(__name__)

#: every (method, path) the service answers; anything else is a 404
TIER2_ROUTES: frozenset[tuple[str, str]] = frozenset({
    ("GET", "/healthz"), ("GET", "/v1/health"), ("GET", "/openapi.json"), ("GET", "/docs"), ("GET", "/redoc"),
    ("POST", "/v1/runs"), ("GET", "/v1/runs/{run_id}"), ("POST", "/v1/runs/{run_id}/cancel"),
    ("POST", "/v1/runs/{run_id}/stream-token"), ("GET", "/v1/runs/{run_id}/events"),
    ("GET", "/v1/runs/{run_id}/delivery"), ("GET", "/v1/runs/{run_id}/artifacts/{name:path}"),
    ("GET", "/v1/runs/{run_id}/trajectory"), ("GET", "/v1/threads/{thread_id}"),
    ("GET", "/v1/threads/{thread_id}/plans"), ("GET", "/v1/threads/{thread_id}/plan"), ("POST", "/v1/projects"),
    ("GET", "/v1/projects/{project_id}"),
    ("GET", "/v1/runs"), ("GET", "/v1/runs/{run_id}/design"), ("GET", "/v1/runs/{run_id}/report"),
    ("POST", "/v1/runs/{run_id}/play-token"), ("GET", "/v1/runs/{run_id}/play/{token}/{name:path}"),
    ("GET", "/studio"), ("GET", "/studio/"), ("GET", "/studio/{name}"),
})


def served_routes(app: FastAPI) -> set[tuple[str, str]]:
    """Every (method, path) the app routes, included routers expanded (HEAD left out)."""
    out: set[tuple[str, str]] = set()
    for route in app.router.routes:
        contexts = route.effective_route_contexts() if hasattr(route, "effective_route_contexts") else [route]
        for ctx in contexts:
            out |= {(m, getattr(ctx, "path", "?")) for m in (getattr(ctx, "methods", None) or {"*"}) if m != "HEAD"}
    return out


class _RedisParams(TypedDict):
    host: str
    port: int
    db: int
    password: str | None


def _redis_params(url: str) -> _RedisParams:
    u = urlparse(url)
    db = int((u.path or "/0").strip("/") or 0)
    password = unquote(u.password) if u.password else next(iter(parse_qs(u.query).get("password", [])), None)
    return {"host": u.hostname or "127.0.0.1", "port": u.port or 6379, "db": db, "password": password}


def _agentscope_redis(url: str) -> dict[str, Any]:
    """How AgentScope's storage and message bus reach ``url``: host and port of one server, or (Sentinel) a
    connection pool of `tier2.store.connect` that follows the master (a Cluster: `_ClusterStorage`)."""
    kind = parse_redis_url(url).kind
    if kind == "single":
        return dict(_redis_params(url))
    return {"connection_pool": connect(url).connection_pool}


class _OnCluster:
    """AgentScope's storage or bus on a Redis Cluster: its own commands (each on one key; tier2 serves none of its
    routes and enables no knowledge base) over tier2's cluster client instead of a one-server pool."""

    cluster_url = ""
    _client: Any

    async def __aenter__(self) -> Any:
        self._client = connect(self.cluster_url)
        await self._client.initialize()  # RedisCluster: the slot map before a pubsub
        return self

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        self._client = None


class _ClusterStorage(_OnCluster, RedisStorage):
    pass


class _ClusterBus(_OnCluster, RedisMessageBus):
    pass


def _agentscope_backends(url: str) -> tuple[RedisStorage, RedisMessageBus]:
    if parse_redis_url(url).kind == "cluster":
        storage, bus = _ClusterStorage(), _ClusterBus()
        storage.cluster_url = bus.cluster_url = url
        return storage, bus
    params = _agentscope_redis(url)
    return RedisStorage(**params), RedisMessageBus(**params)


def build_app(settings: Settings, redis_url: str, workers: int = 1) -> FastAPI:
    """The service; ``workers`` in-process workers take runs from the dispatch stream (0: only external
    ``tier2 worker`` processes run them)."""
    storage, bus = _agentscope_backends(redis_url)
    install_log_redaction()  # no run token (access log) and no Redis password in a log line
    pack = load_pack(settings.packs_dir, settings.pack_id, settings.skills_dir)
    wsm = ProjectWorkspaceManager(settings.workspaces, pack.agent_skill_dirs)  # required by create_app's lifespan
    keys = ApiKeys.from_env()
    names = settings.trusted_host_names
    hosts = Middleware(TrustedHosts, names=names, local=not keys.enabled, enforce_host=not keys.enabled or bool(names))
    app = create_app(
        storage=storage, message_bus=bus, workspace_manager=wsm, enable_index_worker=False,
        extra_credentials=[OfflineCredential], title="tier2", version=__version__, extra_middlewares=[hosts],
    )
    dropped = sorted(served_routes(app))
    app.router.routes.clear()  # AgentScope's routers and FastAPI's unauthenticated docs: see the module doc
    log.debug("not serving AgentScope/FastAPI routes: %s", ", ".join(f"{m} {p}" for m, p in dropped))
    agentscope_lifespan = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(a: FastAPI) -> AsyncIterator[None]:
        async with open_runtime(settings, redis_url) as rt:
            a.state.tier2 = rt
            orphans = await sweep_orphans(rt.store)  # foreground runs whose process died: end them visibly
            if orphans:
                log.warning("ended %d run(s) orphaned by a dead process: %s", len(orphans), ", ".join(orphans))
            interrupted = await rt.store.complete_accepts()  # acceptances a crash stopped half-way (store.accept)
            if interrupted:
                log.warning("completed or undid %d interrupted acceptance(s)", len(interrupted))
            indexed = await RunIndex(rt.store.r, rt.store.keys).backfill()  # runs accepted before the index
            if indexed:
                log.info("listed %d earlier run(s) in their tenants' run indexes", indexed)
            await ensure_group(rt)
            stop = asyncio.Event()
            a.state.tier2_workers = [Worker(rt) for _ in range(workers)]
            tasks = [asyncio.create_task(w.serve(stop)) for w in a.state.tier2_workers]
            log.info("tier2 service: %d in-process worker(s), redis %s", workers, redact_url(redis_url))
            try:
                async with agentscope_lifespan(a):
                    yield
            finally:
                stop.set()  # running attempts are interrupted and released: they resume in another worker
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    app.router.lifespan_context = lifespan
    app.state.tier2_api_keys = keys
    app.state.tier2_workers = []
    install_error_handlers(app)
    app.include_router(health.router)
    app.include_router(health.authed_router)
    app.include_router(runs.router)
    app.include_router(projects.router)
    app.include_router(trajectory.router)
    app.include_router(run_files.router)
    app.include_router(studio_router())
    app.include_router(docs_router(public=settings.public_docs))
    return app
