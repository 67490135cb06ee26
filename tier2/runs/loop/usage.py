"""Translate AgentScope agent events into tier2 run events (model calls, tool starts/finishes) and the run's usage.

Cost is never priced here: the call recorder (`tier2.middleware.recorder`) prices each model call once, where it
records it, and puts the figure on the call's ``ModelCallEndEvent`` (``CALL_COST``); the usage and the
``model_called`` event read it. A call without that figure (an agent without the recorder) is unpriced.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from agentscope.event import (
    ModelCallEndEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
)

from tier2.events import ModelCalled, Phase, Tier2Event, ToolFinished, ToolStarted
from tier2.middleware.recorder import default_redactor, summarize_args
from tier2.settings.secrets import Redactor
from tier2.telemetry import ANSWERED_BY, CALL_COST, USAGE_ESTIMATED

__all__ = ["EventMapper", "Usage"]


@dataclass
class Usage:
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)
    tool_ms: dict[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0
    priced: bool = True
    cost_by_phase: dict[str, float] = field(default_factory=dict)
    cost_by_agent: dict[str, float] = field(default_factory=dict)
    calls_by_model: dict[str, int] = field(default_factory=dict)  # the model that answered (fallbacks included)
    #: model calls whose server sent no usage: their tokens (and so their cost) are estimates (characters / 4)
    estimated_calls: int = 0
    #: the run's budget ledger at the end (cap, spent, reserved, calls, refused, overrun), when it has one
    budget: dict[str, Any] | None = None

    def report(self) -> dict[str, object]:
        return {"model_calls": self.model_calls, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "tool_calls": self.tool_calls,
                "cost_usd": round(self.cost_usd, 6) if self.priced else None, "priced": self.priced,
                "cost_by_phase": {k: round(v, 6) for k, v in self.cost_by_phase.items()},
                "cost_by_agent": {k: round(v, 6) for k, v in self.cost_by_agent.items()},
                "calls_by_model": dict(self.calls_by_model), "estimated_calls": self.estimated_calls,
                **({"budget": self.budget} if self.budget is not None else {})}


    def add(self, other: Usage, phase: str) -> None:
        """Add another agent's usage (a companion call's) to this one: its cost stays under its own agent and goes
        to ``phase``, the run's phase when the call was made."""
        self.model_calls += other.model_calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.priced = self.priced and other.priced
        self.estimated_calls += other.estimated_calls
        self.cost_usd += other.cost_usd
        for k, v in other.cost_by_agent.items():
            self.cost_by_agent[k] = self.cost_by_agent.get(k, 0.0) + v
        if other.cost_usd:
            self.cost_by_phase[phase] = self.cost_by_phase.get(phase, 0.0) + other.cost_usd
        for k, n in other.calls_by_model.items():
            self.calls_by_model[k] = self.calls_by_model.get(k, 0) + n
        for k, n in other.tool_calls.items():  # by tool name, as the designers' and the trajectory's
            self.tool_calls[k] = self.tool_calls.get(k, 0) + n


class EventMapper:
    """Stateful per run: accumulates tool-call arguments so a tool event can name its target."""

    def __init__(self, run_id: str, model_name: str, agent: str = "writer", redactor: Redactor | None = None,
                 ) -> None:
        self.run_id, self.model_name, self.agent = run_id, model_name, agent
        self.redactor = redactor or default_redactor()  # tool summaries reach tenants: never a secret
        self.phase: Phase = "implement"
        self.step = 0
        self.usage = Usage()
        self._args: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self._results: dict[str, str] = {}
        self._started: dict[str, float] = {}

    def map(self, event: Any) -> list[Tier2Event]:
        rid = self.run_id
        if isinstance(event, ModelCallEndEvent):
            self.step += 1
            self.usage.model_calls += 1
            tokens_in, tokens_out = event.input_tokens or 0, event.output_tokens or 0
            self.usage.input_tokens += tokens_in
            self.usage.output_tokens += tokens_out
            model = str(event.metadata.get(ANSWERED_BY) or self.model_name)  # set by the call recorder
            self.usage.calls_by_model[model] = self.usage.calls_by_model.get(model, 0) + 1
            if event.metadata.get(USAGE_ESTIMATED):
                self.usage.estimated_calls += 1
            raw = event.metadata.get(CALL_COST)  # priced by the call recorder
            cost = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None
            if cost is None:
                self.usage.priced = False
            else:
                u = self.usage
                u.cost_usd += cost
                u.cost_by_phase[self.phase] = u.cost_by_phase.get(self.phase, 0.0) + cost
                u.cost_by_agent[self.agent] = u.cost_by_agent.get(self.agent, 0.0) + cost
            return [ModelCalled(run_id=rid, step=self.step, model=model, input_tokens=tokens_in,
                                output_tokens=tokens_out, cost_usd=cost)]
        if isinstance(event, ToolCallStartEvent):
            self._names[event.tool_call_id] = event.tool_call_name
            self._args[event.tool_call_id] = ""
        elif isinstance(event, ToolCallDeltaEvent):
            self._args[event.tool_call_id] = self._args.get(event.tool_call_id, "") + (event.delta or "")
        elif isinstance(event, ToolCallEndEvent):
            name = self._names.get(event.tool_call_id, "?")
            self.usage.tool_calls[name] = self.usage.tool_calls.get(name, 0) + 1
            return [ToolStarted(run_id=rid, step=self.step, tool=name, call_id=event.tool_call_id,
                                summary=summarize_args(self._args.get(event.tool_call_id, ""), self.redactor))]
        elif isinstance(event, ToolResultStartEvent):
            self._started[event.tool_call_id] = time.monotonic()
        elif isinstance(event, ToolResultTextDeltaEvent):
            self._results[event.tool_call_id] = self._results.get(event.tool_call_id, "") + (event.delta or "")
        elif isinstance(event, ToolResultEndEvent):
            name = self._names.get(event.tool_call_id, "?")
            text = self._results.pop(event.tool_call_id, "")
            began = self._started.pop(event.tool_call_id, None)
            if began is not None:
                self.usage.tool_ms[name] = self.usage.tool_ms.get(name, 0) + int((time.monotonic() - began) * 1000)
            first = self.redactor.summary(text.strip().splitlines()[0], 160) if text.strip() else ""
            return [ToolFinished(run_id=rid, step=self.step, tool=name, call_id=event.tool_call_id,
                                 state=str(getattr(event.state, "value", event.state)), summary=first)]
        return []
