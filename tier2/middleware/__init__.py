"""AgentScope middlewares of a tier2 run; the onion order is declared once, in `order`."""

from tier2.middleware.cancel import CancelMiddleware
from tier2.middleware.order import RunLayers, build_middlewares
from tier2.middleware.path_guard import PathGuardMiddleware

__all__ = ["CancelMiddleware", "PathGuardMiddleware", "RunLayers", "build_middlewares"]
