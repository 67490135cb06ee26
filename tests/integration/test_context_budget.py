"""The context layer on the real writer (tools, permissions, onion) with real Redis checkpoints: a 300-step
scripted session stays under its budget before every model call and keeps its pinned items through every
compression; a crash past step 170, right after a compression that no checkpoint holds yet, resumes from the
latest checkpoint into the same context (the compression re-done identically)."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from agentscope.agent import Agent
from agentscope.message import Msg, TextBlock, ToolCallBlock, UserMsg

from tier2.assembly import build_writer
from tier2.context import ContextMiddleware, Pins, context_record
from tier2.events import ContextCompressed, Tier2Event
from tier2.middleware import RunLayers
from tier2.middleware.checkpoint import CheckpointMiddleware, restorable_state
from tier2.settings.context import AgentContextPolicy
from tier2.settings.loader import REPO_ROOT, PolicyStore
from tier2.store.checkpoints import CheckpointMeta, CheckpointStore
from tier2.store.keys import Keys
from tier2.testing import ScriptedChatModel
from tier2.testing.scripted import Blocks
from tier2.validators import ValidationRunner

pytestmark = pytest.mark.redis

POLICY = AgentContextPolicy(budget_tokens=24_000, trigger_ratio=0.75, keep_recent_ratio=0.25, summary_ratio=0.15,
                            tool_output_chars=3_000, read_output_chars=6_000)
STEPS, PER_TURN, CRASH_AT = 300, 20, 171
GOAL = "a potion shop tycoon: brew potions from herbs and sell them"
_STEP = re.compile(r"step-(\d{4})")
_SEQ = re.compile(r'<context-summary compression="(\d+)"')


class Recorded(CheckpointStore):
    """The real store, remembering the state it was asked to save last (what the live agent had)."""

    saved: dict[str, Any] | None = None

    async def save(self, state: dict[str, Any], meta: CheckpointMeta, fence: Any) -> int:
        self.saved = json.loads(json.dumps(state))
        return await super().save(state, meta, fence)


class Session:
    """The scripted writer's world: its pins (as a run would supply them) and what the script checked."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.pins = Pins(goal=GOAL, requirements={"req.brew": "unverified — brew potions",
                                                  "req.sell": "unverified — sell potions"})
        self.written: list[str] = []  # files the script had written, in order
        self.checked_summaries = 0
        self.crash = False
        #: the prompt of the call the crash interrupted, and the resumed writer's first prompt (taken at call time:
        #: AgentScope keeps appending to the reply's message object afterwards)
        self.crash_prompt: list[tuple[str, str]] | None = None
        self.resumed_prompt: list[tuple[str, str]] | None = None
        self.resuming = False
        self.last_seq = self.crashed_at = self.crash_seq = 0

    def provider(self) -> Pins:
        return Pins(goal=self.pins.goal, requirements=dict(self.pins.requirements),
                    last_failure=self.pins.last_failure)

    def script(self, model: ScriptedChatModel) -> Any:
        async def step(messages: list[Msg]) -> Blocks:
            tools = model.calls[-1].tools
            assert await model.count_tokens(messages, tools) <= POLICY.budget_tokens  # before every model call
            texts = [_all_text(m) for m in messages]
            summary = texts[1] if len(texts) > 1 and texts[1].startswith("<context-summary") else ""
            if summary:
                self._check_pins(summary)
            n = max((int(x) for t in texts for x in _STEP.findall(t)), default=0) + 1
            last = messages[-1]
            if self.resuming:
                self.resumed_prompt, self.resuming = _prompt(messages), False
            seq = int(m.group(1)) if (m := _SEQ.search(summary)) else 0
            fresh, self.last_seq = seq != self.last_seq, seq
            if self.crash and n >= CRASH_AT and fresh:  # right after a compression, before its checkpoint
                self.crash_prompt, self.crashed_at, self.crash_seq = _prompt(messages), n, seq
                raise ConnectionError("scripted crash: the worker died mid-session")
            if n > STEPS or (last.role == "assistant" and (n - 1) % PER_TURN == 0 and n > 1):
                return [TextBlock(text=f"Round done through step-{n - 1:04d}.")]
            return self._act(n)
        return step

    def _check_pins(self, summary: str) -> None:
        assert f"Goal: {GOAL}" in summary
        for rid, state in self.pins.requirements.items():
            assert f"- {rid}: {state}" in summary or rid in summary
        if self.pins.last_failure:
            assert self.pins.last_failure[:60] in summary or "Last failing gate:" in summary
        seq = int(_SEQ.search(summary).group(1))  # type: ignore[union-attr]
        if seq != getattr(self, "_seen_seq", 0):
            # a new compression: every file written before it is pinned
            self._seen_seq = seq
            line = next(ln for ln in summary.splitlines() if ln.startswith("Files written:"))
            for rel in self.written:
                assert rel in line, f"{rel} missing from the pinned files after compression {seq}"
            self.checked_summaries += 1

    def _act(self, n: int) -> Blocks:
        tag = f"step-{n:04d}"
        if n % 50 == 0:  # the run's view changes: a gate fails, a requirement is verified
            self.pins.last_failure = f"l1.boots: game did not boot at {tag} (evidence: console error at line {n})"
            self.pins.requirements["req.brew"] = f"verified — brew potions ({tag})"
        if n % 3 == 0:
            rel = f"notes/{tag}.md"
            self.written.append(rel)
            body = f"# {tag}\n" + "\n".join(f"- line {i} of {tag}: potion recipe notes" for i in range(60))
            call = _call(n, "Write", file_path=str(self.project / rel), content=body)
        elif n % 3 == 1:
            call = _call(n, "Grep", pattern="potion", path=str(self.project))
        else:
            call = _call(n, "Read", file_path=str(self.project / "notes" / "big.md"))
        return [TextBlock(text=f"Decision at {tag}: keep the recipe notes consistent."), call]


