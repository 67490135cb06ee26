from __future__ import annotations

from agentscope.event import ModelCallEndEvent

from tier2.runs.loop.usage import EventMapper
from tier2.settings.loader import REPO_ROOT, PolicyStore, Price
from tier2.telemetry import ANSWERED_BY, CALL_COST

PRICE = Price(input_per_mtok=2.0, output_per_mtok=8.0)


def _call(mapper: EventMapper, tokens_in: int, tokens_out: int, price: Price | None = PRICE):
    """A model call as the call recorder leaves it: the answering model and its one price on the end event."""
    cost = price.cost(tokens_in, tokens_out) if price is not None else None
    return mapper.map(ModelCallEndEvent(reply_id="r", input_tokens=tokens_in, output_tokens=tokens_out,
                                        metadata={ANSWERED_BY: mapper.model_name, CALL_COST: cost}))[0]


def test_cost_per_call_phase_and_agent() -> None:
    mapper = EventMapper("run", "m")
    assert _call(mapper, 1_000_000, 0).cost_usd == 2.0
    mapper.phase = "validate"
    assert _call(mapper, 0, 500_000).cost_usd == 4.0
    report = mapper.usage.report()
    assert report["cost_usd"] == 6.0 and report["priced"] is True
    assert report["cost_by_phase"] == {"implement": 2.0, "validate": 4.0} and report["cost_by_agent"] == {"writer": 6.0}


def test_an_unpriced_model_is_reported_as_such() -> None:
    mapper = EventMapper("run", "mystery-model")
    assert _call(mapper, 10, 10, None).cost_usd is None
    assert mapper.usage.report()["cost_usd"] is None and mapper.usage.report()["priced"] is False


def test_the_offline_model_has_a_price_so_budgets_work_offline() -> None:
    policy = PolicyStore(REPO_ROOT / "config").snapshot()
    assert policy.prices[policy.models["offline"].model].input_per_mtok > 0
