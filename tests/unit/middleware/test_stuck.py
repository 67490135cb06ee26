"""Stuck patterns, each with the near-miss that must count as progress."""

from __future__ import annotations

import json

from tier2.middleware.stuck import MAX_RECORDS, StuckDetector, args_key
from tier2.settings.loader import REPO_ROOT, PolicyStore, StuckPolicy

POLICY = StuckPolicy(volatile=[r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b", r"check-\d+"])


def det(**overrides: object) -> StuckDetector:
    return StuckDetector(POLICY.model_copy(update=overrides))


def step(d: StuckDetector, tool: str, args: dict, result: str, error: bool = False) -> None:
    """One ReAct step: the model asks for one tool, the tool answers."""
    d.reply(tool_calls=1, text_chars=0)
    d.tool(tool, json.dumps(args), result, error, label=f"{tool} {args.get('file_path', '')}".strip())


def test_same_action_and_observation_repeated_is_stuck() -> None:
    d = det()
    for _ in range(3):
        step(d, "Read", {"file_path": "data/theme.json"}, "1\t{\"title\": \"x\"}")
    assert d.verdict() is None
    step(d, "Read", {"file_path": "data/theme.json"}, "1\t{\"title\": \"x\"}")
    v = d.verdict()
    assert v is not None and v.pattern == "repeat" and v.count == 4
    assert v.detail == "same action+observation repeated 4x: Read data/theme.json"


def test_polling_with_changing_results_is_progress() -> None:
    d = det()
    for i in range(10):
        step(d, "Status", {"job": "build"}, f"{i * 10}% done")
    assert d.verdict() is None


def test_argument_order_does_not_hide_a_repeat() -> None:
    assert args_key('{"a": 1, "b": 2}') == args_key('{"b":2,"a":1}')
    assert args_key('{"a": 1}') != args_key('{"a": 2}')


def test_volatile_fragments_do_not_count_as_progress() -> None:
    d = det()
    for i in range(4):
        step(d, "RunGame", {}, f"GAME PASSED the L1 gates ({1000 + i * 37} ms). Screenshots: r/check-{i:02d}/a.png")
    v = d.verdict()
    assert v is not None and v.pattern == "repeat"


def test_a_repeated_read_after_each_write_is_progress() -> None:
    d = det()
    for i in range(6):
        step(d, "Read", {"file_path": "src/main.js"}, f"content v{i}")
        step(d, "Write", {"file_path": "src/main.js", "content": f"content v{i + 1}"}, "Wrote src/main.js")
    assert d.verdict() is None


def test_the_same_error_repeated_is_stuck_whatever_the_arguments() -> None:
    d = det()
    for i in range(3):
        step(d, "Edit", {"file_path": "src/main.js", "old_string": f"x{i}"}, f"Edit {i} applied")
        step(d, "Build", {}, "BUILD FAILED (1 error(s)):\n- src/main.js:3:8: Unexpected ';'", error=True)
    assert d.verdict() is None
    step(d, "Edit", {"file_path": "src/main.js", "old_string": "x9"}, "Edit 9 applied")
    step(d, "Build", {}, "BUILD FAILED (1 error(s)):\n- src/main.js:3:8: Unexpected ';'", error=True)
    v = d.verdict()
    assert v is not None and v.pattern in ("error", "repeat") and v.count == 4
    # the error pattern also catches errors whose *calls* differ
    e = det()
    for i in range(4):
        step(e, "Write", {"file_path": f"a{i}.txt", "content": "x"}, "Refused: outside the project", error=True)
    v = e.verdict()
    assert v is not None and v.pattern == "error" and "Refused: outside the project" in v.detail


def test_different_errors_are_progress() -> None:
    d = det()
    for i in range(8):
        step(d, "Build", {}, f"BUILD FAILED:\n- src/main.js:{i + 1}:1: error {i}", error=True)
        step(d, "Edit", {"file_path": "src/main.js", "n": i}, "ok")
    assert d.verdict() is None


def test_a_b_a_b_alternation_is_stuck() -> None:
    d = det()
    for _ in range(2):
        step(d, "Read", {"file_path": "a.js"}, "A")
        step(d, "Read", {"file_path": "b.js"}, "B")
    step(d, "Read", {"file_path": "a.js"}, "A")
    assert d.verdict() is None
    step(d, "Read", {"file_path": "b.js"}, "B")
    v = d.verdict()
    assert v is not None and v.pattern == "alternation" and v.count == 3
    assert "Read a.js / Read b.js" in v.detail


def test_alternation_with_changing_results_is_progress() -> None:
    d = det()
    for i in range(6):
        step(d, "Edit", {"file_path": "a.js", "n": 1}, f"applied at line {i}")
        step(d, "Build", {}, f"BUILD OK: bundle ({1000 + i} bytes)")
    assert d.verdict() is None


def test_monologue_without_actions_is_stuck() -> None:
    d = det()
    d.reply(tool_calls=0, text_chars=400)
    d.reply(tool_calls=0, text_chars=300)
    assert d.verdict() is None
    d.reply(tool_calls=0, text_chars=200)
    v = d.verdict()
    assert v is not None and v.pattern == "monologue" and v.count == 3


def test_a_reply_with_a_tool_call_breaks_a_monologue() -> None:
    d = det()
    for i in range(5):
        d.reply(tool_calls=0, text_chars=100)
        d.reply(tool_calls=0, text_chars=100)
        step(d, "Glob", {"pattern": "*.js"}, f"main.js\nlevel{i}.js")
    d.reply(tool_calls=0, text_chars=0)  # one empty reply alone is not a pattern
    assert d.verdict() is None


def test_empty_replies_are_stuck() -> None:
    d = det()
    d.reply(tool_calls=0, text_chars=0)
    assert d.verdict() is None
    d.reply(tool_calls=0, text_chars=0)
    v = d.verdict()
    assert v is not None and v.pattern == "empty" and v.count == 2


def test_compression_loop_is_stuck() -> None:
    d = det()
    for i in range(2):
        d.compressed()
        step(d, "Read", {"file_path": f"big{i}.json"}, f"huge {i}")
        assert d.verdict() is None
    d.compressed()
    v = d.verdict()
    assert v is not None and v.pattern == "compression" and v.count == 3


def test_compressions_far_apart_are_normal() -> None:
    d = det()
    for i in range(4):
        d.compressed()
        for j in range(6):
            step(d, "Read", {"file_path": f"f{i}-{j}.js"}, f"content {i}-{j}")
    assert d.verdict() is None


def test_state_is_plain_data_that_survives_a_round_trip() -> None:
    d = det()
    for _ in range(3):
        step(d, "Read", {"file_path": "x.js"}, "same")
    restored = StuckDetector(POLICY, json.loads(json.dumps(d.records)))
    assert restored.verdict() is None
    step(restored, "Read", {"file_path": "x.js"}, "same")
    assert restored.verdict() is not None and restored.verdict().pattern == "repeat"


def test_the_record_list_is_bounded_and_shared_in_place() -> None:
    records: list[dict] = []
    d = StuckDetector(POLICY, records)
    for i in range(MAX_RECORDS * 2):
        step(d, "Read", {"file_path": f"{i}.js"}, str(i))
    assert d.records is records and len(records) == MAX_RECORDS


def test_the_shipped_config_masks_the_game_tools_volatile_output() -> None:
    """Build/RunGame report durations and a per-call report directory: unchanged sources must still look stuck."""
    d = StuckDetector(PolicyStore(REPO_ROOT / "config").snapshot().breakers.stuck)
    for i in range(3):
        d.reply(tool_calls=2, text_chars=0)
        d.tool("Build", "{}", f"BUILD OK in {300 + i} ms: /p/dist/bundle.js (5120 bytes).", False)
        d.tool("RunGame", "{}", f"GAME PASSED the L1 gates ({4000 + 9 * i} ms).\nScreenshots: /p/check-0{i}/boot.png",
               False)
    v = d.verdict()
    assert v is not None and v.pattern == "alternation"
