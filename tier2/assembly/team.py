"""Assemble the design studio's agents: the leader and one designer per role, all read-only.

Each is a plain AgentScope `Agent` driven by tier2 (`tier2.runs.loop.phases.design`), not an AgentScope team session:
tier2 owns the wake-ups (a mailbox that cannot lose a message, `tier2.store.team`), the checkpoints (one
namespace per agent) and the files (answers are JSON; tier2 writes the documents). Every agent gets the run's
layers for its own role (ledger, breakers, trajectory, per-agent checkpoints), its own prompt file
(``tier2/prompts/design/<role>.md``), its model from ``agents:`` (``designer.<area>`` → ``designer``) and the
skills every role loads (`role_toolkit`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from agentscope.agent import Agent, ModelConfig, ReActConfig
from agentscope.model import ChatModelBase
from agentscope.permission import PermissionBehavior, PermissionContext, PermissionMode, PermissionRule
from agentscope.state import AgentState
from agentscope.tool import ToolBase, Toolkit

from tier2.middleware import RunLayers, build_middlewares
from tier2.middleware.read_only import READ_ONLY_TOOLS, ReadOnlyGuardMiddleware
from tier2.packs import Pack
from tier2.packs.skills import load_skills
from tier2.prompts import load_prompt, render_prompt
from tier2.tools import make_file_tools, make_rw_tools

__all__ = ["DESIGN_MAX_ITERS", "build_design_agent", "designer_permissions", "read_only_tools", "role_toolkit"]

DESIGN_MAX_ITERS = 8
#: tools a designer's permission rules deny outright (deny rules are checked first in every mode)
_DENIED = ("Write", "Edit", "Bash", "NotebookEdit", "TaskCreate", "TeamCreate", "AgentCreate", "TeamSay")


def designer_permissions(project: Path) -> PermissionContext:
    """DONT_ASK (anything not allowed is denied): Read allowed inside the project, writes and commands denied."""
    root = str(project.resolve())

    def rule(tool: str, content: str | None, behavior: PermissionBehavior) -> PermissionRule:
        return PermissionRule(tool_name=tool, rule_content=content, behavior=behavior, source="tier2-design")

    return PermissionContext(
        mode=PermissionMode.DONT_ASK,
        allow_rules={"Read": [rule("Read", os.path.join(root, "*"), PermissionBehavior.ALLOW)]},
        deny_rules={t: [rule(t, None, PermissionBehavior.DENY)] for t in _DENIED})


def read_only_tools(project: Path) -> list[ToolBase]:
    """AgentScope's Read (on tier2's project backend) plus tier2's project-bound Glob and Grep; nothing that writes
    or runs."""
    return make_rw_tools(project, writes=False) + [t for t in make_file_tools(project) if t.name in READ_ONLY_TOOLS]


def role_toolkit(tools: Sequence[ToolBase], pack: Pack) -> Toolkit:
    """A read-only role's toolkit: ``tools`` and the skills of every agent role (`Pack.agent_skill_dirs`, read once,
    each file closed before the toolkit exists: `tier2.packs.skills.load_skills`; the writer gets the same list
    through its workspace). AgentScope adds its ``Skill`` viewer, which shows a registered skill by name and reads
    nothing else."""
    return Toolkit(tools=list(tools), skills_or_loaders=list(load_skills(pack.agent_skill_dirs)))


def system_prompt(role: str, project: Path, pack: Pack) -> str:
    area = role.split(".", 1)[1] if role.startswith("designer.") else role
    genres = "; ".join(f"{g.id} ({g.spec.title}: {', '.join(g.spec.behaviours)})" for g in pack.genres.values())
    common = render_prompt("design/common", role=role, project=project, pack=pack.ref,
                           behaviours=", ".join(pack.behaviours), genres=genres)
    body = load_prompt(f"design/{area}")
    if role.startswith("designer."):
        body += "\n" + render_prompt("design/designer_answer", area=area)
    return common + "\n" + body


def build_design_agent(
    *, role: str, project: Path, pack: Pack, model: ChatModelBase, tools: Sequence[ToolBase],
    fallback_model: ChatModelBase | None = None, layers: RunLayers | None = None,
    cancelled: Callable[[], bool] | None = None, state_json: str | None = None, write_limit: int = 0,
) -> Agent:
    """``role``: ``leader`` or ``designer.<area>``. ``layers.operations`` must be empty (designers have no side
    effects): its slot carries the read-only guard, innermost."""
    lay = layers or RunLayers()
    lay = RunLayers(tracing=lay.tracing, budget=lay.budget, breakers=lay.breakers, checkpoint=lay.checkpoint,
                    context=lay.context, operations=[ReadOnlyGuardMiddleware()])
    state = AgentState.model_validate_json(state_json) if state_json else AgentState()
    state.permission_context = designer_permissions(project)
    return Agent(
        name=role.replace(".", "_"), system_prompt=system_prompt(role, project, pack), model=model,
        toolkit=role_toolkit([t for t in tools if t.name in READ_ONLY_TOOLS], pack),
        middlewares=build_middlewares(str(project.resolve()), cancelled or (lambda: False), lay, write_limit or 1),
        state=state, react_config=ReActConfig(max_iters=DESIGN_MAX_ITERS),
        model_config=ModelConfig(fallback_model=fallback_model))
