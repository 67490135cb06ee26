"""The run's middleware onion, declared in one place (index 0 = outermost).

    tracing     — outermost: its spans include the time spent in every layer below (OpenTelemetry)
    cancel      — once cancellation is requested, no further model call or tool starts
    budget      — hard ledger: reserve before each model call, refuse past the cap (+ AgentScope's soft budget)
    breakers    — step caps, stuck patterns, timeouts: stop a looping or stalled agent with a reason
    checkpoint  — persists the AgentState after every tool result and at reply end (resume point)
    context     — the agent's context budget (`tier2.context`): compresses on ``on_compress_context`` (no model call;
                  AgentScope's own compression never runs), cuts long tool outputs to a marker + artifact file.
                  Inside checkpoint and breakers: a compression is checkpointed at once (record included), and the
                  breakers (stuck: ``compression``) and budget see the compression happen. Outside learning: the
                  library observes the full Build/RunGame result, and its note to the writer is part of what gets
                  cut (head + tail: the note, at the end, survives)
    learning    — the debug case library (`tier2.learning`): after a failing Build/RunGame, a verified fix is applied
                  and re-checked before the model sees the result (inside checkpoint: the step's snapshot and
                  checkpoint cover the fixed files)
    path_guard  — parses each tool call's arguments strictly and refuses paths outside the project, reserved
                  names and oversized writes; the tool then gets exactly the checked arguments
    operations  — innermost: tool calls keyed by operation id: a side effect already done is looked up, never
                  repeated

Why this order: tracing must see refusals by budget/breakers; budget sits outside breakers so a refused call
is never counted as agent progress; checkpoint sits outside the operation ledger so a checkpoint after a tool
always covers the recorded operation; the path guard sits outside the operation ledger so the ledger (which
looks at a Write's target to recognise an effect applied before a crash) only ever sees checked arguments.
Each layer keeps per-run state in ``AgentState.middle_context`` (or in Redis), never on the instance.
A unit test pins the order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentscope.middleware import MiddlewareBase

from tier2.middleware.cancel import CancelMiddleware
from tier2.middleware.path_guard import MAX_WRITE_BYTES, PathGuardMiddleware

__all__ = ["RunLayers", "build_middlewares"]


def _never() -> bool:
    return False


@dataclass
class RunLayers:
    """The per-run layers built by the run (each optional: a bare agent in a test has none of them)."""

    tracing: Sequence[MiddlewareBase] = field(default_factory=list)
    budget: Sequence[MiddlewareBase] = field(default_factory=list)
    breakers: Sequence[MiddlewareBase] = field(default_factory=list)
    checkpoint: Sequence[MiddlewareBase] = field(default_factory=list)
    context: Sequence[MiddlewareBase] = field(default_factory=list)
    learning: Sequence[MiddlewareBase] = field(default_factory=list)
    operations: Sequence[MiddlewareBase] = field(default_factory=list)


def build_middlewares(
    project_root: str | None, cancelled: Callable[[], bool] = _never, layers: RunLayers | None = None,
    write_limit: int = MAX_WRITE_BYTES,
) -> list[MiddlewareBase]:
    lay = layers or RunLayers()
    return [
        *lay.tracing,
        CancelMiddleware(cancelled),
        *lay.budget,
        *lay.breakers,
        *lay.checkpoint,
        *lay.context,
        *lay.learning,
        PathGuardMiddleware(project_root, write_limit),
        *lay.operations,
    ]
