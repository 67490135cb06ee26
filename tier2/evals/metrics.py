"""Per-model summaries of eval rows (pure): build health, intent, honest-outcome rate, pass rate with its Wilson
interval, cost per delivered game and time percentiles, per-genre rows, failure signatures ranked by count.
Definitions: docs/eval.md "Metrics".
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from tier2.evals.results import GenreRow, ModelSummary, PassRate, Percentiles, RunRow, Signature

__all__ = ["percentile", "percentiles", "summarize", "wilson"]

Z95 = 1.959963984540054


def wilson(passed: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``passed`` successes in ``n`` trials ((0, 1) when n = 0)."""
    if n <= 0:
        return 0.0, 1.0
    p = passed / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100), linear interpolation between the closest ranks; None for no values."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def percentiles(values: Iterable[float]) -> Percentiles:
    xs = list(values)
    p50, p95 = percentile(xs, 50), percentile(xs, 95)
    return Percentiles(p50=None if p50 is None else round(p50, 6), p95=None if p95 is None else round(p95, 6),
                       n=len(xs))


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _builds(rows: list[RunRow]) -> list[RunRow]:
    return [r for r in rows if r.outcome_expected == "delivered"]


def _delivered(rows: list[RunRow]) -> list[RunRow]:
    return [r for r in rows if r.status == "delivered"]


def _genre_row(rows: list[RunRow]) -> GenreRow:
    builds, delivered = _builds(rows), _delivered(rows)
    return GenreRow(runs=len(rows), delivered=len(delivered),
                    build_health=_ratio(sum(r.l1_passed for r in builds), len(builds)),
                    intent=_ratio(sum(r.content.verified for r in rows), sum(r.content.expected for r in rows)),
                    pass_rate=_ratio(sum(r.passed for r in rows), len(rows)),
                    cost_per_delivered=percentiles(r.cost_usd for r in delivered),
                    time=percentiles(r.wall_s for r in rows))


def summarize(rows: list[RunRow], repeat: int = 1) -> ModelSummary:
    """One model's rows (every brief, follow-up and repeat) into its summary."""
    ended = [r for r in rows if r.honest is not None]
    builds, delivered = _builds(rows), _delivered(rows)
    passed = sum(r.passed for r in rows)
    lo, hi = wilson(passed, len(rows))
    by_genre: dict[str, list[RunRow]] = defaultdict(list)
    for r in rows:
        by_genre[r.genre_expected or "(none)"].append(r)
    sigs: Counter[str] = Counter()
    briefs: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        if r.signature:
            sigs[r.signature] += 1
            name = r.brief_id + (f"#{r.follow_up}" if r.follow_up else "")
            if name not in briefs[r.signature]:
                briefs[r.signature].append(name)
    return ModelSummary(
        runs=len(rows), delivered=len(delivered),
        build_health=_ratio(sum(r.l1_passed for r in builds), len(builds)),
        intent=_ratio(sum(r.content.verified for r in rows), sum(r.content.expected for r in rows)),
        intent_verified=sum(r.content.verified for r in rows), intent_expected=sum(r.content.expected for r in rows),
        honest_rate=_ratio(sum(bool(r.honest) for r in ended), len(ended)),
        pass_rate=PassRate(rate=_ratio(passed, len(rows)) or 0.0, lo=round(lo, 4), hi=round(hi, 4), k=repeat,
                           n=len(rows), passed=passed),
        cost_per_delivered=percentiles(r.cost_usd for r in delivered),
        time=percentiles(r.wall_s for r in rows),
        cost_usd=round(sum(r.cost_usd for r in rows), 6),
        per_genre={g: _genre_row(rs) for g, rs in sorted(by_genre.items())},
        failure_signatures=[Signature(signature=s, count=c, briefs=briefs[s])
                            for s, c in sorted(sigs.items(), key=lambda kv: (-kv[1], kv[0]))])
