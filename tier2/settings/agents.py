"""Per-agent model routing (hot policy ``agents:`` in ``config/policy/models.yaml``) and per-route fallbacks.

A role maps to a route name; ``designer.<area>`` falls back to ``designer`` and then, like every other role, to
``default_model``. A route's optional ``fallback`` names another route, tried when the route's call fails after
its retries; chains are followed (A → B → C) and cycles are refused when the policy loads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["AGENT_ROLES", "check_routing", "resolve_role", "fallback_chain"]

#: Roles with a route of their own; ``designer.<area>`` (e.g. designer.economy) is accepted as well.
AGENT_ROLES = ("leader", "designer", "writer", "explorer", "reviewer", "l3_scorer", "assets")
_DESIGNER = re.compile(r"^designer\.[a-z][a-z0-9_]*$")


def _known(role: str) -> bool:
    return role in AGENT_ROLES or bool(_DESIGNER.match(role))


def fallback_chain(models: Mapping[str, Any], name: str) -> list[str]:
    """``name`` and its fallbacks in order (the policy validator guarantees it ends)."""
    chain = [name]
    while (nxt := getattr(models.get(chain[-1]), "fallback", None)) and nxt not in chain:
        chain.append(nxt)
    return chain


def check_routing(models: Mapping[str, Any], agents: Mapping[str, str]) -> None:
    """Raise ValueError naming the problem: unknown role, unknown route, or a fallback cycle."""
    known = ", ".join(sorted(models)) or "(none)"
    for role, route in agents.items():
        if not _known(role):
            raise ValueError(f"agents: unknown role {role!r}; roles are {', '.join(AGENT_ROLES)} "
                             "and designer.<area>")
        if route not in models:
            raise ValueError(f"agents.{role}: unknown model route {route!r}; configured routes: {known}")
        kind = getattr(models[route], "kind", None)
        if (role == "assets") != (kind == "images") and not (role == "assets" and kind == "offline"):
            raise ValueError(f"agents.{role}: route {route!r} is of kind {kind!r}; "
                             + ("the assets role takes an images (or offline) route" if role == "assets"
                                else "an images route serves only the assets role"))
    for name, route in models.items():
        fb = getattr(route, "fallback", None)
        if fb is not None and fb not in models:
            raise ValueError(f"models.{name}.fallback: unknown model route {fb!r}; configured routes: {known}")
    for name, route in models.items():
        fb = getattr(route, "fallback", None)
        seen = [name]
        while fb is not None:
            if fb in seen:
                raise ValueError("model route fallbacks form a cycle: " + " -> ".join([*seen, fb]))
            seen.append(fb)
            fb = getattr(models[fb], "fallback", None)


def resolve_role(agents: Mapping[str, str], role: str, default: str | None) -> str | None:
    """The route name for ``role``: its own entry, then its family (``designer``), then ``default``."""
    if role in agents:
        return agents[role]
    family = role.split(".", 1)[0]
    return agents.get(family, default)
