"""The tests behind ``tier2 eval compare``: one-sided Fisher exact and the Holm adjustment."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import pytest

from tier2.evals.stats import fisher_less, holm


def _by_enumeration(xa: int, na: int, xb: int, nb: int) -> float:
    """Every way to hand the observed passes to the na + nb runs, equally likely under "no difference": the share
    where A holds at least xa of them."""
    runs, passes = na + nb, xa + xb
    ways = list(combinations(range(runs), passes))
    extreme = sum(1 for w in ways if sum(1 for i in w if i < na) >= xa)
    return float(Fraction(extreme, len(ways)))


@pytest.mark.parametrize("xa,na,xb,nb", [(3, 3, 0, 3), (1, 1, 0, 1), (2, 2, 0, 2), (5, 5, 1, 5), (4, 6, 2, 6),
                                         (0, 3, 3, 3), (2, 4, 2, 4), (7, 8, 3, 9), (0, 0, 0, 2)])
def test_fisher_matches_enumerating_every_assignment(xa: int, na: int, xb: int, nb: int) -> None:
    expected = 1.0 if na == 0 or nb == 0 else _by_enumeration(xa, na, xb, nb)
    assert fisher_less(xa, na, xb, nb) == pytest.approx(expected, abs=1e-12)


def test_fisher_known_values() -> None:
    assert fisher_less(4, 4, 0, 4) == pytest.approx(1 / 70)   # the lady tasting tea, all eight cups right
    assert fisher_less(3, 3, 0, 3) == pytest.approx(0.05)     # K=3: 3/3 -> 0/3 is exactly the 5 % line
    assert fisher_less(1, 1, 0, 1) == pytest.approx(0.5)      # K=1: one flip is no evidence
    assert fisher_less(0, 3, 3, 3) == pytest.approx(1.0)      # B better: nothing for "B is worse"


@pytest.mark.parametrize("bad", [(4, 3, 0, 3), (-1, 3, 0, 3), (0, 3, 4, 3)])
def test_fisher_refuses_impossible_counts(bad: tuple[int, int, int, int]) -> None:
    with pytest.raises(ValueError):
        fisher_less(*bad)


def test_holm_step_down() -> None:
    # sorted 0.01, 0.02, 0.03, 0.5 -> x4, x3, x2, x1 with the running maximum
    assert holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    assert holm([0.4, 0.4]) == pytest.approx([0.8, 0.8])
    assert holm([0.9, 0.9, 0.9]) == [1.0, 1.0, 1.0]          # capped at 1
    assert holm([]) == []
