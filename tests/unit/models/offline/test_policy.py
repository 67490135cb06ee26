"""The offline policy as a pure function: conversation in, next action out."""

from __future__ import annotations

import json
from pathlib import Path

from agentscope.message import Msg, TextBlock, ToolCallBlock, ToolResultBlock

from tier2.models.offline.history import read_conversation
from tier2.models.offline.policy import MAX_REPAIRS, decide
from tier2.packs import load_pack
from tier2.runs.loop.phases.implement import PhaseInput, run_request

ROOT = "/w/game"
PACK = load_pack(Path(__file__).resolve().parents[4] / "capability_packs", "phaser")
FILES = ["src/main.js", "src/scenes/Play.js", "data/economy.json", "data/items.json"]


class Convo:
    def __init__(self, brief: str = "a potion shop tycoon where I brew potions from herbs") -> None:
        system = f"You are the writer.\nYou work inside ONE game project at {ROOT} (the project directory)."
        self.msgs = [Msg(name="system", role="system", content=[TextBlock(text=system)]),
                     Msg(name="user", role="user", content=[TextBlock(text=run_request(
                         PACK, PhaseInput(brief=brief, project=Path(ROOT))))])]
        self.n = 0

    def act(self, params: dict | None = None):
        return decide(read_conversation(self.msgs), params or {})

    def result(self, name: str, args: dict, output: str, state: str = "success") -> None:
        self.n += 1
        cid = f"c{self.n}"
        self.msgs.append(Msg(name="writer", role="assistant", content=[
            ToolCallBlock(id=cid, name=name, input=json.dumps(args)),
            ToolResultBlock(id=cid, name=name, output=[TextBlock(text=output)], state=state)]))

    def run_calls(self, action, outputs: dict[str, tuple[str, str]] | None = None) -> None:
        for name, args in action.calls:
            out, state = (outputs or {}).get(name, ("ok", "success"))
            if name == "Glob":
                out = "\n".join(f"{ROOT}/{f}" for f in FILES if f.endswith(args["pattern"][-3:]))
            if name == "Read":
                rel = args["file_path"][len(ROOT) + 1:]
                out = "\n".join(f"{i + 1:6d}\tline {i} of {rel}" for i in range(3))
            self.result(name, args, out, state)


def test_happy_path_glob_read_write_build_run_done() -> None:
    c = Convo()
    a = c.act()
    assert [n for n, _ in a.calls] == ["Glob", "Glob"]
    c.run_calls(a)
    a = c.act()
    assert {args["file_path"] for _, args in a.calls} == {f"{ROOT}/{f}" for f in FILES}
    c.run_calls(a)
    a = c.act()
    writes = {args["file_path"]: args["content"] for _, args in a.calls}
    assert set(writes) == {f"{ROOT}/{f}" for f in FILES}
    economy = json.loads(writes[f"{ROOT}/data/economy.json"])
    assert economy["start_money"] > 0
    assert "line 1 of src/main.js" in writes[f"{ROOT}/src/main.js"]  # code comes from what it read
    c.run_calls(a)
    assert c.act().calls == [("Build", {})]
    c.run_calls(c.act())
    assert c.act().calls == [("RunGame", {})]
    c.run_calls(c.act())
    final = c.act()
    assert final.kind == "final" and final.text.startswith("DONE:")


def _to_build(c: Convo, params: dict) -> None:
    for _ in range(3):
        c.run_calls(c.act(params))


def test_syntax_fault_is_repaired_after_the_build_error() -> None:
    c, params = Convo(), {"faults": ["syntax_error"]}
    _to_build(c, params)
    written = [b.input for m in c.msgs for b in m.get_content_blocks() if isinstance(b, ToolCallBlock)]
    assert any("Play.js" in w and "brokenByFault" in w for w in written)
    assert c.act(params).calls == [("Build", {})]
    c.result("Build", {}, "BUILD FAILED (1 error(s)):\n- src/scenes/Play.js:9:30: Expected \")\"", "error")
    a = c.act(params)
    assert a.calls == [("Read", {"file_path": f"{ROOT}/src/scenes/Play.js"})]
    c.run_calls(a)
    a = c.act(params)
    (name, args), = a.calls
    assert name == "Write" and "brokenByFault" not in args["content"]
    c.run_calls(a)
    assert c.act(params).calls == [("Build", {})]


