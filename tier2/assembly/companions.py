"""Assemble the writer's companions (seed 004 §6.2): the explorer and the reviewer, both read-only.

Like a designer (`tier2.assembly.team`) each is a plain AgentScope `Agent`, fresh for every call, with three
layers of read-only: a toolkit of Read, Glob, Grep plus tier2's ``Index`` (and ``Checks`` for the reviewer); a
permission context that denies Write, Edit, Bash and every other tool; and the read-only guard innermost in its
onion. Its layers are the run's (``build_run_layers(agent="explorer"|"reviewer", durable=False)``): the run's
budget ledger, breakers, tracing and trajectory; never checkpointed (a one-shot call). It loads the skills of
every agent role (`tier2.assembly.team.role_toolkit`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from agentscope.agent import Agent, ModelConfig, ReActConfig
from agentscope.model import ChatModelBase
from agentscope.state import AgentState
from agentscope.tool import ToolBase

from tier2.assembly.team import designer_permissions, read_only_tools, role_toolkit
from tier2.companions.tools import COMPANION_TOOLS, ChecksTool, IndexTool
from tier2.middleware import RunLayers, build_middlewares
from tier2.middleware.read_only import READ_ONLY_TOOLS, ReadOnlyGuardMiddleware
from tier2.packs import Pack
from tier2.packs.engine import EngineAdapter
from tier2.prompts import render_prompt

__all__ = ["CompanionRole", "build_companion", "companion_tools"]

CompanionRole = Literal["explorer", "reviewer"]


def companion_tools(role: CompanionRole, project: Path, adapter: EngineAdapter | None) -> list[ToolBase]:
    """Read/Glob/Grep bound to the project, ``Index``, and for the reviewer ``Checks``."""
    extra: list[ToolBase] = [IndexTool(project)]
    if role == "reviewer":
        extra.append(ChecksTool(project, adapter))
    return read_only_tools(project) + extra


def build_companion(
    *, role: CompanionRole, project: Path, pack: Pack, model: ChatModelBase, tools: Sequence[ToolBase],
    max_iters: int, fallback_model: ChatModelBase | None = None, layers: RunLayers | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Agent:
    """``layers.operations`` is replaced by the read-only guard (a companion has no side effects to record)."""
    allowed = READ_ONLY_TOOLS | COMPANION_TOOLS
    lay = layers or RunLayers()
    lay = RunLayers(tracing=lay.tracing, budget=lay.budget, breakers=lay.breakers,
                    operations=[ReadOnlyGuardMiddleware(allowed, who=f"the {role}'s tools")])
    return Agent(
        name=role, system_prompt=render_prompt(role, project=project.resolve()), model=model,
        toolkit=role_toolkit([t for t in tools if t.name in allowed], pack),
        middlewares=build_middlewares(str(project.resolve()), cancelled or (lambda: False), lay, 1),
        state=AgentState(permission_context=designer_permissions(project)),
        react_config=ReActConfig(max_iters=max_iters), model_config=ModelConfig(fallback_model=fallback_model))
