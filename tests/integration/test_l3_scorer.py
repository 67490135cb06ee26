"""The L3 scorer is an agent of the run: its model call goes through the run's onion — reserved on and reconciled
with the run's one budget ledger, recorded in the trajectory under the same call-id scheme — and a refusal only
degrades L3 to the heuristic (L3 never stops a run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from tier2.models.routing import agent_models
from tier2.runs.loop.addons.l3 import l3_scorer
from tier2.runs.loop.context import RunContext
from tier2.runs.process.policy import RunPolicy
from tier2.runs.request import RunRequest
from tier2.store.budget import BudgetCaps, BudgetLedger
from tier2.store.trajectory import ModelCallRecord, TrajectoryStore
from tier2.testing import FakeOpenAIServer, Reply
from tier2.validators.l3.visual import HEURISTIC_SCORER, score_visual

pytestmark = pytest.mark.redis
VERDICT = '{"looks_finished": 7, "matches_brief": 6, "degraded": false, "notes": "ok"}'


@pytest.fixture
def shot(tmp_path: Path) -> Path:
    path = tmp_path / "shot.png"
    Image.new("RGB", (64, 48), (30, 120, 200)).save(path)
    return path


def _run(runtime, run_id: str, options: dict) -> RunContext:
    """The context of a run the scorer scores for (its ledger, trajectory and events)."""
    async def emit(event) -> None:
        await runtime.store.append_event(event)
    policy = runtime.policies.snapshot()
    req = RunRequest(brief="a potion shop", run_id=run_id, options=options)
    return RunContext(rt=runtime, req=req, brief=req.brief, run_id=run_id, run_policy=RunPolicy(policy, fresh=True),
                      emit=emit, writer=agent_models(policy, "writer"), pack=runtime.pack)


def _configure(config_dir: Path, base_url: str) -> None:
    (config_dir / "policy" / "zz-l3.yaml").write_text(
        f"models:\n  vision:\n    kind: openai\n    model: vision-model\n    base_url: {base_url}\n"
        "    max_retries: 0\nagents:\n  l3_scorer: vision\n"
        "prices:\n  vision-model: {input_per_mtok: 2.0, output_per_mtok: 8.0}\n"
        "budget:\n  max_output_tokens: 500\n")


async def test_the_scorer_call_is_metered_on_the_run_ledger_and_traced(runtime, config_dir, shot) -> None:
    with FakeOpenAIServer(lambda body: Reply(text=VERDICT, usage=(1200, 40))) as srv:
        _configure(config_dir, srv.base_url)
        policy = runtime.policies.snapshot()
        scorer = l3_scorer(policy, _run(runtime, "r-l3-ok", {"budget": {"usd": 1.0}}))
        result = await score_visual([shot], "a potion shop", scorer, timeout_s=10)
        assert srv.requests[0]["max_tokens"] == 500                # the reserved output bound is sent
    assert result.evidence["scorer"] == "vision (vision-model)" and result.evidence["score"] == 0.65
    st = await BudgetLedger(runtime.store.r, runtime.store.keys, "r-l3-ok", BudgetCaps(usd=1.0)).status()
    assert st.calls == 1 and st.reserved_usd == 0
    assert st.spent_usd == pytest.approx(policy.prices["vision-model"].cost(1200, 40), abs=1e-9)
    calls = await TrajectoryStore(runtime.store.r, runtime.store.keys).read("r-l3-ok")
    models = [c for c in calls if isinstance(c, ModelCallRecord)]
    assert len(models) == 1 and models[0].agent == "l3_scorer" and models[0].call_id.startswith("m:l3_scorer:")
    assert models[0].cost_usd == pytest.approx(st.spent_usd)


async def test_a_refused_scorer_call_degrades_to_the_heuristic(runtime, config_dir, shot) -> None:
    with FakeOpenAIServer(lambda body: Reply(text=VERDICT)) as srv:
        _configure(config_dir, srv.base_url)
        scorer = l3_scorer(runtime.policies.snapshot(),
                           _run(runtime, "r-l3-poor", {"budget": {"usd": 0.001}}))  # less than one scorer call
        result = await score_visual([shot], "a potion shop", scorer, timeout_s=10)
        assert srv.requests == []                                  # refused before any request
    assert result.evidence["scorer"] == HEURISTIC_SCORER
    assert "budget: 0.001 USD cap, 0 calls, 0 spent" in result.findings[0].message
