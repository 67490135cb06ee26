"""tier2's own spans: the run, its phases and each validation (AgentScope's `TracingMiddleware` makes the
``invoke_agent`` / ``chat`` / ``execute_tool`` spans). Everything here is a no-op unless `setup_tracing` installed
an SDK provider, so an untraced run pays one ``isinstance`` check per helper call."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Link, Span, Status, StatusCode

__all__ = ["A", "ANSWERED_BY", "CALL_COST", "DROPPED_PARAMS", "FALLBACK_INDEX", "USAGE_ESTIMATED",
           "RunTrace", "tracing_enabled", "tracer", "span", "recording_span",
           "traced", "annotate_validation"]

T = TypeVar("T")
#: metadata keys on a final `ChatResponse` (set by `tier2.models.fallback.FallbackChain`) and on AgentScope's
#: ``ModelCallEndEvent`` (set by `tier2.middleware.recorder`): the model that actually answered, and its position
#: in the route's fallback chain
ANSWERED_BY = "tier2.model"
FALLBACK_INDEX = "tier2.fallback"
#: a model call's cost in USD (None: unpriced), priced once by the call recorder and read by everyone after it
CALL_COST = "tier2.cost_usd"
#: on a final `ChatResponse` and the ``ModelCallEndEvent`` (`tier2.models.openai_compat`): the server sent no
#: ``usage``, the tokens are an estimate; the request parameters the server refused (dropped for the run)
USAGE_ESTIMATED = "tier2.usage_estimated"
DROPPED_PARAMS = "tier2.dropped_params"


class A:
    """Attribute names (GenAI semantic conventions where one exists, ``tier2.*`` otherwise)."""

    RUN_ID = "tier2.run.id"
    RUN_STATUS = "tier2.run.status"
    RUN_STOP_REASON = "tier2.run.stop_reason"
    BRIEF_CHARS = "tier2.brief.chars"
    PACK = "tier2.pack"
    TEMPLATE = "tier2.pack.template"
    AGENT = "tier2.agent"
    ROUTE = "tier2.model.route"
    PHASE = "tier2.phase"
    PHASE_DETAIL = "tier2.phase.detail"
    COST_USD = "tier2.cost_usd"
    PRICED = "tier2.priced"
    CALL_ID = "tier2.call.id"
    REQUEST_MODEL = "gen_ai.request.model"
    RESPONSE_MODEL = "gen_ai.response.model"
    INPUT_TOKENS = "gen_ai.usage.input_tokens"
    OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
    VALIDATION_PASSED = "tier2.validation.passed"
    VALIDATION_TARGET = "tier2.validation.target"
    VALIDATION_MODE = "tier2.validation.mode"
    GATE_IDS = "tier2.gate.ids"
    GATES_FAILED = "tier2.gate.failed"


def tracing_enabled() -> bool:
    """True once an SDK provider is installed (the same test AgentScope's `TracingMiddleware` makes)."""
    return isinstance(trace.get_tracer_provider(), TracerProvider)


def tracer() -> trace.Tracer:
    from tier2 import __version__

    return trace.get_tracer("tier2", __version__)


def _clean(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """OTel attribute values: str/bool/int/float or lists of them; None is dropped, anything else is str()."""
    out: dict[str, Any] = {}
    for k, v in attrs.items():
        if v is None:
            continue
        if isinstance(v, (list, tuple)):
            out[k] = [x if isinstance(x, (str, bool, int, float)) else str(x) for x in v]
        else:
            out[k] = v if isinstance(v, (str, bool, int, float)) else str(v)
    return out


def recording_span() -> Span | None:
    """The active span when it records (e.g. the ``chat`` span around a model call), else None."""
    current = trace.get_current_span()
    return current if current.is_recording() else None


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[Span | None]:
    """A child span of the active one (None when tracing is off); exceptions are recorded on it."""
    if not tracing_enabled():
        yield None
        return
    with tracer().start_as_current_span(name, attributes=_clean(attributes)) as s:
        yield s


def traced(name: str, annotate: Callable[[Span, Any], None] | None = None,
           ) -> Callable[[Callable[..., Awaitable[T]]], Callable[..., Awaitable[T]]]:
    """Decorate a coroutine function: one span per call, ``annotate(span, result)`` adds result attributes."""

    def wrap(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
        @functools.wraps(fn)
        async def inner(*args: Any, **kwargs: Any) -> T:
            if not tracing_enabled():
                return await fn(*args, **kwargs)
            with tracer().start_as_current_span(name) as s:
                result = await fn(*args, **kwargs)
                if annotate is not None:
                    annotate(s, result)
                return result

        return inner

    return wrap


def annotate_validation(s: Span, report: Any) -> None:
    """Verdict and gates of a `ValidationReport` (duck-typed: telemetry sits below the validators)."""
    gates = list(getattr(report, "gates", []))
    s.set_attributes(_clean({
        A.VALIDATION_PASSED: bool(getattr(report, "passed", False)),
        A.VALIDATION_TARGET: getattr(report, "target", None), A.VALIDATION_MODE: getattr(report, "mode", None),
        A.GATE_IDS: [g.id for g in gates], A.GATES_FAILED: [g.id for g in gates if not g.passed],
    }))
    for g in gates:
        s.add_event("gate", _clean({"tier2.gate.id": g.id, "tier2.gate.layer": g.layer, "tier2.gate.passed": g.passed,
                                    "tier2.gate.mode": getattr(g, "mode", None),
                                    "tier2.gate.summary": str(getattr(g, "summary", ""))[:300]}))
    if not getattr(report, "passed", True):
        s.set_status(Status(StatusCode.ERROR, "blocking gates failed: " + ", ".join(
            g.id for g in gates if getattr(g, "blocking", not g.passed))))


class RunTrace:
    """The spans of one run: a root ``run`` span and one ``phase <name>`` child at a time.

    Each phase is made the active context of the run's task, so AgentScope's agent/model/tool spans and the
    validation spans nest under it without contexts being passed around. A run is the root of its own trace:
    a service request that queued it is *linked*, not its parent (the request ends long before the run).
    """

    def __init__(self, run_id: str, **attributes: Any) -> None:
        self.on = tracing_enabled()
        self.run_span: Span | None = None
        self.phase_span: Span | None = None
        if not self.on:
            return
        self._outer = otel_context.get_current()
        caller = trace.get_current_span().get_span_context()
        self.run_span = tracer().start_span("run", context=Context(), links=[Link(caller)] if caller.is_valid else [],
                                            attributes=_clean({A.RUN_ID: run_id, **attributes}))
        otel_context.attach(trace.set_span_in_context(self.run_span))

    def annotate(self, **attributes: Any) -> None:
        if self.run_span is not None:
            self.run_span.set_attributes(_clean(attributes))

    def phase(self, name: str, detail: str = "") -> None:
        """End the current phase span and start ``phase <name>`` under the run (made current)."""
        if self.run_span is None:
            return
        if self.phase_span is not None:
            self.phase_span.end()
        parent = trace.set_span_in_context(self.run_span, self._outer)
        self.phase_span = tracer().start_span(f"phase {name}", context=parent,
                                              attributes=_clean({A.PHASE: name, A.PHASE_DETAIL: detail}))
        otel_context.attach(trace.set_span_in_context(self.phase_span, self._outer))

    def finish(self, status: str, reason: str, usage: Any = None, **attributes: Any) -> None:
        """End the phase and run spans (idempotent) and restore the caller's context; ``usage`` (the run's
        `Usage`) adds the totals: model calls, tokens and cost."""
        if self.run_span is None:
            return
        if self.phase_span is not None:
            self.phase_span.end()
            self.phase_span = None
        if usage is not None:
            attributes = {"tier2.model_calls": getattr(usage, "model_calls", None),
                          A.INPUT_TOKENS: getattr(usage, "input_tokens", None),
                          A.OUTPUT_TOKENS: getattr(usage, "output_tokens", None),
                          A.COST_USD: round(usage.cost_usd, 6) if getattr(usage, "priced", False) else None,
                          **attributes}
        self.run_span.set_attributes(_clean({A.RUN_STATUS: status, A.RUN_STOP_REASON: reason[:500], **attributes}))
        if status == "failed":
            self.run_span.set_status(Status(StatusCode.ERROR, reason[:500]))
        self.run_span.end()
        self.run_span = None
        otel_context.attach(self._outer)
