"""The offline asset generator: cost per asset and how different the placeholders of different descriptions are.

For each visual role, N descriptions (an entity word of each silhouette family and a hash-picked one, with an
adjective each) are generated; every pair of the same role is compared by silhouette (alpha mask at 32×32: share of
pixels that differ) and palette (mean colour distance). A pair counts as *distinct* when its silhouettes differ in
≥ 15 % of the pixels, or its mean colours by ≥ 20 (of 255), or its sizes differ. Prints one JSON line per role.

Usage: .venv/bin/python bench/assets.py [--n 40]
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PIL import Image  # noqa: E402

from tier2.design.asset_gen import SHAPES, generate  # noqa: E402

ADJ = ["angry", "tiny", "golden", "paper", "haunted", "frozen", "rusty", "royal", "sleepy", "neon"]
NOUNS = [cues[0] for cues in SHAPES.values()] + ["thing", "gizmo", "widget"]


def _features(png: bytes) -> tuple[list[bool], tuple[float, ...], tuple[int, int]]:
    img = Image.open(io.BytesIO(png)).convert("RGBA")
    mask = [a > 127 for a in img.resize((32, 32)).getchannel("A").tobytes()]
    raw = img.tobytes()
    px = [raw[i:i + 4] for i in range(0, len(raw), 4) if raw[i + 3] > 127] or [b"\0\0\0\0"]
    return mask, tuple(sum(p[i] for p in px) / len(px) for i in range(3)), img.size


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    args = ap.parse_args()
    descs = [f"{a} {n}" for a, n in itertools.product(ADJ, NOUNS)][:args.n]
    for role in ("player", "enemy", "pickup", "goods", "customer", "obstacle", "backdrop"):
        t0 = time.perf_counter()
        pngs = [generate(role, d) for d in descs]
        ms = (time.perf_counter() - t0) * 1000 / len(descs)
        same = all(generate(role, d) == p for d, p in zip(descs[:5], pngs[:5], strict=True))
        feats = [_features(p) for p in pngs]
        distinct = total = 0
        for (ma, ca, sa), (mb, cb, sb) in itertools.combinations(feats, 2):
            total += 1
            shape = sum(x != y for x, y in zip(ma, mb, strict=True)) / len(ma)
            colour = max(abs(x - y) for x, y in zip(ca, cb, strict=True))
            distinct += shape >= 0.15 or colour >= 20 or sa != sb
        print(json.dumps({"role": role, "descriptions": len(descs), "ms_per_asset": round(ms, 2),
                          "bytes_median": int(statistics.median(len(p) for p in pngs)),
                          "deterministic": same, "distinct_pairs": f"{distinct}/{total}",
                          "distinct_share": round(distinct / total, 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
