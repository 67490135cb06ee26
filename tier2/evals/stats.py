"""Tests of a difference between two evals (`tier2.evals.compare`; rules: docs/eval.md "Comparing two evals").

Pure functions on counts: a one-sided Fisher exact test (did the pass rate go down?) and the Holm step-down
adjustment that keeps a family of such tests (every brief of a suite, every genre) at its stated alpha. The
descriptive statistics of one eval (Wilson intervals, percentiles) live in `tier2.evals.metrics`.
"""

from __future__ import annotations

from math import comb

__all__ = ["fisher_less", "holm"]


def fisher_less(passed_a: int, n_a: int, passed_b: int, n_b: int) -> float:
    """One-sided Fisher exact p-value for "B's pass rate is lower than A's".

    Conditional on the margins (``n_a``, ``n_b`` runs; ``passed_a + passed_b`` passes in all), the number of A's
    passes is hypergeometric; the p-value is the probability of A holding at least ``passed_a`` of them. 1.0 when
    either side has no runs (no evidence)."""
    for x, n in ((passed_a, n_a), (passed_b, n_b)):
        if n < 0 or not 0 <= x <= n:
            raise ValueError(f"passes {x} out of range for {n} runs")
    if n_a == 0 or n_b == 0:
        return 1.0
    total, passes = n_a + n_b, passed_a + passed_b
    denominator = comb(total, passes)
    hi = min(n_a, passes)
    numerator = sum(comb(n_a, k) * comb(n_b, passes - k) for k in range(passed_a, hi + 1))
    return min(1.0, numerator / denominator)


def holm(p_values: list[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the input order: a test is significant at ``alpha`` for the family
    when its adjusted value is ≤ ``alpha`` (the family-wise error rate stays ≤ ``alpha``)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
