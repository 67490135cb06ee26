"""Assemble the run's L3 scorer: a tool-less `Agent` that answers the visual rubric.

It is an agent of the run like the writer: its model comes from the same routing (route + fallback chain) and its
calls pass the same onion (tracing, cancel, hard budget ledger, breakers) with the same call-id scheme, so its
cost and calls show in the run's ledger, usage and trajectory. It has no tools, so the path guard has nothing
to let through (it has no project root: any file tool would be refused), and it is never checkpointed (a
one-shot call).
"""

from __future__ import annotations

from collections.abc import Callable

from agentscope.agent import Agent, ModelConfig, ReActConfig
from agentscope.model import ChatModelBase
from agentscope.permission import PermissionContext, PermissionMode
from agentscope.state import AgentState
from agentscope.tool import Toolkit

from tier2.middleware import RunLayers, build_middlewares
from tier2.prompts import load_prompt

__all__ = ["build_scorer"]


def build_scorer(*, model: ChatModelBase, fallback_model: ChatModelBase | None = None,
                 layers: RunLayers | None = None, cancelled: Callable[[], bool] | None = None) -> Agent:
    return Agent(
        name="l3_scorer", system_prompt=load_prompt("l3_scorer"), model=model, toolkit=Toolkit(tools=[]),
        middlewares=build_middlewares(None, cancelled or (lambda: False), layers),
        state=AgentState(permission_context=PermissionContext(mode=PermissionMode.DONT_ASK)),
        react_config=ReActConfig(max_iters=1), model_config=ModelConfig(fallback_model=fallback_model),
    )
