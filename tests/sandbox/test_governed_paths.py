"""Every agent path is governed: tier2 serves no AgentScope session/chat route (they ran agents with none of
tier2's controls and a host Bash), so the only way an agent runs is a tier2 run — its onion, its workspace kind;
no route takes a permission mode or a workspace that the ceilings forbid, and no route's handler is AgentScope's."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.routing import APIRoute

from tier2.app import TIER2_ROUTES, build_app, served_routes
from tier2.settings.loader import Settings

pytestmark = [pytest.mark.redis]


async def test_no_route_reaches_an_agentscope_session_or_a_host_shell(tmp_path: Path, redis_url: str) -> None:
    app = build_app(Settings(workspaces=tmp_path, redis_url=redis_url), redis_url, workers=0)
    served = served_routes(app)
    assert served == TIER2_ROUTES
    assert all(p.startswith(("/v1/", "/healthz", "/docs", "/redoc", "/openapi.json", "/studio")) for _, p in served), \
        served
    assert {m for m, p in served if p.startswith("/studio")} == {"GET"}  # the Studio's static files, nothing else
    endpoints = []
    for route in app.router.routes:
        contexts = route.effective_route_contexts() if hasattr(route, "effective_route_contexts") else [route]
        endpoints += [getattr(c, "endpoint", None) for c in contexts if isinstance(c, APIRoute)
                      or hasattr(c, "endpoint")]
    foreign = [e.__module__ for e in endpoints if e is not None and not e.__module__.startswith(
        ("tier2.", "fastapi.", "starlette."))]
    assert not foreign, foreign
    from tests.e2e.helpers import serve_in_process

    settings = Settings(workspaces=tmp_path / "ws", redis_url=redis_url, key_prefix=f"gov-{tmp_path.name}")
    async with serve_in_process(settings, redis_url, workers=0) as client:
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


async def test_a_run_may_ask_only_for_a_workspace_kind_the_ceiling_allows(tmp_path: Path, redis_url: str) -> None:
    import shutil

    from tests.e2e.helpers import serve_in_process
    from tier2.settings.loader import REPO_ROOT

    config = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    (config / "security" / "zz-test.toml").write_text('[sandbox]\nallowed_kinds = ["local", "isolated"]\n')
    settings = Settings(workspaces=tmp_path / "ws", redis_url=redis_url, config_dir=config,
                        key_prefix=f"gov-{tmp_path.name}")
    async with serve_in_process(settings, redis_url, workers=0) as client:
        refused = await client.post("/v1/runs", json={"brief": "a potion shop tycoon game", "workspace": "docker"})
        assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_request", refused.text
        assert "docker" in refused.json()["error"]["message"]
        ok = await client.post("/v1/runs", json={"brief": "a potion shop tycoon game", "workspace": "isolated"})
        assert ok.status_code == 202, ok.text
        run = (await client.get(f"/v1/runs/{ok.json()['run_id']}")).json()
        assert run["options"]["workspace"] == "isolated"
