"""The context layer's parts: the block-level cut, the coverage record folded forward across a resume, tool-output
truncation with its artifact, policy validation, and its place in the onion (budget and breakers see it)."""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from agentscope.agent import Agent, ReActConfig
from agentscope.message import AssistantMsg, Msg, TextBlock, ToolCallBlock, ToolResultBlock, UserMsg
from agentscope.middleware import MiddlewareBase
from agentscope.permission import PermissionBehavior, PermissionContext, PermissionDecision
from agentscope.state import AgentState
from agentscope.tool import ToolBase, ToolChunk, Toolkit

from tier2.context import ContextMiddleware, Pins, context_record
from tier2.context.split import choose_cut, flatten, rebuild
from tier2.context.truncate import ARTIFACT_DIR, truncate_output, truncate_read
from tier2.errors import RunLimitReached, SetupError
from tier2.middleware import RunLayers, build_middlewares
from tier2.middleware.breakers import BreakersMiddleware
from tier2.middleware.cancel import CancelMiddleware
from tier2.middleware.path_guard import PathGuardMiddleware
from tier2.models.offline import OfflineCredential
from tier2.settings.context import AgentContextPolicy, ContextPolicy
from tier2.settings.loader import REPO_ROOT, PolicyStore, load_policy
from tier2.store.checkpoints import block_ref
from tier2.testing import ScriptedChatModel

POLICY = AgentContextPolicy(budget_tokens=2_000, trigger_ratio=0.75, keep_recent_ratio=0.25, summary_ratio=0.3,
                            tool_output_chars=600, read_output_chars=1_000)


def _turn(tag: str, steps: int, size: int = 1_000) -> Msg:
    """One assistant reply as AgentScope stores it: text, tool_call, tool_result blocks, all in one message."""
    blocks: list[Any] = []
    for i in range(steps):
        cid = f"{tag}-{i}"
        blocks += [TextBlock(text=f"{tag} step {i}: I will write file {i}."),
                   ToolCallBlock(id=cid, name="Write", input=json.dumps({"file_path": f"/p/{tag}-{i}.js",
                                                                          "content": "x" * size})),
                   ToolResultBlock(id=cid, name="Write", output=[TextBlock(text=f"wrote {tag}-{i}")],
                                   state="success")]
    return AssistantMsg(name="writer", content=blocks)


async def _tokens(u: Any) -> int:
    return len(json.dumps(u.value.model_dump(mode="json"))) // 4


async def test_the_cut_falls_inside_a_reply_and_never_between_a_call_and_its_result() -> None:
    calls = [ToolCallBlock(id=f"k{i}", name="Grep", input="{}") for i in range(3)]
    results = [ToolResultBlock(id=f"k{i}", name="Grep", output="r" * 300, state="success") for i in range(3)]
    context = [UserMsg("user", "go"), AssistantMsg(name="w", content=[TextBlock(text="a"), *calls, *results,
                                                                      TextBlock(text="tail")])]
    units = flatten(context)
    for keep in range(0, 2_000, 37):
        cut = await choose_cut(units, keep, _tokens)
        if cut is None:
            continue
        covered = {getattr(u.value, "id", None) for u in units[:cut.position]}
        kept = {getattr(u.value, "id", None) for u in units[cut.position:]}
        assert not {f"k{i}" for i in range(3)} & covered & kept  # a call and its result stay on one side
    cut = await choose_cut(units, 50, _tokens)
    assert cut is not None and [type(u.value).__name__ for u in units[cut.position:]] == ["TextBlock"]
    kept = rebuild(context, units, cut.position)
    assert kept[0].id == context[1].id and kept[0].name == "w"  # the cut reply keeps its id (AgentScope appends)


def _agent(model: ScriptedChatModel, middlewares: list[MiddlewareBase], state: AgentState | None = None) -> Agent:
    return Agent(name="writer", system_prompt="You write.", model=model, toolkit=Toolkit(tools=[_Note()]),
                 middlewares=middlewares,
                 state=state, react_config=ReActConfig(max_iters=50))


