"""Per-agent routing with a per-route fallback on a real run (Redis, esbuild, Chromium): the writer's route
(`agents.writer`) answers 500 after its retries, the fallback route answers, the run delivers and names it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tier2.runs import RunRequest, execute_run
from tier2.settings.loader import REPO_ROOT
from tier2.store.trajectory import ModelCallRecord, TrajectoryStore
from tier2.testing import FakeOpenAIServer, Reply

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


def _responder(body: dict) -> Reply:
    if body["model"] == "primary-model":
        return Reply(status=500, text="upstream overloaded")  # a provider outage
    system = body["messages"][0]["content"]
    system = system if isinstance(system, str) else " ".join(p.get("text", "") for p in system)
    project = re.search(r"game project at (\S+?) \(the project directory\)", system).group(1)
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    theme = json.loads((REPO_ROOT / "capability_packs/phaser/genres/shop/template/data/theme.json").read_text())
    theme["title"] = "Fallback Tavern"
    steps = [Reply(tool_calls=[("Read", {"file_path": f"{project}/data/theme.json"})]),
             Reply(tool_calls=[("Write", {"file_path": f"{project}/data/theme.json",
                                          "content": json.dumps(theme, indent=2)})]),
             Reply(tool_calls=[("Build", {})]), Reply(tool_calls=[("RunGame", {})])]
    return steps[done] if done < len(steps) else Reply(text="The game is done.")


async def test_the_fallback_route_answers_and_is_named(runtime, config_dir: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(_responder) as srv:
        (config_dir / "policy" / "zz-fallback.yaml").write_text(
            "models:\n"
            f"  primary:\n    kind: openai\n    model: primary-model\n    base_url: {srv.base_url}\n"
            "    max_retries: 0\n    fallback: backup\n"  # one attempt: the OpenAI client adds no hidden retries
            f"  backup:\n    kind: openai\n    model: backup-model\n    base_url: {srv.base_url}\n"
            "    max_retries: 0\n"
            "agents:\n  writer: primary\n"
            "prices:\n  primary-model: {input_per_mtok: 1.0, output_per_mtok: 1.0}\n"
            "  backup-model: {input_per_mtok: 3.0, output_per_mtok: 15.0}\n")
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g"))  # no --model: agents.writer
        primary_requests = sum(1 for r in srv.requests if r["model"] == "primary-model")
    assert out.status == "delivered", out.stop_reason
    assert json.loads((tmp_path / "g/data/theme.json").read_text())["title"] == "Fallback Tavern"
    assert out.delivery["model"]["route"] == "primary"              # the configured route ...
    usage = out.delivery["usage"]
    writer_calls = {m: n for m, n in usage["calls_by_model"].items() if m != "tier2-offline-policy-v1"}
    assert writer_calls == {"backup-model": 5}                      # ... and the model that answered each call
    calls = [c for c in await TrajectoryStore(runtime.store.r, runtime.store.keys).read(out.run_id)
             if isinstance(c, ModelCallRecord) and c.agent == "writer"]  # (the design team is offline here)
    assert [(c.model, c.state, c.fallback) for c in calls] == [("primary-model", "error", 0),
                                                               ("backup-model", "success", 1)] * 5
    assert "InternalServerError" in calls[0].error
    assert primary_requests == 5                        # max_retries: 0 is one attempt per call, then the fallback
    answered = [c for c in calls if c.state == "success"]
    assert usage["cost_by_agent"]["writer"] == pytest.approx(sum(c.cost_usd or 0 for c in answered), abs=1e-6)
    events = [e for _, e in await runtime.store.read_events(out.run_id, after=0, count=10_000)]
    assert {e.model for e in events if e.type == "model_called"} == {"backup-model", "tier2-offline-policy-v1"}
