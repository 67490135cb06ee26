"""L3 visual score: a multimodal model grades screenshots on a rubric; without a configured model, an offline
heuristic over image statistics stands in and the result names it. The model call itself is made by an injected
`ModelScorer` (an AgentScope agent of the run, `tier2.runs.loop.addons.l3`): validators never call models directly.

Whatever happens here (a model error, a timeout, nonsense output) the result is data with ``layer="L3"``; the
runner records it in observe mode and it can never change the verdict.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import math
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agentscope.message import Base64Source, DataBlock, Msg, TextBlock, UserMsg
from PIL import Image, ImageFilter

from tier2.hostio import is_host_file, read_file
from tier2.prompts import render_prompt
from tier2.validators.base import Finding, ValidationResult

__all__ = ["GATE", "HEURISTIC_SCORER", "ModelScorer", "heuristic_score", "parse_answer", "score_visual",
           "scorer_message"]

#: ``(screenshots, brief) -> (answer text, "route (model that answered)")``: the run's scorer agent, built by
#: `tier2.runs.loop.addons.l3` on the same routing, onion and call ids as every other agent of the run.
ModelScorer = Callable[[list[Path], str], Awaitable[tuple[str, str]]]

GATE = "l3.visual_score"
HEURISTIC_SCORER = "heuristic-image-stats-v1"
_JSON = re.compile(r"\{.*\}", re.S)
#: screenshots are read under a project's .tier2 without following links (tier2.hostio), up to this size
MAX_SHOT_BYTES = 20_000_000


def _image_stats(path: Path) -> dict[str, float]:
    img = Image.open(io.BytesIO(read_file(path, max_bytes=MAX_SHOT_BYTES))).convert("RGB")
    small = img.resize((160, 120))
    raw = small.tobytes()
    pixels = [(raw[i] >> 4, raw[i + 1] >> 4, raw[i + 2] >> 4) for i in range(0, len(raw), 3)]
    counts = Counter(pixels)
    total = len(pixels)
    entropy = -sum(c / total * math.log2(c / total) for c in counts.values())
    edges = small.convert("L").filter(ImageFilter.FIND_EDGES).tobytes()
    edge_density = sum(1 for b in edges if b > 40) / len(edges)
    return {"colors": len(counts), "entropy": round(entropy, 3), "edge_density": round(edge_density, 4),
            "dominant_share": round(counts.most_common(1)[0][1] / total, 4)}


def heuristic_score(screenshots: list[Path]) -> dict[str, Any]:
    """Rubric from image statistics: structure (edges), colour variety (entropy), emptiness (dominant colour)."""
    stats = [_image_stats(p) for p in screenshots if is_host_file(p)]
    if not stats:
        return {"score": 0.0, "looks_finished": 0.0, "matches_brief": None, "degraded": True, "stats": []}
    best = max(stats, key=lambda s: s["entropy"])
    finished = min(1.0, best["entropy"] / 5.0) * 0.6 + min(1.0, best["edge_density"] / 0.08) * 0.4
    degraded = best["dominant_share"] > 0.97 or best["colors"] < 4
    score = round(finished * (0.3 if degraded else 1.0), 3)
    return {"score": score, "looks_finished": round(finished * 10, 1), "matches_brief": None, "degraded": degraded,
            "stats": stats}


def scorer_message(brief: str, screenshots: list[Path]) -> Msg:
    """The scorer's one user message: the rubric for ``brief`` and up to three screenshots."""
    content: list[TextBlock | DataBlock] = [TextBlock(text=render_prompt("l3_rubric", brief=brief))]
    for p in screenshots[:3]:
        data = base64.b64encode(read_file(p, max_bytes=MAX_SHOT_BYTES)).decode()  # never through a link
        content.append(DataBlock(source=Base64Source(data=data, media_type="image/png"), name=p.name))
    return UserMsg("validator", content)


def parse_answer(text: str) -> dict[str, Any]:
    """The rubric's JSON answer as a score; raises `ValueError` for anything else."""
    match = _JSON.search(text)
    if not match:
        raise ValueError(f"scorer answered without JSON: {text[:200]!r}")
    try:
        data = json.loads(match.group(0))
        finished, matches = float(data["looks_finished"]), float(data["matches_brief"])
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"scorer answer is not the rubric's JSON: {text[:200]!r}") from exc
    if not all(math.isfinite(v) and 0 <= v <= 10 for v in (finished, matches)):
        raise ValueError(f"scorer answer out of range: {text[:200]!r}")
    degraded = bool(data.get("degraded"))
    score = round(((finished + matches) / 20) * (0.3 if degraded else 1.0), 3)
    return {"score": score, "looks_finished": finished, "matches_brief": matches, "degraded": degraded,
            "notes": str(data.get("notes", ""))[:300]}


async def score_visual(screenshots: list[Path], brief: str, scorer: ModelScorer | None = None,
                       timeout_s: float = 30.0) -> ValidationResult:
    """The L3 result; never raises. ``scorer``: the run's model scorer (its route's fallbacks are its own
    business); on any failure or timeout the heuristic stands in and a finding says why."""
    started = time.monotonic()
    findings: list[Finding] = []
    scorer_name = HEURISTIC_SCORER
    result: dict[str, Any] | None = None
    if scorer is not None:
        try:
            text, answered_by = await asyncio.wait_for(scorer(screenshots, brief), timeout_s)
            result, scorer_name = parse_answer(text), answered_by
        except Exception as exc:  # noqa: BLE001 - L3 never fails a run: fall back and say so
            reason = f"timed out after {timeout_s:.0f} s" if isinstance(exc, TimeoutError) else \
                f"{type(exc).__name__}: {exc}"
            findings.append(Finding(message=f"model scorer failed ({reason}); heuristic used instead",
                                    severity="warning"))
    if result is None:
        try:
            result = heuristic_score(screenshots)
        except Exception as exc:  # noqa: BLE001
            result = {"score": None, "error": f"{type(exc).__name__}: {exc}"}
    score = result.get("score")
    summary = (f"visual score {score:.2f} by {scorer_name}" if isinstance(score, float)
               else f"no score ({scorer_name})")
    if result.get("degraded"):
        summary += "; looks degraded"
    return ValidationResult(id=GATE, layer="L3", mode="observe", passed=not result.get("degraded", False),
                            summary=summary, findings=findings,
                            evidence={"scorer": scorer_name, **result,
                                      "screenshots": [str(p) for p in screenshots]},
                            duration_ms=int((time.monotonic() - started) * 1000))
