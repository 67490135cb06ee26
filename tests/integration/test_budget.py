"""Run governance end to end through `execute_run` on real parts (Redis, toolchain, Chromium where validation runs);
only the model is scripted (FakeOpenAIServer) or the offline policy."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tier2.runs import RunRequest, execute_run
from tier2.settings.loader import Price
from tier2.store.spend import fmt_usd
from tier2.store.trajectory import ModelCallRecord, TrajectoryStore
from tier2.testing import FakeOpenAIServer, Reply

pytestmark = [pytest.mark.redis]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
PRICE = Price(input_per_mtok=2.0, output_per_mtok=8.0)
_FILES = ["src/main.js", "src/state.js", "src/scenes/Play.js", "src/scenes/Menu.js", "data/items.json",
          "data/recipes.json", "data/orders.json", "data/economy.json", "data/prices.json", "data/theme.json"]


def _route(config_dir: Path, name: str, base_url: str, model: str, priced: bool = True) -> None:
    price = f"prices:\n  {model}: {{input_per_mtok: 2.0, output_per_mtok: 8.0}}\n" if priced else ""
    (config_dir / "policy" / f"zz-{name}.yaml").write_text(
        f"models:\n  {name}:\n    kind: openai\n    model: {model}\n    base_url: {base_url}\n"
        f"    api_key_env: TIER2_TEST_FAKE_KEY\n    max_retries: 0\n{price}")


def _over_spender(body: dict) -> Reply:
    """Never finishes; every call reports its whole prompt and all the output it was allowed (max_tokens)."""
    system = body["messages"][0]["content"]
    system = system if isinstance(system, str) else " ".join(p.get("text", "") for p in system)
    project = re.search(r"game project at (\S+?) \(the project directory\)", system).group(1)
    prompt = sum(len(json.dumps(m)) for m in body["messages"]) // 4
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    target = _FILES[done % len(_FILES)]  # a different file each step: busy, not stuck
    return Reply(text="Reading more.", tool_calls=[("Read", {"file_path": f"{project}/{target}"})],
                 usage=(prompt, body.get("max_tokens") or 1_000_000))


async def test_an_over_spending_model_stops_exactly_at_the_cap(runtime, config_dir, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    with FakeOpenAIServer(_over_spender) as srv:
        _route(config_dir, "spender", srv.base_url, "spender-model")
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="spender",
                                                    options={"budget": {"usd": 0.5}}))
    budget = out.delivery["usage"]["budget"]
    assert out.status == "stopped", out.stop_reason
    assert out.stop_reason == f"budget: 0.5 USD cap, {budget['calls']} calls, {fmt_usd(budget['spent_usd'])} spent"
    costs = [PRICE.cost(json_len // 4, req["max_tokens"]) for req in srv.requests
             for json_len in [sum(len(json.dumps(m)) for m in req["messages"])]]
    # one ledger for the whole run: the design team's (offline, nominally priced) calls are on it too
    design = [c for c in await TrajectoryStore(runtime.store.r, runtime.store.keys).read(out.run_id)
              if isinstance(c, ModelCallRecord) and c.agent != "writer"]
    assert design and all(c.state == "success" and c.cost_usd for c in design)
    assert budget["calls"] == len(srv.requests) + len(design) and len(srv.requests) >= 2  # every call, once
    assert budget["spent_usd"] == pytest.approx(sum(costs) + sum(c.cost_usd or 0 for c in design), abs=1e-6)
    assert budget["spent_usd"] <= 0.5 and budget["peak_usd"] <= 0.5 and budget["overrun_usd"] == 0
    assert 0.5 - budget["spent_usd"] < 2 * max(costs)                   # stopped at the cap, not long before
    assert budget["reserved_usd"] == 0 and budget["refused"] == 1
    default_bound = runtime.policies.snapshot().budget.max_output_tokens
    assert all(req["max_tokens"] == default_bound for req in srv.requests)  # the reserved bound reached the model
    record = await runtime.store.get_run(out.run_id)
    assert record["status"] == "stopped" and record["usage"]["budget"]["calls"] == budget["calls"]
    events = [e for _, e in await runtime.store.read_events(out.run_id, after=0, count=10_000)]
    assert events[-1].type == "run_finished" and events[-1].stop_reason == out.stop_reason
    # seed 002 §4.4: the plan says what is still pending and why the run ended (the design was done, the writer's
    # work was not)
    plan = out.delivery["plan"]
    assert plan["end"] == {"kind": "stopped", "reason": out.stop_reason}
    assert {"phase.implement", "delivery"} <= set(plan["pending"]) and "design.spec" not in plan["pending"]


async def test_an_unpriced_model_is_refused_before_any_call(runtime, config_dir, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")
    with FakeOpenAIServer(_over_spender) as srv:
        _route(config_dir, "mystery", srv.base_url, "mystery-model", priced=False)
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="mystery"))
        assert srv.requests == []
    assert out.status == "stopped" and out.stop_reason.startswith("budget: no price for model 'mystery-model'")


async def test_a_run_deadline_stops_it_with_the_limit_named(runtime, tmp_path) -> None:
    out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g",
                                                options={"budget": {"deadline_s": 0.001}}))
    assert out.status == "stopped"
    assert out.stop_reason == "deadline: 0.001 s wall clock, 0 calls, 0 USD spent"
    assert out.delivery["usage"]["budget"]["refused"] == 1


@pytest.mark.browser
@pytest.mark.slow
async def test_the_offline_default_delivers_within_its_default_budget(runtime, tmp_path) -> None:
    out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g"))
    assert out.status == "delivered", out.stop_reason
    usage, default = out.delivery["usage"], runtime.policies.snapshot().budget
    budget = usage["budget"]
    assert budget["cap_usd"] == default.usd and budget["deadline_s"] == default.deadline_s
    assert budget["calls"] == usage["model_calls"] > 0 and budget["refused"] == 0
    assert budget["spent_usd"] == pytest.approx(usage["cost_usd"], abs=1e-5)   # the ledger agrees with metering
    assert budget["spent_usd"] <= default.usd and budget["overrun_usd"] == 0     # reservations covered every call
