"""Every agent path is governed: tier2 serves no AgentScope session/chat route (they ran agents with none of
tier2's controls and a host Bash), so the only way an agent runs is a tier2 run — its onion, its workspace kind;
no route takes a permission mode or a workspace that the ceilings forbid, and no route's handler is AgentScope's."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi.routing import APIRoute

from tier2.app import TIER2_ROUTES, build_app, served_routes
from tier2.settings.loader import Settings

pytestmark = [pytest.mark.redis]


async def test_no_route_reaches_an_agentscope_session_or_a_host_shell(tmp_path: Path, redis_url: str) -> None:
    app = build_app(Settings(workspaces=tmp_path, redis_url=redis_url), redis_url, workers=0)
    served = served_routes(app)
    assert served == TIER2_ROUTES
    assert all(p.startswith(("/v1/", "/healthz", "/docs", "/redoc", "/openapi.json")) for _, p in served), served
    endpoints = []
    for route in app.router.routes:
        contexts = route.effective_route_contexts() if hasattr(route, "effective_route_contexts") else [route]
        endpoints += [getattr(c, "endpoint", None) for c in contexts if isinstance(c, APIRoute)
                      or hasattr(c, "endpoint")]
    foreign = [e.__module__ for e in endpoints if e is not None and not e.__module__.startswith(
        ("tier2.", "fastapi.", "starlette."))]
    assert not foreign, foreign
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for method, path, body in (
            ("POST", "/sessions/", {"agent_id": "x"}), ("POST", "/chat/", {"session_id": "s", "message": "ls"}),
            ("POST", "/sessions/s/permission_mode", {"mode": "bypass"}), ("GET", "/workspace/bash", None),
            ("POST", "/agent/", {"name": "a"}),
        ):
            reply = await client.request(method, path, json=body)
            assert reply.status_code == 404, (path, reply.status_code)
        # a run cannot carry a permission mode, nor (until the service validates it) a workspace of its own
        for extra in ({"permission_mode": "bypassPermissions"}, {"workspace": {"kind": "local", "network": True}}):
            reply = await client.post("/v1/runs", json={"brief": "a potion shop tycoon game", **extra})
            assert reply.status_code == 422, reply.text
