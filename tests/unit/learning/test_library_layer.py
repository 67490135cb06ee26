"""The case library's slot in the writer's onion: inside the checkpoint layer (the step's snapshot and checkpoint
cover a fix it applied), outside the path guard and the operation ledger."""

from __future__ import annotations

from agentscope.middleware import MiddlewareBase

from tier2.middleware import RunLayers, build_middlewares
from tier2.middleware.path_guard import PathGuardMiddleware


class _Named(MiddlewareBase):
    def __init__(self, name: str) -> None:
        self.name = name


def test_the_learning_slot_sits_between_checkpoint_and_the_path_guard() -> None:
    layers = RunLayers(checkpoint=[_Named("checkpoint")], learning=[_Named("learning")],
                       operations=[_Named("operations")])
    order = [getattr(m, "name", type(m).__name__) for m in build_middlewares("/tmp/x", layers=layers)]
    assert order == ["CancelMiddleware", "checkpoint", "learning", "PathGuardMiddleware", "operations"]
    assert isinstance(build_middlewares("/tmp/x", layers=layers)[3], PathGuardMiddleware)
