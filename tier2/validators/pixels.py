"""Pixel statistics of a screenshot (works for WebGL and Canvas alike: it reads the composited page)."""

from __future__ import annotations

import io
from collections import Counter

from PIL import Image

from tier2.validators.trace import PixelStats

__all__ = ["pixel_stats"]


def pixel_stats(png: bytes, path: str) -> PixelStats:
    img = Image.open(io.BytesIO(png)).convert("RGB")
    small = img.resize((min(img.width, 200), min(img.height, 150)))
    # quantise to 5 bits per channel so JPEG-like noise or anti-aliasing does not inflate the count
    raw = small.tobytes()
    quant = [(raw[i] >> 3, raw[i + 1] >> 3, raw[i + 2] >> 3) for i in range(0, len(raw), 3)]
    counts = Counter(quant)
    dominant = counts.most_common(1)[0][1] if counts else 0
    total = len(quant) or 1
    return PixelStats(
        width=img.width, height=img.height, colors=len(counts),
        non_background_fraction=round(1 - dominant / total, 4), path=path,
    )
