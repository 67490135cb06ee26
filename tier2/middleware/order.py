"""The run's middleware onion, declared in one place (index 0 = outermost).

    PathGuard   — refuses file-tool calls outside the project before anything runs

Budget, circuit breakers, tracing and checkpoints join this list (outermost first: tracing → budget →
breakers → checkpoint → path guard) as the governance and durability work lands; a unit test pins the order.
"""

from __future__ import annotations

from agentscope.middleware import MiddlewareBase

from tier2.middleware.path_guard import PathGuardMiddleware

__all__ = ["build_middlewares"]


def build_middlewares(project_root: str) -> list[MiddlewareBase]:
    return [PathGuardMiddleware(project_root)]
