"""The design studio: read-only designers against hostile scripted tool calls, the leader's mailbox race, the spec
schema, the plan's local invalidation, and the genre gate's judgement — real Redis and real files; only the model
is scripted."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from agentscope.message import Msg, TextBlock, ToolCallBlock, UserMsg

from tier2.assembly.team import build_design_agent, read_only_tools
from tier2.design import classify_brief, validate_spec
from tier2.design.spec import SPEC_SCHEMA, schema_file_text
from tier2.models.offline.follow_up import answer_follow_up
from tier2.packs import pack_by_ref
from tier2.plan import Plan
from tier2.store.team import TeamMailbox, agent_checkpoints
from tier2.testing import ScriptedChatModel, tool_results
from tier2.validators.l2 import completion_map, genre_gate
from tier2.validators.trace import InputProbe, PlayTrace
from tier2.workspace import new_project, project_workspace

pytestmark = [pytest.mark.redis]

SHOOTER = "a side-scrolling space shooter: dodge asteroids, shoot alien ships, collect power-ups, three lives"
ANSWER = json.dumps({"role": "gameplay", "summary": "s", "decisions": [], "requirements": [], "tables": {},
                     "notes": []})


async def test_a_hostile_designer_reads_but_never_writes_deletes_or_runs(tmp_path: Path, pack) -> None:
    project = tmp_path / "game"
    new_project(pack, project)
    before = sorted(str(p.relative_to(project)) for p in project.rglob("*"))
    canary = tmp_path / "outside.txt"
    canary.write_text("secret outside the project")
    p = str(project)
    calls = [
        ("Write", json.dumps({"file_path": f"{p}/src/evil.js", "content": "x"})),
        ("Edit", json.dumps({"file_path": f"{p}/src/main.js", "old_string": "Phaser", "new_string": "Evil"})),
        ("Bash", json.dumps({"command": f"echo $(touch {p}/pwned)"})),
        ("Bash", json.dumps({"command": f"find {p} -delete"})),
        ("Read", json.dumps({"file_path": str(canary)})),
        ("Read", json.dumps({"file_path": f"{p}/../outside.txt"})),
        ("Read", json.dumps({"file_path": "/etc/passwd"})),
        ("Glob", json.dumps({"pattern": "../*", "path": p})),
        ("Grep", json.dumps({"pattern": "secret", "path": str(tmp_path)})),
        ("Read", '{"file_path": "' + p + '/src/main.js"'),  # malformed JSON: AgentScope would repair it
        ("TeamCreate", json.dumps({"name": "t", "description": "d"})),
        ("Read", json.dumps({"file_path": f"{p}/src/main.js"})),  # the one legitimate call
        ("Glob", json.dumps({"pattern": "data/*.json", "path": p})),
    ]

    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)  # two batches: the attacks, then the legitimate reads
        batch = range(0, 11) if done == 0 else range(11, len(calls)) if done == 11 else range(0)
        if batch:
            return [ToolCallBlock(id=f"c{i}", name=calls[i][0], input=calls[i][1]) for i in batch]
        return [TextBlock(text=ANSWER)]

    ws = project_workspace("p-design", project, tmp_path / "home", pack.skill_dirs)
    await ws.initialize()
    try:
        tools = read_only_tools(project)
        assert sorted(t.name for t in tools) == ["Glob", "Grep", "Read"]
        agent = build_design_agent(role="designer.gameplay", project=project, pack=pack,
                                   model=ScriptedChatModel(script), tools=tools)
        final = await agent.reply(UserMsg("user", "<brief>x</brief>"))
    finally:
        await ws.close()
    assert json.loads(final.get_text_content())["role"] == "gameplay"
    results = [b for m in agent.state.context for b in m.get_content_blocks("tool_result")]
    states = {b.id: str(getattr(b.state, "value", b.state)) for b in results}
    texts = {b.id: "".join(x.text for x in b.output if isinstance(x, TextBlock)) if not isinstance(b.output, str)
             else b.output for b in results}
    for i in range(11):  # every hostile call refused
        assert states[f"c{i}"] in ("error", "denied"), (calls[i], states[f"c{i}"], texts[f"c{i}"])
        assert "secret outside" not in texts[f"c{i}"] and "root:" not in texts[f"c{i}"]
    assert states["c11"] == "success" and "Phaser" in texts["c11"]
    assert states["c12"] == "success" and "theme.json" in texts["c12"]
    after = sorted(str(p.relative_to(project)) for p in project.rglob("*"))
    assert after == before and not (project / "pwned").exists()  # nothing written, deleted or created
    assert canary.read_text() == "secret outside the project"


async def test_a_message_sent_while_the_leader_finishes_is_never_lost(runtime) -> None:
    """The lost wake-up (field guide §11.7), reproduced: a designer's message lands during the leader's final
    model call, after the leader read its inbox. AgentScope drops that wake; here closing the mailbox fails while
    it holds an unread message, so the leader converges again with it, and a post after close is refused."""
    store = runtime.store
    box = TeamMailbox(store.r, store.keys, "r-race", "leader")
    late = TeamMailbox(store.r, store.keys, "r-race", "leader")  # the designer's handle, another task
    assert await box.post("designer.level", "answer", {"n": 1})
    assert [m["body"] for m in await box.take()] == [{"n": 1}]
    seen: list[str] = []

    posted = asyncio.Event()

    async def leader_final_call() -> None:  # the message arrives while the leader is in its final model call
        await posted.wait()
        seen.append("leader answered")

    async def designer_posts() -> bool:
        try:
            return await late.post("designer.audio", "note", "also add a snow level")
        finally:
            posted.set()

    await asyncio.gather(leader_final_call(), designer_posts())
    pending = await box.close_if_drained()
    assert [m["body"] for m in pending] == ["also add a snow level"]  # handed back, not dropped
    assert not await box.closed()
    assert await box.close_if_drained() == [] and await box.closed()  # drained now: closes
    assert not await late.post("designer.vfx", "note", "too late")  # refused, visibly, once closed
    assert len(await box.all()) == 2


async def test_the_race_through_the_design_phase_reaches_the_spec(runtime, tmp_path: Path) -> None:
    """End to end in the phase: a scripted leader whose converge call triggers a late team message; the spec the
    leader finally answers was made with that message in its context."""
    from tests.integration.design_helpers import run_design

    outcome, leader_inputs = await run_design(runtime, tmp_path, late_note="please add a snowy level")
    converges = [t for t in leader_inputs if "Converge" in t]
    assert len(converges) == 2 and "please add a snowy level" in converges[-1]
    assert "please add a snowy level" not in converges[0]
    assert outcome.spec["genre"] == "shop"


async def test_designer_checkpoints_are_namespaced(runtime) -> None:
    store = runtime.store
    a = agent_checkpoints(store.r, store.keys, "r-ns", "designer.level")
    b = agent_checkpoints(store.r, store.keys, "r-ns", "designer.ui")
    await a.save({"context": [], "x": 1}, {"stage": "turn_done"}, None)
    assert (await a.latest())[2]["stage"] == "turn_done"
    assert await b.latest() is None


def test_the_spec_schema_rejects_bad_specs() -> None:
    assert json.loads(schema_file_text()) == SPEC_SCHEMA  # the shipped file is the schema the code checks
    good = {"spec_version": 1, "title": "T", "genre": "shop", "brief": "b",
            "scope": {"buildable": True, "unsupported": []},
            "requirements": [{"id": "R1", "text": "t", "source": "b", "role": "ui",
                              "predicate": {"kind": "scene_exists", "scene": "Menu"}}]}
    assert validate_spec(good) == []
    bad_kind = json.loads(json.dumps(good))
    bad_kind["requirements"][0]["predicate"] = {"kind": "looks_fun"}
    assert any("matches no predicate kind" in e for e in validate_spec(bad_kind))
    missing = {k: v for k, v in good.items() if k != "genre"}
    assert any("genre" in e for e in validate_spec(missing))
    dup = json.loads(json.dumps(good))
    dup["requirements"].append(dup["requirements"][0])
    assert any("duplicate ids R1" in e for e in validate_spec(dup))
    extra = {**good, "writer_note": "skip the gates"}
    assert validate_spec(extra)
    assert validate_spec([]) and validate_spec("{}")


def test_a_follow_up_invalidates_only_what_it_touches(pack) -> None:
    def roles(text: str) -> set[str]:
        answer = answer_follow_up(pack_by_ref(pack.ref), f"<brief>\na cozy bakery tycoon\n</brief>\n"
                                  f"<design-genre>shop</design-genre>\n<follow-up>\n{text}\n</follow-up>")
        return {r for c in answer["changes"] for r in c["roles"]}
    assert roles("same game, snowy theme") == {"assets", "vfx", "ui", "audio"}
    assert roles("continue") == set()
    plan = Plan(goals=["g"])
    plan.add("design.brief", "design")
    for r in ("gameplay", "economy", "assets"):
        plan.add(f"design.{r}", "design", ["design.brief"])
        plan.set(f"design.{r}", "verified")
    plan.add("design.spec", "design", ["design.gameplay", "design.economy", "design.assets"])
    plan.add("req.R1", "requirement", ["design.spec", "design.economy"])
    hit = plan.invalidate({"design.assets": "goal v2: snowy"})
    assert list(hit) == ["design.assets", "design.spec", "req.R1"]
    assert plan.nodes["design.gameplay"].status == "verified" and plan.nodes["design.economy"].status == "verified"


def test_the_genre_gate_names_the_mismatch(pack) -> None:
    assert classify_brief(SHOOTER, pack.genre_vocab()).genre == "shooter"
    assert classify_brief("a cozy bakery tycoon: bake bread and cakes", pack.genre_vocab()).genre == "shop"
    assert classify_brief("a racing game with karts and laps", pack.genre_vocab()).genre == "racing"
    shop_play = PlayTrace(booted=True, first_scene="Menu", inputs=[InputProbe(
        label="buy", key="Digit1", before={"money": 50, "scene": "Play"}, after={"money": 44, "scene": "Play"})])
    spec = {"genre": "shooter", "requirements": [], "scope": {}}
    gate = genre_gate(spec, SHOOTER, shop_play, pack)
    assert not gate.passed and "declares a shooter" in gate.summary and "is a shop" in gate.summary
    lying = genre_gate({"genre": "shop"}, SHOOTER, shop_play, pack)  # a design that substitutes the genre
    assert not lying.passed and "brief asks for a shooter" in lying.summary
    assert genre_gate({"genre": "shop"}, "a cozy bakery tycoon", shop_play, pack).passed
    done = completion_map({"requirements": [{"id": "R1", "text": "t", "source": "s", "predicate": {}}]}, None,
                          "stopped before the build")
    assert done["summary"] == "0 of 1 requirements verified"
    assert done["requirements"][0]["reason"] == "stopped before the build"
    assert os.environ.get("TIER2_TEST_NEVER_SET") is None


@pytest.mark.browser
async def test_a_follow_up_reuses_the_verified_design_it_does_not_touch(runtime, tmp_path: Path) -> None:
    """A follow-up in the same project ("same game, snowy theme") makes a new goal version and re-runs only the
    designers its words touch; the others' verified answers are reused (no model call for them)."""
    from tier2.runs import RunRequest, execute_run
    from tier2.store.trajectory import ModelCallRecord, TrajectoryStore

    brief = "a cozy bakery tycoon: bake bread and cakes, don't go broke"
    first = await execute_run(runtime, RunRequest(brief=brief, out_dir=tmp_path / "g"))
    assert first.status == "delivered", first.stop_reason
    assert first.delivery["design"]["goal_version"] == 1
    follow = await execute_run(runtime, RunRequest(brief="same game, but with a snowy winter theme",
                                                   existing_project=tmp_path / "g"))
    assert follow.status == "delivered", follow.stop_reason
    design = follow.delivery["design"]
    assert design["goal_version"] == 2
    rerun = {r.removeprefix("design.") for r in design["rerun"]}
    reused = {r.removeprefix("design.") for r in design["reused"]}
    assert rerun and reused and not rerun & reused
    assert {"economy", "level", "gameplay"} <= reused  # a theme change touches none of them
    calls = [c for c in await TrajectoryStore(runtime.store.r, runtime.store.keys).read(follow.run_id)
             if isinstance(c, ModelCallRecord) and c.agent.startswith("designer.")]
    assert {c.agent.removeprefix("designer.") for c in calls} == rerun  # reused designers made no call
    # (known gap, not asserted: the offline writer re-derives the theme from the follow-up's words, so the UI
    # designer's new title requirement can stay unverified; it is reported, never ticked)
    rows = follow.delivery["completion"]["requirements"]
    assert all(r["status"] == "verified" or r["reason"] for r in rows)
