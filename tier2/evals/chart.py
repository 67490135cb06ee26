"""The report's chart: each model's pass rate (with its Wilson 95 % interval as a whisker) against its cost per
delivered game (p50), as inline SVG — no script, no external reference, every label HTML-escaped."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

__all__ = ["Point", "scatter_svg"]

W, H = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 20, 48
COLOURS = ["#2d6cdf", "#c0392b", "#1f8a4c", "#8e44ad", "#d35400", "#16a085", "#7f8c8d", "#b7950b"]


@dataclass(frozen=True)
class Point:
    label: str
    rate: float
    lo: float
    hi: float
    #: cost per delivered game p50 (USD); None: nothing delivered (drawn hollow at the left edge)
    cost: float | None


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    want = value * 1.1
    magnitude = 10.0 ** math.floor(math.log10(want))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= want)


def _x(cost: float, top: float) -> float:
    return LEFT + (W - LEFT - RIGHT) * cost / top


def _y(rate: float) -> float:
    return TOP + (H - TOP - BOTTOM) * (1.0 - rate)


def scatter_svg(points: list[Point]) -> str:
    top = _nice_max(max((p.cost for p in points if p.cost is not None), default=0.0))
    parts = [f'<svg width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
             'role="img" aria-label="pass rate against cost per delivered game" font-size="11" '
             'font-family="system-ui,sans-serif">',
             f'<rect x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}" fill="#fbfcfe" '
             'stroke="#c9cfdb"/>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(tick)
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" stroke="#e3e6ee"/>'
                     f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:.0%}</text>')
    for i in range(5):
        cost = top * i / 4
        x = _x(cost, top)
        parts.append(f'<line x1="{x:.1f}" y1="{H - BOTTOM}" x2="{x:.1f}" y2="{H - BOTTOM + 4}" stroke="#5b6475"/>'
                     f'<text x="{x:.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">${cost:.4g}</text>')
    parts.append(f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 8}" text-anchor="middle">cost per delivered game, '
                 'p50 (USD)</text>'
                 f'<text transform="translate(14 {(TOP + H - BOTTOM) / 2:.0f}) rotate(-90)" text-anchor="middle">'
                 'pass rate (Wilson 95 % interval)</text>')
    for i, p in enumerate(points):
        colour = COLOURS[i % len(COLOURS)]
        x = _x(p.cost, top) if p.cost is not None else LEFT
        label = escape(p.label)
        hollow = p.cost is None
        parts.append(f'<g class="point" data-model="{label}">'
                     f'<title>{label}: pass rate {p.rate:.1%} [{p.lo:.1%}, {p.hi:.1%}], cost per delivered '
                     f'{"n/a (nothing delivered)" if hollow else f"${p.cost:.4g}"}</title>'
                     f'<line x1="{x:.1f}" y1="{_y(p.lo):.1f}" x2="{x:.1f}" y2="{_y(p.hi):.1f}" stroke="{colour}" '
                     'stroke-width="2"/>'
                     f'<line x1="{x - 5:.1f}" y1="{_y(p.lo):.1f}" x2="{x + 5:.1f}" y2="{_y(p.lo):.1f}" '
                     f'stroke="{colour}" stroke-width="2"/>'
                     f'<line x1="{x - 5:.1f}" y1="{_y(p.hi):.1f}" x2="{x + 5:.1f}" y2="{_y(p.hi):.1f}" '
                     f'stroke="{colour}" stroke-width="2"/>'
                     f'<circle cx="{x:.1f}" cy="{_y(p.rate):.1f}" r="5" stroke="{colour}" stroke-width="2" '
                     f'fill="{"#fff" if hollow else colour}"/>'
                     f'<text x="{x + 9:.1f}" y="{_y(p.rate) - 7:.1f}" fill="{colour}">{label}</text></g>')
    parts.append("</svg>")
    return "".join(parts)