async def test_the_record_names_the_last_covered_block_and_a_resume_never_resummarises(tmp_path: Path) -> None:
    model = ScriptedChatModel([], model="scripted-ctx")
    layer = ContextMiddleware(POLICY, role="writer", project_root=tmp_path,
                              pins=lambda: Pins(goal="brew potions", requirements={"req.a": "verified"}))
    agent = _agent(model, [layer])
    agent.state.context = [UserMsg("user", "<brief>brew potions</brief>"), _turn("t1", 6)]
    original = list(agent.state.context)
    flat = flatten(original)
    await agent.compress_context()
    record = context_record(agent.state)
    assert record["seq"] == 1 and model.compressions == 0  # extractive: no model call
    n = record["facts"]["blocks"]
    last = flat[n - 1]
    assert (record["covered"]["msg_id"], record["covered"]["block"]) == (original[last.msg].id, last.block)
    assert record["covered"]["ref"] == block_ref(last.value.model_dump(mode="json"))
    remaining = flatten(agent.state.context)
    assert [u.value for u in remaining] == [u.value for u in flat[n:]]  # summary + exactly the later blocks
    summary = str(agent.state.summary)
    assert "Goal: brew potions" in summary and "- req.a: verified" in summary
    assert "Files written:" in summary and summary.count("t1-0.js") >= 1

    # a resumed agent (state from JSON, as a checkpoint gives it) compresses again: only new blocks are folded
    resumed = _agent(ScriptedChatModel([], model="scripted-ctx"), [ContextMiddleware(
        POLICY, role="writer", project_root=tmp_path)], AgentState.model_validate_json(agent.state.model_dump_json()))
    resumed.state.context.append(UserMsg("user", "round 2"))
    resumed.state.context.append(_turn("t2", 6))
    before = len(flatten(resumed.state.context))
    await resumed.compress_context()
    again = context_record(resumed.state)
    assert again["seq"] == 2
    newly = again["facts"]["blocks"] - n
    assert 0 < newly <= before and newly == before - len(flatten(resumed.state.context))
    steps = again["facts"]["steps"]
    assert len(steps) == len(set(steps))  # no step was summarised twice
    assert steps[:len(record["facts"]["steps"])] == record["facts"]["steps"]  # folded forward, not rebuilt
    assert sum("t1-" in s for s in steps) == 6 and sum("t2-" in s for s in steps) >= 1
    assert "Goal: brew potions" in str(resumed.state.summary)  # the goal survived the resume (kept in the record)
    # the task as it was given stays verbatim through every compression (the first covered request, kept in the
    # record: the second compression covered no request and still has it)
    task = str(resumed.state.summary).split("## The task, as it was given (verbatim)\n", 1)[1]
    assert task.startswith("<brief>brew potions</brief>")


async def test_the_runs_own_task_text_is_pinned_verbatim(tmp_path: Path) -> None:
    request = ("<brief>\nbrew potions\n</brief>\nBuild the game in the project. pack (phaser@1.0.0)\n"
               "genre template: shop")
    layer = ContextMiddleware(POLICY, role="writer", project_root=tmp_path,
                              pins=lambda: Pins(goal="brew potions", task=request))
    agent = _agent(ScriptedChatModel([], model="scripted-ctx"), [layer])
    agent.state.context = [UserMsg("user", "a later note"), _turn("t1", 6)]
    await agent.compress_context()
    assert "## The task, as it was given (verbatim)\n" + request + "\n" in str(agent.state.summary)


def test_a_long_output_is_cut_with_a_marker_and_the_artifact_holds_all_of_it(tmp_path: Path) -> None:
    text = "".join(f"line {i}: error in module {i}\n" for i in range(500))
    cut = truncate_output([TextBlock(text=text)], 600, tmp_path, "Build")
    body = cut.content[0].text
    assert len(body) < 600 + 400 and "Build output truncated" in body and body.startswith("line 0")
    assert body.rstrip().endswith("line 499: error in module 499")  # the tail (where notes and summaries are) stays
    assert cut.artifact is not None and cut.artifact.read_text() == text and str(cut.artifact) in body
    assert cut.artifact.parent == (tmp_path / ARTIFACT_DIR).resolve()
    assert re.fullmatch(r"[0-9a-f]{24}\.txt", cut.artifact.name)  # named by content: no model text in the path
    assert truncate_output([TextBlock(text="short")], 600, tmp_path, "Build").changed is False


def test_an_artifact_dir_leaving_the_project_is_refused(tmp_path: Path) -> None:
    project, outside = tmp_path / "p", tmp_path / "elsewhere"
    project.mkdir()
    outside.mkdir()
    (project / ".tier2").symlink_to(outside)
    with pytest.raises(ValueError, match="outside the project"):
        truncate_output("y" * 5000, 600, project, "Grep")
    assert not list(outside.rglob("*.txt"))


def test_a_read_is_cut_at_a_line_with_a_note_after_it_never_inside() -> None:
    text = "".join(f"{i:>6}\tconst value{i} = {i};\n" for i in range(1, 400))
    cut = truncate_read([TextBlock(text=text)], 1_000)
    head, note = cut.content[0].text, cut.content[1].text
    assert text.startswith(head) and head.endswith("\n")  # verbatim whole lines: safe to copy into an edit
    shown = head.count("\n")
    assert f"offset={shown + 1}" in note and "Read the same file again" in note


def test_the_policy_refuses_a_context_that_cannot_shrink(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="must be below trigger_ratio"):
        AgentContextPolicy(trigger_ratio=0.5, keep_recent_ratio=0.3, summary_ratio=0.2)
    with pytest.raises(ValueError, match="less than 1"):
        AgentContextPolicy(trigger_ratio=1.0)
    with pytest.raises(ValueError, match="must fit the verbatim tail"):
        AgentContextPolicy(budget_tokens=10_000, keep_recent_ratio=0.2, read_output_chars=9_000)
    with pytest.raises(ValueError, match="unknown role 'critic'"):
        ContextPolicy(agents={"critic": AgentContextPolicy()})
    assert ContextPolicy(agents={"designer": POLICY}).for_agent("designer.economy") == POLICY
    cfg = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", cfg)
    (cfg / "policy" / "zz-test.yaml").write_text("context:\n  agents:\n    writer: {trigger_ratio: 0.3}\n")
    with pytest.raises(SetupError, match="trigger_ratio"):
        load_policy(cfg)
    repo = PolicyStore(REPO_ROOT / "config").snapshot().context
    assert repo.enabled and repo.for_agent("writer").budget_tokens > repo.for_agent("l3_scorer").budget_tokens


