"""The run's middleware onion, declared in one place (index 0 = outermost).

    Cancel      — outermost: once cancellation is requested, no further model call or tool starts
    PathGuard   — refuses file-tool calls outside the project before anything runs

Budget, circuit breakers, tracing and checkpoints join this list (outermost first: tracing → budget →
breakers → checkpoint → path guard) as the governance and durability work lands; a unit test pins the order.
"""

from __future__ import annotations

from collections.abc import Callable

from agentscope.middleware import MiddlewareBase

from tier2.middleware.cancel import CancelMiddleware
from tier2.middleware.path_guard import PathGuardMiddleware

__all__ = ["build_middlewares"]


def _never() -> bool:
    return False


def build_middlewares(project_root: str, cancelled: Callable[[], bool] = _never) -> list[MiddlewareBase]:
    return [CancelMiddleware(cancelled), PathGuardMiddleware(project_root)]