def _call(n: int, name: str, **args: Any) -> ToolCallBlock:
    return ToolCallBlock(id=f"c{n}-{name}", name=name, input=json.dumps(args))


def _all_text(msg: Msg) -> str:
    out = []
    for b in msg.get_content_blocks():
        if isinstance(b, TextBlock):
            out.append(b.text)
        elif isinstance(b, ToolCallBlock):
            out.append(b.input)
        elif getattr(b, "type", "") == "tool_result":
            out.append(b.output if isinstance(b.output, str) else "".join(getattr(x, "text", "") for x in b.output))
    return "\n".join(out)


def _prompt(messages: list[Msg]) -> list[tuple[str, str]]:
    """A prompt as the model sees it: role and blocks, minus the ids AgentScope makes fresh per call."""
    out = []
    for m in messages:
        blocks = [b.model_dump(mode="json") for b in m.get_content_blocks()]
        for b in blocks:
            if b.get("type") == "text":
                b.pop("id", None)
        out.append((m.role, json.dumps(blocks, sort_keys=True)))
    return out


async def _writer(project: Path, pack: Any, model: ScriptedChatModel, store: CheckpointStore, world: Session,
                  events: list[Tier2Event], state_json: str | None = None,
                  ) -> tuple[Agent, ContextMiddleware, CheckpointMiddleware]:
    base = PolicyStore(REPO_ROOT / "config").snapshot()

    async def emit(event: Tier2Event) -> None:
        events.append(event)

    context = ContextMiddleware(POLICY, role="writer", run_id="r-ctx", project_root=project, pins=world.provider,
                                emit=emit)
    checkpoint = CheckpointMiddleware(store, None, lambda: {"round": 0})
    layers = RunLayers(checkpoint=[checkpoint], context=[context])
    handle = await build_writer(project_id="g", project=project, pack=pack, policy=base, model=model,
                                runner=ValidationRunner(None, pack, base),  # type: ignore[arg-type] - no RunGame
                                reports_dir=project / ".tier2" / "reports", state_json=state_json, layers=layers)
    return handle.agent, context, checkpoint


