"""Assemble a fresh single-writer `Agent` for one run (the Agent is never resident)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agentscope.agent import Agent, ModelConfig, ReActConfig
from agentscope.model import ChatModelBase
from agentscope.permission import PermissionBehavior, PermissionContext, PermissionMode, PermissionRule
from agentscope.state import AgentState
from agentscope.tool import TaskList, TaskUpdate, ToolBase, Toolkit
from agentscope.workspace import LocalWorkspace

from tier2.middleware import RunLayers, build_middlewares
from tier2.middleware.cancel import finish_before_cancel
from tier2.middleware.path_guard import MAX_WRITE_BYTES
from tier2.models.images import image_route
from tier2.packs import Pack
from tier2.prompts import render_prompt
from tier2.sandbox import CommandSessions, Sandbox
from tier2.settings.loader import Policy
from tier2.tools import FileLimits, GameToolContext, ToolResults, make_file_tools, make_game_tools, make_rw_tools
from tier2.tools.assets import make_asset_tools
from tier2.tools.commands import CommandQuiesceMiddleware, make_command_tools
from tier2.tools.docs import make_docs_tools
from tier2.validators import ValidationRunner
from tier2.workspace import project_workspace

__all__ = ["WriterHandle", "build_writer", "writer_permissions", "WRITER_FILE_TOOLS"]

#: AgentScope's file tools the writer gets, on tier2's project backend (`tier2.tools.files.make_rw_tools`; Glob and
#: Grep are tier2's own). AgentScope's Bash (on the host) is never given: in a sandboxed workspace the writer gets
#: tier2's Bash (`tier2.tools.commands`).
WRITER_FILE_TOOLS = frozenset({"Read", "Write", "Edit"})


@dataclass
class WriterHandle:
    agent: Agent
    workspace: LocalWorkspace
    tools: GameToolContext


def writer_permissions(project: Path, sandboxed_bash: bool = False) -> PermissionContext:
    """Unattended (DONT_ASK) mode: file tools allowed inside the project, Bash denied unless it is tier2's
    sandboxed Bash (``sandboxed_bash``: the run's workspace is ``isolated``/``docker``), everything else denied."""
    root = str(project.resolve())

    def allow(tool: str, content: str | None) -> PermissionRule:
        return PermissionRule(tool_name=tool, rule_content=content, behavior=PermissionBehavior.ALLOW,
                              source="tier2")

    # the rules are fnmatch globs ("*" also matches "/" and ".."): the path guard is what really confines paths
    allow_rules = {t: [allow(t, os.path.join(root, "*"))] for t in ("Read", "Write", "Edit")}
    deny = {} if sandboxed_bash else {"Bash": [PermissionRule(tool_name="Bash", rule_content=None,
                                                              behavior=PermissionBehavior.DENY, source="tier2")]}
    return PermissionContext(mode=PermissionMode.DONT_ASK, allow_rules=allow_rules, deny_rules=deny)


def _with_quiesce(layers: RunLayers | None, commands: CommandSessions | None) -> RunLayers | None:
    """With command sessions, host-side tools wait for a quiet sandbox: the quiesce layer goes just outside the path
    guard (whose check must see files nothing in the sandbox can still change)."""
    if commands is None:
        return layers
    lay = layers or RunLayers()
    return replace(lay, checkpoint=[*lay.checkpoint, CommandQuiesceMiddleware(commands)])


def _state(state_json: str | None, project: Path, bash: bool = False) -> AgentState:
    """A fresh state, or the thread's previous one (its conversation) with this run's permissions."""
    if not state_json:
        return AgentState(permission_context=writer_permissions(project, bash))
    state = AgentState.model_validate_json(state_json)
    state.permission_context = writer_permissions(project, bash)
    return state


async def build_writer(
    *, project_id: str, project: Path, pack: Pack, policy: Policy, model: ChatModelBase,
    runner: ValidationRunner, reports_dir: Path, cancelled: Callable[[], bool] | None = None,
    state_json: str | None = None, layers: RunLayers | None = None, fallback_model: ChatModelBase | None = None,
    home: Path | None = None, write_limit: int = MAX_WRITE_BYTES, results: ToolResults | None = None,
    sandbox: Sandbox | None = None, commands: CommandSessions | None = None, extra_tools: Sequence[ToolBase] = (),
    docs_cache: Path | None = None, max_project_bytes: int | None = None,
) -> WriterHandle:
    """``home``: the AgentScope workspace's own directory (MCP config, skills index, offloaded context) — outside
    the project; by default a hidden sibling of it. ``sandbox``: the run's workspace kind (builds run inside it
    unless it is ``local``); ``commands``: the writer's command sessions in it (gives the writer Bash);
    ``extra_tools``: the run's own tools for the writer (``Explore``, `tier2.runs.loop.addons.companions`);
    ``docs_cache``: where the pack's engine-docs index is cached (the EngineDocs tool); ``max_project_bytes``: the
    most bytes the project's files may hold after a Write or an Edit."""
    home = home or project.parent / f".{project.name}.agent"
    workspace = project_workspace(project_id, project, home, pack.agent_skill_dirs)
    await finish_before_cancel(workspace.initialize())  # AgentScope reads and copies the skills in threads
    tool_ctx = GameToolContext(project=project, pack=pack, runner=runner, reports_dir=reports_dir,
                               build_timeout_s=policy.timeouts.build_s,
                               results=results if results is not None else ToolResults(),
                               launcher=sandbox.launcher if sandbox is not None and sandbox.kind != "local" else None)
    limits = FileLimits(max_file_bytes=write_limit, **({"max_project_bytes": max_project_bytes}
                                                       if max_project_bytes is not None else {}))
    file_tools = make_rw_tools(project, limits)
    command_tools = make_command_tools(commands) if commands is not None else []
    docs_tools = make_docs_tools(pack, docs_cache) if policy.engine_docs.tool else []  # EngineDocs
    asset_tools = make_asset_tools(project, image_route(policy))  # RequestAsset (the asset pool)
    task_tools: list[ToolBase] = [TaskList(), TaskUpdate()]  # the writer's tasks, seeded from the plan per run
    toolkit = Toolkit(tools=file_tools + make_file_tools(project) + make_game_tools(tool_ctx) + asset_tools
                      + command_tools + docs_tools + task_tools + list(extra_tools),
                      skills_or_loaders=await finish_before_cancel(workspace.list_skills()))
    system_prompt = render_prompt(
        "writer", pack=pack.ref, engine=pack.manifest.engine.title, engine_version=pack.manifest.engine.version,
        contract_skill=pack.manifest.texts.contract_skill,
        behaviours=", ".join(pack.behaviours) or "(see the pack skills)",
    )
    agent = Agent(
        name="writer", system_prompt=system_prompt, model=model, toolkit=toolkit,
        middlewares=build_middlewares(str(project.resolve()), cancelled or (lambda: False),
                                      _with_quiesce(layers, commands), write_limit),
        state=_state(state_json, project, bash=commands is not None),
        offloader=workspace, react_config=ReActConfig(max_iters=policy.writer.max_iters),
        model_config=ModelConfig(fallback_model=fallback_model),  # the route's fallback (AgentScope's retry loop)
    )
    return WriterHandle(agent=agent, workspace=workspace, tools=tool_ctx)
