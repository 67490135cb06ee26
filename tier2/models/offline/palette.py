"""Palettes of the offline theme model: dark background and panel, near-white text, a complementary accent —
every colour drawn as text readable where the template draws it (WCAG 2 contrast, the ``l1.legible`` gate)."""

from __future__ import annotations

import colorsys
import random

__all__ = ["MIN_TEXT_CONTRAST", "contrast", "hsl", "palette"]

#: WCAG 2 contrast every palette colour drawn as text keeps against the background and the panel (``l1.legible``)
MIN_TEXT_CONTRAST = 4.6


def contrast(a: str, b: str) -> float:
    def lum(colour: str) -> float:
        c = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        c = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    dark, light = sorted((lum(a), lum(b)))
    return (light + 0.05) / (dark + 0.05)


def palette(hue: int, rng: random.Random) -> dict[str, str]:
    """Dark background and panel in the domain hue, near-white text, a complementary accent. Text colours too dark
    to read on the background (and the accent, which titles panels, on the panel) are lightened until they are."""
    bg = (hue, rng.uniform(0.3, 0.45), rng.uniform(0.09, 0.13))
    panel = (hue, rng.uniform(0.25, 0.4), rng.uniform(0.2, 0.25))
    inks = {"accent": (hue + rng.randint(140, 220), rng.uniform(0.65, 0.8), rng.uniform(0.58, 0.66)),
            "text": (hue, rng.uniform(0.3, 0.45), rng.uniform(0.92, 0.95)),
            "good": (rng.randint(105, 135), 0.5, 0.6), "bad": (rng.randint(-8, 8), 0.65, 0.62)}
    pal = {"background": hsl(*bg), "panel": hsl(*panel)}
    for key, (h, sat, light) in inks.items():
        under = ("background", "panel") if key == "accent" else ("background",)
        while light < 0.96 and min(contrast(hsl(h, sat, light), pal[k]) for k in under) < MIN_TEXT_CONTRAST:
            light += 0.02
        pal[key] = hsl(h, sat, light)
    return pal


def hsl(hue: float, sat: float, light: float) -> str:
    """``#rrggbb`` of a hue in degrees, saturation and lightness in 0..1."""
    r, g, b = colorsys.hls_to_rgb((hue % 360) / 360, light, sat)
    return "#" + "".join(f"{round(c * 255):02x}" for c in (r, g, b))
