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


def test_case_records_are_shown_in_the_trajectory_with_a_library_total() -> None:
    from tier2.service.views import PathMask, public_trajectory
    from tier2.store.trajectory import CaseCallRecord, ModelCallRecord, TrajectoryStore

    calls = [ModelCallRecord(call_id="m1", agent="writer", state="success", started_at=1.0, duration_ms=5.0,
                             model="m", input_tokens=100, output_tokens=10),
             CaseCallRecord(call_id="case-1", agent="library", state="success", started_at=2.0, duration_ms=0.0,
                            signature="abc", gate="l1.builds", action="applied", fixer="restore_last_built",
                            fixed=True, replaced_model_calls=3, replaced_tokens=900),
             CaseCallRecord(call_id="case-2", agent="library", state="success", started_at=3.0, duration_ms=0.0,
                            signature="def", gate="l1.economy", action="offered")]
    summary = TrajectoryStore.summarize(calls)
    assert summary["model_calls"] == 1 and summary["library"] == {
        "hits": 2, "applied": 1, "fixed": 1, "offered": 1, "model_calls_replaced": 3, "tokens_replaced": 900}
    view = public_trajectory("r-1", 3, 0, 10, summary, calls, PathMask(None, []))
    assert [c.kind for c in view.calls] == ["model", "case", "case"]
    assert view.summary.library is not None and view.summary.library.model_calls_replaced == 3
    assert "library" not in TrajectoryStore.summarize(calls[:1])
