"""Pixel statistics of a screenshot (works for WebGL and Canvas alike: it reads the composited page)."""

from __future__ import annotations

import io

from PIL import Image

from tier2.validators.trace import PixelStats

__all__ = ["pixel_stats"]


def pixel_stats(png: bytes, path: str) -> PixelStats:
    img = Image.open(io.BytesIO(png)).convert("RGB")
    small = img.resize((min(img.width, 200), min(img.height, 150)))
    # quantise to 5 bits per channel so JPEG-like noise or anti-aliasing does not inflate the count
    quant = small.point(lambda v: v >> 3)
    total = quant.width * quant.height
    counts = quant.getcolors(max(1, total)) or []  # [(count, colour)]: every colour, as total bounds them
    dominant = max((n for n, _ in counts), default=0)
    return PixelStats(
        width=img.width, height=img.height, colors=len(counts),
        non_background_fraction=round(1 - dominant / (total or 1), 4), path=path,
    )