def test_missing_data_key_fault_is_repaired_after_the_run_error() -> None:
    c, params = Convo(), {"faults": ["missing_data_key"]}
    _to_build(c, params)
    writes = [b for m in c.msgs for b in m.get_content_blocks() if isinstance(b, ToolCallBlock) and b.name == "Write"]
    economy = next(json.loads(json.loads(b.input)["content"]) for b in writes if "economy" in b.input)
    assert "start_money" not in economy
    c.run_calls(c.act(params))  # Build ok
    c.result("RunGame", {}, "GAME FAILED\n- FAIL l1.boots\n    pageerror: Error: tier2 data error: economy.json: "
             "missing key start_money", "error")
    a = c.act(params)
    assert a.calls == [("Read", {"file_path": f"{ROOT}/data/economy.json"})]
    c.run_calls(a)
    (name, args), = c.act(params).calls
    assert name == "Write" and json.loads(args["content"])["start_money"] > 0


def test_unknown_failure_stops_with_a_reason() -> None:
    c = Convo()
    _to_build(c, {})
    c.run_calls(c.act())
    c.result("RunGame", {}, "GAME FAILED\n- FAIL l1.canvas_not_blank: 2 of 2 screenshots blank", "error")
    final = c.act()
    assert final.kind == "final" and final.text.startswith("STOP:") and "canvas_not_blank" in final.text


def test_repairs_are_bounded() -> None:
    c = Convo()
    _to_build(c, {})
    for _ in range(MAX_REPAIRS + 1):
        c.result("Build", {}, "BUILD FAILED\n- src/main.js:1:1: Unexpected token", "error")
        a = c.act()
        if a.kind == "final":
            break
        c.run_calls(a)  # Read
        c.run_calls(c.act())  # Write
    assert a.kind == "final" and "after 2 repairs" in a.text


def test_different_briefs_write_different_tables() -> None:
    outs = []
    for brief in ("a potion shop tycoon where I brew potions from herbs", "a cozy bakery tycoon: bake bread"):
        c = Convo(brief)
        c.run_calls(c.act())
        c.run_calls(c.act())
        outs.append({args["file_path"]: args["content"] for _, args in c.act().calls})
    assert outs[0][f"{ROOT}/data/items.json"] != outs[1][f"{ROOT}/data/items.json"]


def test_no_project_in_prompt_stops() -> None:
    msgs = [Msg(name="user", role="user", content=[TextBlock(text="<brief>x game</brief>")])]
    assert decide(read_conversation(msgs), {}).text.startswith("STOP:")


def test_a_follow_up_brief_starts_a_fresh_plan_with_the_new_brief() -> None:
    c = Convo()
    for _ in range(5):
        c.run_calls(c.act())
    assert c.act().kind == "final"
    c.msgs.append(Msg(name="user", role="user", content=[TextBlock(text="<brief>\nkeep it, make it snowy\n</brief>")]))
    conv = read_conversation(c.msgs)
    assert conv.brief == "keep it, make it snowy" and conv.steps == []
    assert [n for n, _ in c.act().calls] == ["Glob", "Glob"]


def test_a_write_batch_cut_short_by_a_crash_is_completed_before_building() -> None:
    """A resumed attempt sees only the writes that finished before the crash: it writes the rest, same content."""
    c, whole = Convo(), Convo()
    for convo in (c, whole):
        convo.run_calls(convo.act())          # Glob
        convo.run_calls(convo.act())          # Read
    batch = whole.act()
    c.run_calls(type(batch)("tools", batch.calls[:2]))   # only two writes ran before the crash
    rest = c.act()
    assert rest.calls == batch.calls[2:]
    c.run_calls(rest)
    assert c.act().calls == [("Build", {})]


def test_with_repairs_off_the_policy_stops_instead_of_repairing() -> None:
    """``repairs: false`` (route offline-faulty-norepair): the policy's own repairs are off — only the case library
    (which fixes a known fault before the policy reads it) can make the run pass."""
    c, params = Convo(), {"faults": ["syntax_error"], "repairs": False}
    _to_build(c, params)
    assert c.act(params).calls == [("Build", {})]
    c.result("Build", {}, "BUILD FAILED (1 error(s)):\n- src/scenes/Play.js:9:30: Expected \")\"", "error")
    final = c.act(params)
    assert final.kind == "final" and final.text.startswith("STOP:") and "repairs are off" in final.text
    c, params = Convo(), {"faults": ["syntax_error"], "repairs": False}
    _to_build(c, params)
    c.run_calls(c.act(params))  # the library fixed it before the policy read the result: BUILD OK
    assert c.act(params).calls == [("RunGame", {})]
