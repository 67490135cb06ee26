"""L3 visual score: a multimodal model (any OpenAI-compatible route) grades screenshots on a rubric; without a
configured model, an offline heuristic over image statistics stands in and the result names it.

Whatever happens here (a model error, a timeout, nonsense output) the result is data with ``layer="L3"``; the
runner records it in observe mode and it can never change the verdict.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import os
import re
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from PIL import Image, ImageFilter

from tier2.prompts import render_prompt
from tier2.settings.loader import ModelRoute
from tier2.store.spend import SpendGuard
from tier2.validators.base import Finding, ValidationResult

__all__ = ["GATE", "HEURISTIC_SCORER", "heuristic_score", "score_visual", "model_score"]

GATE = "l3.visual_score"
HEURISTIC_SCORER = "heuristic-image-stats-v1"
_JSON = re.compile(r"\{.*\}", re.S)


def _image_stats(path: Path) -> dict[str, float]:
    img = Image.open(path).convert("RGB")
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
    stats = [_image_stats(p) for p in screenshots if p.is_file()]
    if not stats:
        return {"score": 0.0, "looks_finished": 0.0, "matches_brief": None, "degraded": True, "stats": []}
    best = max(stats, key=lambda s: s["entropy"])
    finished = min(1.0, best["entropy"] / 5.0) * 0.6 + min(1.0, best["edge_density"] / 0.08) * 0.4
    degraded = best["dominant_share"] > 0.97 or best["colors"] < 4
    score = round(finished * (0.3 if degraded else 1.0), 3)
    return {"score": score, "looks_finished": round(finished * 10, 1), "matches_brief": None, "degraded": degraded,
            "stats": stats}


async def model_score(route_name: str, route: ModelRoute, screenshots: list[Path], brief: str,
                      timeout_s: float, guard: SpendGuard | None = None) -> dict[str, Any]:
    """Ask an OpenAI-compatible multimodal model; raises on any failure (the caller falls back). With the run's
    ``guard`` the call is reserved on, and reconciled with, the run's budget ledger like any agent's call."""
    from openai import AsyncOpenAI

    key = os.environ.get(route.api_key_env or "", "") if route.api_key_env else "not-needed"
    if route.api_key_env and not key:
        raise RuntimeError(f"${route.api_key_env} is not set")
    content: list[dict[str, Any]] = [{"type": "text", "text": render_prompt("l3_rubric", brief=brief)}]
    for p in screenshots[:3]:
        data = base64.b64encode(p.read_bytes()).decode()
        content.append({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}})
    client = AsyncOpenAI(api_key=key or "not-needed", base_url=route.base_url, timeout=timeout_s, max_retries=0)
    spend = await _reserve(guard, route, content)
    try:
        resp = await client.chat.completions.create(model=route.model, messages=[{"role": "user", "content": content}],
                                                    temperature=0, **({"max_tokens": spend[2]} if spend else {}))
    except BaseException:
        if spend:
            await spend[0].release(spend[1])
        raise
    finally:
        await client.close()
    if spend:
        used = resp.usage
        await spend[0].reconcile(spend[1], route.model, used.prompt_tokens if used else spend[3],
                                 used.completion_tokens if used else spend[2])
    text = resp.choices[0].message.content or ""
    match = _JSON.search(text)
    if not match:
        raise ValueError(f"scorer answered without JSON: {text[:200]!r}")
    data = json.loads(match.group(0))
    finished, matches = float(data["looks_finished"]), float(data["matches_brief"])
    degraded = bool(data.get("degraded"))
    score = round(((finished + matches) / 20) * (0.3 if degraded else 1.0), 3)
    return {"score": score, "looks_finished": finished, "matches_brief": matches, "degraded": degraded,
            "notes": str(data.get("notes", ""))[:300]}


async def _reserve(guard: SpendGuard | None, route: ModelRoute, content: list[dict[str, Any]],
                   ) -> tuple[SpendGuard, str, int, int] | None:
    """(guard, call id, max output, input estimate) once reserved; raises `RunLimitReached` when refused."""
    if guard is None:
        return None
    chars = sum(len(part.get("text", "")) for part in content)
    n_in = guard.estimate_input(chars, images=sum(1 for part in content if part["type"] == "image_url"))
    n_out, call_id = guard.limits.max_output_tokens, f"l3:{uuid.uuid4().hex[:16]}"
    await guard.reserve(call_id, route.model, n_in, n_out)
    return guard, call_id, n_out, n_in


async def score_visual(screenshots: list[Path], brief: str,
                       route: tuple[str, ModelRoute] | list[tuple[str, ModelRoute]] | None,
                       timeout_s: float = 30.0, guard: SpendGuard | None = None) -> ValidationResult:
    """The L3 result; never raises. ``route``: one route, or a route and its fallbacks (tried in order)."""
    started = time.monotonic()
    findings: list[Finding] = []
    scorer = HEURISTIC_SCORER
    result: dict[str, Any] | None = None
    chain = [r for r in ([route] if isinstance(route, tuple) else list(route or [])) if r[1].kind == "openai"]
    for i, (name, candidate) in enumerate(chain):
        try:
            result = await asyncio.wait_for(model_score(name, candidate, screenshots, brief, timeout_s, guard),
                                            timeout_s + 1)
            scorer = f"{name} ({candidate.model})"
            break
        except Exception as exc:  # noqa: BLE001 - L3 never fails a run: fall back and say so
            then = f"fallback {chain[i + 1][0]} tried next" if i + 1 < len(chain) else "heuristic used instead"
            findings.append(Finding(message=f"model scorer {name} failed ({type(exc).__name__}: {exc}); {then}",
                                    severity="warning"))
    if result is None:
        try:
            result = heuristic_score(screenshots)
        except Exception as exc:  # noqa: BLE001
            result = {"score": None, "error": f"{type(exc).__name__}: {exc}"}
    score = result.get("score")
    summary = (f"visual score {score:.2f} by {scorer}" if isinstance(score, float) else f"no score ({scorer})")
    if result.get("degraded"):
        summary += "; looks degraded"
    return ValidationResult(id=GATE, layer="L3", mode="observe", passed=not result.get("degraded", False),
                            summary=summary, findings=findings,
                            evidence={"scorer": scorer, **result,
                                      "screenshots": [str(p) for p in screenshots]},
                            duration_ms=int((time.monotonic() - started) * 1000))