async def _run(agent: Agent, first_turn: int = 0, resume: bool = False) -> None:
    if resume:
        await agent.reply(None)  # continue the interrupted turn, as a resumed worker does
    for k in range(first_turn, STEPS // PER_TURN + 1):
        await agent.reply(UserMsg("user", f"Round {k}: carry on with the recipe notes."))


@pytest.fixture
async def client(redis_url: str):
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield r
    await r.aclose()


def _project(template_copy: Path) -> Path:
    notes = template_copy / "notes"
    notes.mkdir()
    (notes / "big.md").write_text("".join(f"potion {i}: brew from herbs, sell to adventurers\n" for i in range(400)))
    return template_copy


async def test_a_300_step_session_stays_under_budget_and_keeps_its_pins(template_copy: Path, pack: Any,
                                                                        client: Any) -> None:
    project = _project(template_copy)
    world, events = Session(project), []
    store = CheckpointStore(client, Keys(prefix=f"t-{uuid.uuid4().hex[:8]}"), "r-ctx")
    model = ScriptedChatModel(lambda m: step(m), model="scripted-writer")  # noqa: PLW0108 - bound below
    step = world.script(model)
    agent, context, _ = await _writer(project, pack, model, store, world, events)
    await _run(agent)
    compressions = [e for e in events if isinstance(e, ContextCompressed)]
    assert len(model.calls) > STEPS and model.compressions == 0  # AgentScope's own (model) compression never ran
    assert len(compressions) >= 5 and world.checked_summaries == len(compressions)
    assert all(e.tokens_after < POLICY.trigger_tokens <= e.tokens_before for e in compressions)
    record = context_record(agent.state)
    assert record["max_prompt_tokens"] <= POLICY.budget_tokens and record["seq"] == len(compressions)
    assert [e.covered_blocks for e in compressions] == sorted({e.covered_blocks for e in compressions})
    # the last compression's record names the block its coverage ends with; the kept context starts after it
    assert record["covered"]["msg_id"] + "#" + str(record["covered"]["block"]) == compressions[-1].covered_through
    # Grep outputs were cut with a marker naming the full output's artifact; Reads were cut at a line, unmarked
    results = [b for m in agent.state.context for b in m.get_content_blocks()
               if getattr(b, "type", "") == "tool_result"]
    grep = next(b for b in reversed(results) if b.name == "Grep")
    text = _all_text(Msg(name="x", role="assistant", content=[grep]))
    artifact = Path(re.search(r"saved in (\S+\.txt)", text).group(1))  # type: ignore[union-attr]
    assert artifact.is_relative_to(project / ".tier2" / "artifacts") and len(artifact.read_text()) > len(text)
    read = next(b for b in reversed(results) if b.name == "Read")
    assert "Read the same file again with offset=" in _all_text(Msg(name="x", role="assistant", content=[read]))


async def test_a_crash_mid_session_resumes_into_the_same_context(template_copy: Path, pack: Any,
                                                                 client: Any) -> None:
    project = _project(template_copy)
    world, events = Session(project), []
    world.crash = True
    store = Recorded(client, Keys(prefix=f"t-{uuid.uuid4().hex[:8]}"), "r-ctx")
    model = ScriptedChatModel(lambda m: step(m), model="scripted-writer")  # noqa: PLW0108
    step = world.script(model)
    agent, _, checkpoint = await _writer(project, pack, model, store, world, events)
    with pytest.raises(ConnectionError):
        await _run(agent)
    model.acknowledge()
    if checkpoint._last is not None:  # noqa: SLF001 - the write in flight at the crash lands (a crash after it)
        await checkpoint._last  # noqa: SLF001
    assert any(isinstance(e, ContextCompressed) for e in events)
    latest = await CheckpointStore(client, store.keys, "r-ctx").latest()
    assert latest is not None and store.saved is not None
    restored = json.loads(restorable_state(latest[1]))
    live = store.saved  # the state the live agent had at its last checkpoint
    assert restored["summary"] == live["summary"] and restored["context"] == live["context"]
    assert context_record(restored) == context_record(live) and context_record(restored)["seq"] >= 1
    # the crash came right after a compression, at the model call: the compression's own checkpoint holds it (its
    # record names the last covered message), so the resumed agent starts from the compressed context
    assert world.crash_seq == context_record(restored)["seq"]
    assert restored["summary"] and context_record(restored)["covered"]["msg_id"]

    # a resumed worker: a new writer from the checkpoint; its first prompt is the one the crashed call carried
    world.crash, world.resuming = False, True
    resumed_model = ScriptedChatModel(lambda m: resumed_step(m), model="scripted-writer")  # noqa: PLW0108
    resumed_step = world.script(resumed_model)
    agent2, _, _ = await _writer(project, pack, resumed_model, CheckpointStore(client, store.keys, "r-ctx"), world,
                              events, state_json=restorable_state(latest[1]))
    covered_before = context_record(agent2.state)["facts"]["blocks"]
    await _run(agent2, first_turn=(world.crashed_at - 1) // PER_TURN + 1, resume=True)
    assert world.resumed_prompt == world.crash_prompt and world.crash_prompt is not None
    record = context_record(agent2.state)
    assert record["seq"] > context_record(restored)["seq"] and record["max_prompt_tokens"] <= POLICY.budget_tokens
    # folded forward: later compressions added only newly covered blocks to the restored record's count
    later = [e for e in events if isinstance(e, ContextCompressed) and e.seq > context_record(restored)["seq"]]
    assert later and later[0].covered_blocks > covered_before
    assert max(int(x) for x in _STEP.findall(_all_text(agent2.state.context[-1]))) == STEPS

