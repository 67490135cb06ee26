"""Per-agent model routing and per-route fallbacks in the hot policy (config/policy/models.yaml)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tier2.errors import SetupError
from tier2.settings.agents import AGENT_ROLES
from tier2.settings.loader import REPO_ROOT, Policy, PolicyStore, load_policy

ROUTES = {"a": {"kind": "offline", "model": "m-a", "fallback": "b"}, "b": {"kind": "offline", "model": "m-b",
          "fallback": "c"}, "c": {"kind": "offline", "model": "m-c"}, "solo": {"kind": "offline", "model": "m-s"}}


def _policy(**extra: object) -> Policy:
    return Policy(default_model="solo", models=ROUTES, **extra)  # type: ignore[arg-type]


def test_repo_config_routes_every_role_through_a_configured_route() -> None:
    policy = PolicyStore(REPO_ROOT / "config").snapshot()
    for role in [*AGENT_ROLES, "designer.gameplay", "designer.economy", "designer.visual"]:
        if role == "l3_scorer":
            continue
        name, route = policy.agent_route(role)
        assert name in policy.models and route.kind == "offline", role
    assert policy.l3_route() is None  # no scorer configured: the offline heuristic


def test_roles_resolve_own_entry_then_family_then_default() -> None:
    policy = _policy(agents={"designer": "b", "designer.economy": "a", "writer": "c"})
    assert policy.agent_route("writer")[0] == "c"
    assert policy.agent_route("designer.economy")[0] == "a"
    assert policy.agent_route("designer.visual")[0] == "b"   # designer.<area> falls back to designer
    assert policy.agent_route("reviewer")[0] == "solo"        # no entry: default_model
    assert policy.agent_route("writer", override="a")[0] == "a"  # --model wins


def test_fallback_chain_is_followed_in_order() -> None:
    assert [n for n, _ in _policy().route_chain("a")] == ["a", "b", "c"]
    assert [n for n, _ in _policy().route_chain("solo")] == ["solo"]


@pytest.mark.parametrize(("change", "message"), [
    ({"agents": {"writer": "nope"}}, "agents.writer: unknown model route 'nope'"),
    ({"agents": {"writter": "a"}}, "unknown role 'writter'"),
    ({"models": {**ROUTES, "c": {"kind": "offline", "model": "m-c", "fallback": "ghost"}}},
     "models.c.fallback: unknown model route 'ghost'"),
    ({"models": {**ROUTES, "c": {"kind": "offline", "model": "m-c", "fallback": "a"}}},
     "fallbacks form a cycle: a -> b -> c -> a"),
    ({"models": {"x": {"kind": "offline", "model": "m", "fallback": "x"}}}, "cycle: x -> x"),
])
def test_bad_routing_is_refused_with_the_reason(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Policy(**{"default_model": "solo", "models": ROUTES, **change})  # type: ignore[arg-type]


def test_a_bad_route_in_the_hot_config_is_a_setup_error(tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", cfg)
    (cfg / "policy" / "zz-test.yaml").write_text("agents:\n  leader: missing-route\n")
    with pytest.raises(SetupError, match="agents.leader: unknown model route 'missing-route'"):
        load_policy(cfg)


def test_l3_scorer_keeps_the_old_key_and_the_agents_entry_wins() -> None:
    assert _policy(l3_scorer="b").l3_route() == "b"
    assert _policy(l3_scorer="b", agents={"l3_scorer": "c"}).l3_route() == "c"
    assert _policy().l3_route() is None
