"""Boxes and colours for the legibility gate: intersections in screen pixels, alpha blending, WCAG 2 contrast."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Box", "RGB", "blend", "contrast_ratio", "hex_colour", "luminance"]

RGB = tuple[float, float, float]


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in the game canvas' pixels."""

    x: float
    y: float
    w: float
    h: float

    @classmethod
    def of(cls, raw: Sequence[float] | None) -> Box | None:
        if not raw or len(raw) != 4 or raw[2] < 0 or raw[3] < 0:
            return None
        return cls(*(float(v) for v in raw))

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h

    @property
    def area(self) -> float:
        return self.w * self.h

    @property
    def centre(self) -> tuple[float, float]:
        return self.x + self.w / 2, self.y + self.h / 2

    def intersect(self, other: Box) -> Box | None:
        x0, y0 = max(self.x, other.x), max(self.y, other.y)
        x1, y1 = min(self.right, other.right), min(self.bottom, other.bottom)
        return Box(x0, y0, x1 - x0, y1 - y0) if x1 > x0 and y1 > y0 else None

    def share_in(self, other: Box) -> float:
        """The share of this box's area that lies inside ``other`` (0..1)."""
        inter = self.intersect(other)
        return inter.area / self.area if inter and self.area > 0 else 0.0

    def inside(self, other: Box, tolerance: float = 0.0) -> bool:
        return (self.x >= other.x - tolerance and self.y >= other.y - tolerance
                and self.right <= other.right + tolerance and self.bottom <= other.bottom + tolerance)

    def overruns(self, other: Box, tolerance: float) -> list[str]:
        """The sides of ``other`` this box sticks out of by more than ``tolerance`` px."""
        sides = (("left", other.x - self.x), ("top", other.y - self.y),
                 ("right", self.right - other.right), ("bottom", self.bottom - other.bottom))
        return [f"{side} by {d:.0f} px" for side, d in sides if d > tolerance]

    def union(self, other: Box) -> Box:
        x0, y0 = min(self.x, other.x), min(self.y, other.y)
        return Box(x0, y0, max(self.right, other.right) - x0, max(self.bottom, other.bottom) - y0)

    def label(self) -> str:
        return f"(x={self.x:.0f} y={self.y:.0f} w={self.w:.0f} h={self.h:.0f})"

    def as_list(self) -> list[float]:
        return [round(self.x, 1), round(self.y, 1), round(self.w, 1), round(self.h, 1)]


def blend(top: RGB, alpha: float, bottom: RGB) -> RGB:
    """``top`` painted at ``alpha`` over ``bottom`` (source-over)."""
    a = min(1.0, max(0.0, alpha))
    return (top[0] * a + bottom[0] * (1 - a), top[1] * a + bottom[1] * (1 - a), top[2] * a + bottom[2] * (1 - a))


def luminance(c: RGB) -> float:
    """WCAG 2 relative luminance of an sRGB colour (channels 0..255)."""
    def lin(v: float) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2])


def contrast_ratio(a: RGB, b: RGB) -> float:
    """WCAG 2 contrast ratio, 1..21."""
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def hex_colour(c: RGB) -> str:
    return "#" + "".join(f"{round(min(255.0, max(0.0, v))):02x}" for v in c)
