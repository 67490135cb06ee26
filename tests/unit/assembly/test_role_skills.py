"""Every agent role is offered the same skills — the core ones (``skills/``), then the pack's — and can open them.

Each role's agent is built by its real assembler (writer, designer, explorer, reviewer) on a real project; only
the model is scripted. It sees the skill list in its system prompt and the ``Skill`` tool among its tools, opens a
core skill and a pack skill, and a read-only role's guard lets ``Skill`` through while a path given as a skill
name reads nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentscope.agent import Agent
from agentscope.message import Msg, TextBlock, ToolCallBlock, UserMsg

from tier2.assembly import build_writer
from tier2.assembly.companions import CompanionRole, build_companion, companion_tools
from tier2.assembly.team import build_design_agent, read_only_tools
from tier2.browser import BrowserPool
from tier2.packs import Pack
from tier2.settings.loader import REPO_ROOT, PolicyStore
from tier2.testing import ScriptedChatModel, tool_results
from tier2.validators import ValidationRunner
from tier2.workspace import new_project

CORE = ["tier2-delivery", "tier2-gate-verdicts", "tier2-run", "tier2-tools"]
#: (skill name the model asks for, a line its answer must hold) — a core skill, a pack skill, a path
CALLS = [("tier2-gate-verdicts", "# Reading gate verdicts"), ("phaser-game-contract", "# Phaser game contract"),
         ("../../../../../../etc/passwd", "SkillNotFoundError")]


def _model() -> ScriptedChatModel:
    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)
        if done < len(CALLS):
            return [ToolCallBlock(id=f"s{done}", name="Skill", input=json.dumps({"skill": CALLS[done][0]}))]
        return [TextBlock(text='{"role": "gameplay"}')]
    return ScriptedChatModel(script)


async def _check(agent: Agent, model: ScriptedChatModel, pack: Pack) -> None:
    await agent.reply(UserMsg("user", "look at your skills"))
    first = model.calls[0]
    assert "Skill" in {t["function"]["name"] if "function" in t else t.get("name") for t in first.tools or []}
    prompt = "\n".join(m.get_text_content() or "" for m in first.messages)
    for name in [*CORE, *pack.manifest.skills]:
        assert f"<name>{name}</name>" in prompt, (agent.name, name)
    results = {b.id: b for m in agent.state.context for b in m.get_content_blocks("tool_result")}
    for i, (_, expected) in enumerate(CALLS):
        block = results[f"s{i}"]
        text = "".join(getattr(x, "text", "") for x in block.output) if isinstance(block.output, list) \
            else str(block.output)
        assert expected in text, (agent.name, i, text[:300])
    assert "root:" not in text  # the path named as a skill read nothing


@pytest.fixture
def project(pack: Pack, tmp_path: Path) -> Path:
    return Path(new_project(pack, tmp_path / "game").path)


async def test_the_writer_gets_the_core_and_the_pack_skills(pack: Pack, project: Path, tmp_path: Path) -> None:
    policy = PolicyStore(REPO_ROOT / "config").snapshot()
    pool = BrowserPool("/nonexistent/chromium")  # lazily launched: these turns never build or play
    model = _model()
    handle = await build_writer(project_id="p-skills", project=project, pack=pack, policy=policy, model=model,
                                runner=ValidationRunner(pool, pack, policy), reports_dir=project / ".tier2" / "r",
                                home=tmp_path / "home")
    try:
        await _check(handle.agent, model, pack)
    finally:
        await handle.workspace.close()
        await pool.close()


@pytest.mark.parametrize("role", ["leader", "designer.gameplay"])
async def test_designers_get_the_core_and_the_pack_skills(pack: Pack, project: Path, role: str) -> None:
    model = _model()
    agent = build_design_agent(role=role, project=project, pack=pack, model=model, tools=read_only_tools(project))
    await _check(agent, model, pack)


@pytest.mark.parametrize("role", ["explorer", "reviewer"])
async def test_companions_get_the_core_and_the_pack_skills(pack: Pack, project: Path, role: CompanionRole) -> None:
    model = _model()
    agent = build_companion(role=role, project=project, pack=pack, model=model, max_iters=6,
                            tools=companion_tools(role, project, pack.adapter))
    await _check(agent, model, pack)
