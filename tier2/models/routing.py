"""Build the chat model for a named route from the policy snapshot (offline policy or OpenAI-compatible)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import openai
from agentscope.credential import OpenAICredential
from agentscope.model import ChatModelBase, OpenAIChatModel
from pydantic import SecretStr

from tier2.errors import ModelRouteError
from tier2.models.fallback import FallbackChain
from tier2.models.offline import OfflineChatModel, OfflineCredential
from tier2.models.openai_compat import CompatChatModel
from tier2.settings.loader import ModelRoute, Policy

__all__ = ["AgentModels", "agent_models", "build_model", "build_fallback"]


@dataclass(frozen=True)
class AgentModels:
    """An agent role's route and the models built for it: the route's own, and its fallback chain."""

    route_name: str
    route: ModelRoute
    model: ChatModelBase
    fallback: ChatModelBase | None


def agent_models(policy: Policy, role: str, override: str | None = None,
                 scripted: Mapping[str, ChatModelBase] | None = None, *, kinds: frozenset[str] | None = None,
                 timeout_s: float | None = None) -> AgentModels:
    """The models of agent ``role`` (``writer``, ``designer.economy``, ``explorer``, ``l3_scorer``...) under
    ``policy``: its route (``override``, the run's ``--model``, wins), that route's model and its fallbacks, with the
    policy's HTTP timeout (or ``timeout_s``). ``kinds``: only routes of these kinds (the L3 scorer: ``openai``, the
    routes that see images) — the first of the chain that is one is the route, `ModelRouteError` when none is.
    ``scripted``: a test's model for the role (or its family: ``designer`` for ``designer.economy``), on the role's
    route, without fallbacks."""
    name, route = policy.agent_route(role, override)
    chain = policy.route_chain(name)
    if kinds is not None:
        chain = [(n, r) for n, r in chain if r.kind in kinds]
        if not chain:
            raise ModelRouteError(f"agent {role!r}: no route of kind {', '.join(sorted(kinds))} in {name!r}'s chain")
        name, route = chain[0]
    mine = (scripted or {}).get(role) or (scripted or {}).get(role.split(".", 1)[0])
    if mine is not None:
        return AgentModels(name, route, mine, None)
    timeout = timeout_s if timeout_s is not None else policy.timeouts.model_call_s
    first = min(timeout, policy.timeouts.first_token_s)
    return AgentModels(name, route, build_model(name, route, timeout_s=timeout, first_token_s=first),
                       build_fallback(chain[1:], timeout_s=timeout, first_token_s=first))


def build_model(route_name: str, route: ModelRoute, timeout_s: float = 120.0,
                first_token_s: float | None = None) -> ChatModelBase:
    """Instantiate the route's model; raises `ModelRouteError` when it cannot be configured. An ``openai`` route's
    HTTP timeout is ``timeout_s``; a streamed one waits at most ``first_token_s`` for its first byte (and between
    two chunks); the breakers bound the whole call (``breakers.model_call_s``)."""
    if route.kind == "offline":
        return OfflineChatModel(
            credential=OfflineCredential(name=route_name), model=route.model,
            parameters=OfflineChatModel.Parameters(**route.parameters),
        )
    key = os.environ.get(route.api_key_env or "", "") if route.api_key_env else ""
    if route.api_key_env and not key:
        raise ModelRouteError(
            f"model route {route_name!r} needs the API key in ${route.api_key_env} (see config/policy/models.yaml)"
        )
    try:
        params = OpenAIChatModel.Parameters(**route.parameters)
    except Exception as exc:
        raise ModelRouteError(f"model route {route_name!r}: bad parameters: {exc}") from exc
    credential = OpenAICredential(name=route_name, api_key=SecretStr(key or "not-needed"), base_url=route.base_url)
    timeout: float | openai.Timeout = timeout_s
    if route.stream and first_token_s is not None and first_token_s < timeout_s:
        timeout = openai.Timeout(timeout_s, read=first_token_s)
    return CompatChatModel(
        credential=credential, model=route.model, parameters=params, stream=route.stream,
        max_retries=route.max_retries, context_size=route.context_size, client_kwargs={"timeout": timeout},
        first_token_s=first_token_s if route.stream else None,
    )


def build_fallback(chain: list[tuple[str, ModelRoute]], timeout_s: float = 120.0,
                   first_token_s: float | None = None) -> ChatModelBase | None:
    """The fallback for AgentScope's ``ModelConfig.fallback_model`` from a route's fallbacks (``Policy.route_chain``
    without its first entry): None, the one fallback model, or a `FallbackChain` of several."""
    models = [build_model(name, route, timeout_s, first_token_s) for name, route in chain]
    if not models:
        return None
    return models[0] if len(models) == 1 else FallbackChain(models)
