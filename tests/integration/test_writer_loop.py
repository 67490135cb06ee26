"""The single-writer run on real parts (Redis, esbuild, Chromium); only the model is scripted or offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tier2.runs import RunRequest, execute_run
from tier2.settings.loader import REPO_ROOT
from tier2.testing import FakeOpenAIServer, Reply

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


async def _events(rt, run_id: str) -> list:
    return [e for _, e in await rt.store.read_events(run_id, after=0, count=10_000)]


async def test_offline_faulty_model_repairs_syntax_and_data_faults(runtime, tmp_path: Path) -> None:
    out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="offline-faulty"))
    assert out.status == "delivered", out.stop_reason
    events = await _events(runtime, out.run_id)
    builds = [e.state for e in events if e.type == "tool_finished" and e.tool == "Build"]
    runs = [e.state for e in events if e.type == "tool_finished" and e.tool == "RunGame"]
    assert builds[0] == "error" and builds[-1] == "success"   # syntax error introduced, then repaired
    assert runs[0] == "error" and runs[-1] == "success"       # missing start_money, then repaired
    economy = json.loads((tmp_path / "g/data/economy.json").read_text())
    assert economy["start_money"] > 0
    ids = [seq for seq, _ in await runtime.store.read_events(out.run_id)]
    assert ids == list(range(1, len(ids) + 1))                # monotonic, gapless
    assert events[-1].type == "run_finished"


def _config_route(config_dir: Path, name: str, base_url: str) -> None:
    (config_dir / "policy" / "zz-test.yaml").write_text(
        f"models:\n  {name}:\n    kind: openai\n    model: fake-model\n    base_url: {base_url}\n"
        f"    api_key_env: TIER2_TEST_FAKE_KEY\n    max_retries: 0\n"
        "budget: {usd: null}\n")  # fake-model is unpriced on purpose (metering says so); no USD cap needs no price


def _scripted_llm(body: dict) -> Reply:
    system = body["messages"][0]["content"]
    system = system if isinstance(system, str) else " ".join(p.get("text", "") for p in system)
    project = re.search(r"game project at (\S+?) \(the project directory\)", system).group(1)
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    theme = json.loads((REPO_ROOT / "capability_packs/phaser/genres/shop/template/data/theme.json").read_text())
    theme["title"] = "Fake Model Tavern"
    steps = [
        Reply(tool_calls=[("Read", {"file_path": f"{project}/data/theme.json"})]),
        Reply(text="Renaming the game.", tool_calls=[("Write", {"file_path": f"{project}/data/theme.json",
                                                                "content": json.dumps(theme, indent=2)})]),
        Reply(tool_calls=[("Build", {})]),
        Reply(tool_calls=[("RunGame", {})]),
    ]
    return steps[done] if done < len(steps) else Reply(text="The game is done.")


async def test_openai_compatible_route_streams_tool_call_deltas(runtime, config_dir, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    with FakeOpenAIServer(_scripted_llm) as srv:
        _config_route(config_dir, "fake", srv.base_url)
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="fake"))
        assert out.status == "delivered", out.stop_reason
        assert len(srv.requests) == 5
        assert {t["function"]["name"] for t in srv.requests[0]["tools"]} >= {"Read", "Write", "Build", "RunGame"}
    theme = json.loads((tmp_path / "g/data/theme.json").read_text())
    assert theme["title"] == "Fake Model Tavern"          # the Write ran with the complete arguments
    events = await _events(runtime, out.run_id)
    writes = [e for e in events if e.type == "tool_finished" and e.tool == "Write"]
    assert len(writes) == 1 and writes[0].state == "success"
    design_calls = 2 + 7 * 2  # the offline design studio: leader split + converge, 7 designers x (Glob, answer)
    assert out.delivery["usage"]["model_calls"] == 5 + design_calls and out.delivery["usage"]["input_tokens"] > 0
    assert out.delivery["model"] == {"route": "fake", "kind": "openai", "model": "fake-model"}
    assert out.delivery["usage"]["priced"] is False and out.delivery["usage"]["cost_usd"] is None


async def test_model_outage_ends_the_run_failed_with_a_reason(runtime, config_dir, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    _config_route(config_dir, "down", "http://127.0.0.1:9/v1")  # discard port: nothing listens
    out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="down"))
    assert out.status == "failed"
    assert out.stop_reason == "model endpoint unreachable: http://127.0.0.1:9/v1 (ConnectError)"
    record = json.loads(Path(out.delivery_path).read_text())
    assert record["status"] == "failed" and record["stop_reason"] == out.stop_reason
    assert (await _events(runtime, out.run_id))[-1].type == "run_finished"


async def test_a_writer_claiming_success_is_not_believed(runtime, config_dir, tmp_path, monkeypatch) -> None:
    """The model breaks the build and says it is done; the gates decide, the fix rounds run out, the run fails."""
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")

    def careless(body: dict) -> Reply:
        system = body["messages"][0]["content"]
        system = system if isinstance(system, str) else " ".join(p.get("text", "") for p in system)
        project = re.search(r"game project at (\S+?) \(the project directory\)", system).group(1)
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        if done == 0:
            return Reply(tool_calls=[("Read", {"file_path": f"{project}/src/main.js"})])
        if done == 1:
            return Reply(tool_calls=[("Write", {"file_path": f"{project}/src/main.js", "content": "let x = ;\n"})])
        return Reply(text="All done, the game is perfect.")

    with FakeOpenAIServer(careless) as srv:
        _config_route(config_dir, "careless", srv.base_url)
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="careless"))
        assert len(srv.requests) == 3 + runtime.policies.snapshot().writer.max_fix_rounds
    assert out.status == "failed"
    assert "l1.builds" in out.stop_reason
    gates = {g["id"]: g["passed"] for g in out.delivery["verification"]["gates"]}
    assert gates["l1.builds"] is False and "l1.boots" not in gates  # nothing to run when the build fails


async def test_a_failing_l3_scorer_never_stops_delivery(runtime, config_dir, tmp_path) -> None:
    _config_route(config_dir, "vision", "http://127.0.0.1:9/v1")  # nothing listens: the scorer fails
    (config_dir / "policy" / "zz-l3.yaml").write_text("l3_scorer: vision\nl3_timeout_s: 2\n")
    out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g"))
    assert out.status == "delivered", out.stop_reason
    l3 = next(g for g in out.delivery["verification"]["gates"] if g["id"] == "l3.visual_score")
    assert l3["layer"] == "L3" and l3["mode"] == "observe"
    assert l3["evidence"]["scorer"] == "heuristic-image-stats-v1"
