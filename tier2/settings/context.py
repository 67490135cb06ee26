"""Context budgets per agent (``config/policy/context.yaml``): when an agent's prompt is compressed, how much of the
recent conversation survives verbatim, how long the summary may be, and how long one tool output may be.

The compression itself is `tier2.context` (a middleware on AgentScope's ``on_compress_context`` hook). A role
resolves like a model route: its own entry (``designer.economy``), then its family (``designer``), then
``default``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tier2.settings.agents import AGENT_ROLES

__all__ = ["CONTEXT_STATE_KEY", "AgentContextPolicy", "ContextPolicy"]

#: the compression record's slot in ``AgentState.middle_context`` (read by the budget layer: a compression that
#: advanced it made no model call)
CONTEXT_STATE_KEY = "tier2.context"


class AgentContextPolicy(BaseModel):
    """One agent's context budget (tokens as the model's ``count_tokens`` estimates them)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the prompt (system prompt + tool schemas + summary + conversation) must stay under this before every call
    budget_tokens: int = Field(default=48_000, ge=2_000, le=2_000_000)
    #: compress when the prompt reaches ``trigger_ratio * budget_tokens``
    trigger_ratio: float = Field(default=0.75, gt=0.0, lt=1.0)
    #: the most recent conversation kept verbatim after a compression (fraction of the budget)
    keep_recent_ratio: float = Field(default=0.25, gt=0.0, lt=1.0)
    #: the summary's ceiling (fraction of the budget); the pinned block is always kept whole
    summary_ratio: float = Field(default=0.15, gt=0.0, lt=1.0)
    #: a tool output longer than this is cut (head + tail) with a marker naming the file that holds all of it
    tool_output_chars: int = Field(default=12_000, ge=500, le=1_000_000)
    #: a Read (file content, copied by models into edits) is never cut in the middle: its head is kept up to this
    #: many characters, at a line boundary, with a note on where to continue (``offset``); must fit the verbatim tail
    read_output_chars: int = Field(default=40_000, ge=1_000, le=4_000_000)
    #: ``extractive``: built from the conversation, no model call (deterministic: a resume rebuilds it exactly)
    summary: Literal["extractive"] = "extractive"

    @model_validator(mode="after")
    def _room(self) -> AgentContextPolicy:
        if self.keep_recent_ratio + self.summary_ratio >= self.trigger_ratio:
            raise ValueError(f"keep_recent_ratio + summary_ratio ({self.keep_recent_ratio} + {self.summary_ratio}) "
                             f"must be below trigger_ratio ({self.trigger_ratio}): a compression has to free room")
        if self.read_output_chars > self.keep_recent_tokens * 4:
            raise ValueError(f"read_output_chars ({self.read_output_chars}) must fit the verbatim tail "
                             f"(keep_recent_ratio * budget_tokens * 4 = {self.keep_recent_tokens * 4} chars): a file "
                             "just read would otherwise be folded away before the model sees it")
        return self

    @property
    def trigger_tokens(self) -> int:
        return int(self.trigger_ratio * self.budget_tokens)

    @property
    def keep_recent_tokens(self) -> int:
        return int(self.keep_recent_ratio * self.budget_tokens)

    @property
    def summary_tokens(self) -> int:
        return int(self.summary_ratio * self.budget_tokens)


class ContextPolicy(BaseModel):
    """``context:`` in the hot policy."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    enabled: bool = True
    default: AgentContextPolicy = AgentContextPolicy()
    agents: dict[str, AgentContextPolicy] = {}

    @model_validator(mode="after")
    def _roles(self) -> ContextPolicy:
        for role in self.agents:
            family = role.split(".", 1)[0]
            if role not in AGENT_ROLES and not (family == "designer" and "." in role):
                raise ValueError(f"context.agents: unknown role {role!r}; roles are {', '.join(AGENT_ROLES)} "
                                 "and designer.<area>")
        return self

    def for_agent(self, role: str) -> AgentContextPolicy:
        """The role's budget: its own entry, then its family (``designer``), then ``default``."""
        if role in self.agents:
            return self.agents[role]
        return self.agents.get(role.split(".", 1)[0], self.default)
