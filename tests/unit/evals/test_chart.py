"""The report's chart (`tier2.evals.chart`): points where the numbers put them, whiskers, escaped labels."""

from __future__ import annotations

import re

from tier2.evals.chart import BOTTOM, TOP, H, Point, scatter_svg


def _y(rate: float) -> float:
    return TOP + (H - TOP - BOTTOM) * (1 - rate)


def test_points_and_whiskers_follow_the_numbers() -> None:
    svg = scatter_svg([Point("a", 0.75, 0.5, 0.9, 0.02), Point("<b>", 0.2, 0.05, 0.45, None)])
    groups = re.findall(r'<g class="point" data-model="([^"]*)">(.*?)</g>', svg)
    assert [g[0] for g in groups] == ["a", "&lt;b&gt;"]
    first, second = groups[0][1], groups[1][1]
    cy = float(re.search(r'<circle cx="[\d.]+" cy="([\d.]+)"', first).group(1))  # type: ignore[union-attr]
    assert abs(cy - _y(0.75)) < 0.1
    ys = sorted(float(v) for v in re.findall(r'y1="([\d.]+)" x2="[\d.]+" y2="([\d.]+)"', first)[0])
    assert abs(ys[0] - _y(0.9)) < 0.1 and abs(ys[1] - _y(0.5)) < 0.1  # the whisker spans the interval
    assert 'fill="#fff"' in second and "nothing delivered" in second  # no cost: a hollow point
    assert "<b>" not in svg and "http" not in svg and "<script" not in svg


def test_the_cost_axis_covers_the_highest_cost() -> None:
    svg = scatter_svg([Point("m", 0.5, 0.4, 0.6, 0.037)])
    ticks = [float(t) for t in re.findall(r">\$([\d.]+)</text>", svg)]
    assert ticks[0] == 0 and ticks[-1] >= 0.037 * 1.1 and ticks[-1] <= 0.1
    assert scatter_svg([]).startswith("<svg")  # no model: an empty frame