def test_the_onion_puts_context_inside_checkpoint_and_outside_learning() -> None:
    marks = {name: type(name, (MiddlewareBase,), {})() for name in
             ("tracing", "budget", "breakers", "checkpoint", "context", "learning", "operations")}
    onion = build_middlewares("/tmp/x", layers=RunLayers(**{k: [v] for k, v in marks.items()}))
    names = [type(m).__name__ for m in onion]
    assert names == ["tracing", "CancelMiddleware", "budget", "breakers", "checkpoint", "context", "learning",
                     "PathGuardMiddleware", "operations"]
    assert isinstance(onion[1], CancelMiddleware) and isinstance(onion[7], PathGuardMiddleware)


class _Note(ToolBase):
    """Takes a note: always succeeds, its result names the note (every step is new: no repeat pattern)."""

    name = "Note"
    description = "Takes a note."
    input_schema: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    is_concurrency_safe = True
    is_read_only = True

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> Any:
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, message="test tool")

    async def call(self, n: int = 0, **_: Any) -> ToolChunk:
        return ToolChunk(content=[TextBlock(text=f"noted {n}")], state="success")


class _Chatty(ScriptedChatModel):
    """Calls a no-op tool with a long text forever (its context grows every step)."""

    def __init__(self, context_size: int = 10_000_000) -> None:
        super().__init__(self.talk, model="scripted-chatty", context_size=context_size,
                         credential=OfflineCredential(name="t"))

    def talk(self, messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        if len(self.calls) >= 40:
            return [TextBlock(text="done")]
        return [TextBlock(text=f"thinking {len(self.calls)} " + "words " * 150),
                ToolCallBlock(id=f"c{uuid.uuid4().hex[:8]}", name="Note", input=json.dumps({"n": len(self.calls)}))]


async def test_the_stuck_breaker_counts_the_layers_compressions() -> None:
    tight = POLICY.model_copy(update={"budget_tokens": 2_000})
    base = PolicyStore(REPO_ROOT / "config").snapshot().breakers
    agent = _agent(_Chatty(), [BreakersMiddleware("r-s", base.model_copy(update={"steps_per_turn": 100,
                                                                               "steps_per_run": 100})),
                               ContextMiddleware(tight, role="writer")])
    with pytest.raises(RunLimitReached) as exc:  # each step refills the context past the trigger: a loop
        await agent.reply(UserMsg("user", "talk"))
    assert exc.value.limit == "stuck" and exc.value.detail.startswith("context compressed 3x")


async def test_the_budget_never_exceeds_the_models_own_window() -> None:
    context = [UserMsg("user", "go"), _turn("w", 3)]  # ~900 tokens: under this policy's trigger (1,500)
    roomy = _agent(ScriptedChatModel([], model="scripted-ctx"), [ContextMiddleware(POLICY, role="writer")])
    roomy.state.context = list(context)
    await roomy.compress_context()
    assert "seq" not in context_record(roomy.state)
    small = ScriptedChatModel([], model="scripted-ctx", context_size=1_000)  # its window: trigger at 750
    layer = ContextMiddleware(POLICY, role="writer")
    narrow = _agent(small, [layer])
    narrow.state.context = list(context)
    await narrow.compress_context()
    assert layer.budget(narrow) == 1_000 and context_record(narrow.state)["seq"] == 1
    assert await layer.estimate(narrow) < 750


async def test_a_compression_is_a_checkpoint_of_its_own() -> None:
    """The checkpoint layer (outside the context layer) saves right after a step whose compression changed the
    summary, before the model call; a step without a compression writes nothing."""
    from types import SimpleNamespace

    from agentscope.state import AgentState

    from tier2.middleware.checkpoint import CheckpointMiddleware

    saved: list[tuple[str, str]] = []

    class Store:
        async def save(self, state: dict, meta: dict, fence: object) -> None:  # type: ignore[type-arg]
            saved.append((meta["stage"], state["summary"]))

    agent = SimpleNamespace(name="writer", state=AgentState())
    layer = CheckpointMiddleware(Store(), None, lambda: {"round": 0})  # type: ignore[arg-type]

    async def compress(**_: object) -> None:
        agent.state.summary = "goal: … covered through m1#4"

    async def nothing(**_: object) -> None:
        return None

    await layer.on_compress_context(agent, {}, nothing)
    assert saved == []
    await layer.on_compress_context(agent, {}, compress)
    assert saved == [("turn", "goal: … covered through m1#4")]
