"""Eval metrics (pure): the Wilson interval against known values, percentiles, per-run rows from delivery records
(outcome, honesty, content coverage, signatures) and the per-model summary built from them."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tier2.evals.metrics import percentile, percentiles, summarize, wilson
from tier2.evals.rows import RunFacts, content_coverage, outcome_of, row_from
from tier2.evals.suite import Expect


@pytest.mark.parametrize(("passed", "n", "lo", "hi"), [
    (0, 10, 0.0, 0.2775),      # the textbook values (z = 1.96)
    (10, 10, 0.7225, 1.0),
    (5, 10, 0.2366, 0.7634),
    (81, 263, 0.2553, 0.3662),
])
def test_wilson_matches_known_intervals(passed: int, n: int, lo: float, hi: float) -> None:
    a, b = wilson(passed, n)
    assert a == pytest.approx(lo, abs=1e-4) and b == pytest.approx(hi, abs=1e-4)


def test_wilson_of_nothing_is_the_whole_range() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


def test_percentiles_interpolate_between_ranks() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0], 95) == 3.0
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10, 1, 7, 3, 5], 50) == 5
    assert percentile(list(range(1, 21)), 95) == pytest.approx(19.05)
    p = percentiles([0.02, 0.04, 0.03])
    assert (p.p50, p.n) == (0.03, 3) and math.isclose(p.p95 or 0, 0.039)


def _delivery(*, status: str = "delivered", genre: str | None = "platformer", l1: bool = True,
              unsupported: list[dict[str, str]] | None = None, reqs: list[dict[str, Any]] | None = None,
              cost: float = 0.03, total_ms: int = 12000, gates: bool = True) -> dict[str, Any]:
    gate_list = [{"id": "l1.builds", "layer": "L1", "passed": True},
                 {"id": "l1.boots", "layer": "L1", "passed": l1},
                 {"id": "l3.visual_score", "layer": "L3", "passed": True, "evidence": {"score": 0.7}}] if gates else []
    return {"status": status, "completion": {"genre": genre, "structural": {"verified": 9, "total": 10},
                                             "unsupported": unsupported or [], "requirements": reqs or []},
            "verification": {"gates": gate_list},
            "usage": {"model_calls": 25, "input_tokens": 1000, "output_tokens": 100, "cost_usd": cost},
            "timings_ms": {"total": total_ms}, "design": {"genre": genre, "scope": {"unsupported": []}}}


REQS = [{"text": "the player is a fox", "source": "fox", "status": "verified"},
        {"text": "obstacles: spikes", "source": "spikes", "status": "unverified"}]


def _row(d: dict[str, Any], expect: Expect, status: str = "delivered", reason: str = "all L1 gates passed",
         brief: str = "b"):
    return row_from(RunFacts("r-1", status, reason, d, fix_rounds=1), brief_id=brief, follow_up=0, repeat=0,
                    model="offline", expect=expect)


def test_content_coverage_reports_verified_unverified_and_not_derived() -> None:
    cov = content_coverage(("Fox", "spikes", "flag"), {"completion": {"requirements": REQS}})
    assert (cov.verified, cov.expected, cov.missing, cov.not_derived) == (1, 3, ["spikes", "flag"], ["flag"])


def test_a_delivered_game_of_the_right_genre_passes() -> None:
    row = _row(_delivery(reqs=REQS), Expect(genre="platformer", content=("fox",)))
    assert (row.outcome, row.genre_verdict, row.l1_passed, row.passed, row.honest) == (
        "delivered", "match", True, True, True)
    assert (row.l3_score, row.model_calls, row.tokens.in_, row.tokens.out, row.wall_s, row.fix_rounds) == (
        0.7, 25, 1000, 100, 12.0, 1)
    assert row.signature is None and row.structural.verified == 9


def test_a_silent_substitute_is_dishonest() -> None:
    row = _row(_delivery(genre="shop"), Expect(genre="platformer"))
    assert (row.passed, row.honest, row.genre_verdict) == (False, False, "mismatch")
    assert row.signature == "delivered≠delivered: genre shop for platformer"


def test_an_honest_failure_is_honest_but_not_a_pass() -> None:
    row = _row(_delivery(status="failed", l1=False), Expect(genre="platformer"), status="failed",
               reason="gates still failing: l1.boots")
    assert (row.outcome, row.passed, row.honest, row.l1_passed) == ("failed", False, True, False)
    assert row.signature == "failed≠delivered: l1.boots"


def test_a_refusal_at_the_design_is_the_honest_outcome_for_an_unbuildable_brief() -> None:
    d = _delivery(status="failed", genre="racing", gates=False)
    row = _row(d, Expect(outcome="refused", genre="racing"), status="failed", reason="not buildable: racing")
    assert (row.outcome, row.passed, row.honest, row.genre_verdict) == ("refused", True, True, "match")
    built = _row(_delivery(genre="shop"), Expect(outcome="refused"))
    assert (built.passed, built.honest) == (False, False)


def test_a_partial_needs_the_unbuildable_parts_listed() -> None:
    listed = _row(_delivery(unsupported=[{"what": "multiplayer", "reason": "no network"}]),
                  Expect(outcome="partial", genre="platformer"))
    assert (listed.outcome, listed.passed, listed.honest) == ("partial", True, True)
    silent = _row(_delivery(), Expect(outcome="partial", genre="platformer"))
    assert (silent.outcome, silent.passed, silent.honest) == ("delivered", False, False)


def test_a_breaker_stop_is_counted_and_never_called_a_refusal() -> None:
    assert outcome_of("stopped", "steps: 80 model calls in this run", {}) == "failed"
    row = _row(_delivery(status="stopped", gates=False), Expect(genre="platformer"), status="stopped",
               reason="stuck: the same call 5 times")
    assert (row.breaker_trips, row.outcome, row.honest) == (1, "failed", True)
    assert outcome_of("rejected", "brief is too long (4100 > 4000)", {}) == "refused"


def test_signatures_mask_numbers_quotes_and_paths() -> None:
    a = _row(_delivery(status="failed", gates=False), Expect(genre="platformer"), status="failed",
             reason="internal_error: 'x.js' at /tmp/a/b/c.js line 12; more", brief="one")
    b = _row(_delivery(status="failed", gates=False), Expect(genre="platformer"), status="failed",
             reason="internal_error: 'y.js' at /tmp/q/r.js line 7; other", brief="two")
    assert a.signature == b.signature == "failed≠delivered: internal_error: '…' at <path> line N"
    held = _row(_delivery(status="failed", genre="maze"), Expect(genre="maze"), status="failed",
                reason="gates failing: l2.req.R18 (the enemies' speed: 400); writer stopped")
    assert held.signature == "failed≠delivered: gates failing: l2.req.R18"


def test_the_summary_aggregates_rows() -> None:
    rows = [_row(_delivery(reqs=REQS, cost=0.02, total_ms=10000), Expect(genre="platformer", content=("fox", "x")),
                 brief="p1"),
            _row(_delivery(reqs=REQS, cost=0.04, total_ms=20000), Expect(genre="platformer", content=("fox",)),
                 brief="p2"),
            _row(_delivery(genre="shop", cost=0.03), Expect(genre="maze"), brief="m1"),
            _row(_delivery(status="failed", genre="racing", gates=False, cost=0.006, total_ms=1000),
                 Expect(outcome="refused", genre="racing"), status="failed", reason="not buildable: racing",
                 brief="r1")]
    s = summarize(rows, repeat=1)
    assert (s.runs, s.delivered, s.build_health, s.intent, s.honest_rate) == (4, 3, 1.0, round(2 / 3, 4), 0.75)
    assert (s.pass_rate.passed, s.pass_rate.n, s.pass_rate.rate) == (3, 4, 0.75)
    assert s.pass_rate.lo == pytest.approx(wilson(3, 4)[0], abs=1e-4)
    assert (s.cost_per_delivered.p50, s.cost_per_delivered.n) == (0.03, 3)
    assert set(s.per_genre) == {"platformer", "maze", "racing"}
    assert (s.per_genre["platformer"].runs, s.per_genre["platformer"].intent) == (2, round(2 / 3, 4))
    assert s.per_genre["racing"].build_health is None and s.per_genre["maze"].pass_rate == 0.0
    assert [(x.signature, x.count, x.briefs) for x in s.failure_signatures] == [
        ("delivered≠delivered: genre shop for maze", 1, ["m1"])]
