"""L3 never blocks: model scorer success, failure and timeout; the offline heuristic names itself."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from tier2.runs.loop.addons.l3 import l3_scorer
from tier2.settings.loader import ModelRoute, Policy
from tier2.testing import FakeOpenAIServer, Reply
from tier2.validators.base import ValidationResult
from tier2.validators.l3 import HEURISTIC_SCORER, score_visual
from tier2.validators.runner import apply_policy


def _game_like(path: Path) -> Path:
    img = Image.new("RGB", (400, 300), (30, 20, 60))
    d = ImageDraw.Draw(img)
    for i in range(12):
        box = [20 + i * 30, 40 + (i % 3) * 20, 40 + i * 30, 110 + (i % 4) * 40]
        d.rectangle(box, fill=(40 + i * 17, 200 - i * 9, 90))
        d.text((20 + i * 30, 250), f"{i}g", fill=(255, 255, 255))
    img.save(path)
    return path


def _blank(path: Path) -> Path:
    Image.new("RGB", (400, 300), (0, 0, 0)).save(path)
    return path


def _scorer(url: str, fallback_url: str | None = None):
    """The scorer a run builds (`tier2.runs.loop.addons.l3`) for an ``l3_scorer`` route at ``url`` (+ a fallback)."""
    models = {"vision": ModelRoute(kind="openai", model="fake-vision", base_url=url, max_retries=0,
                                   fallback="backup" if fallback_url else None)}
    if fallback_url:
        models["backup"] = ModelRoute(kind="openai", model="backup-vision", base_url=fallback_url, max_retries=0)
    return l3_scorer(Policy(models=models, l3_scorer="vision", l3_timeout_s=5))


async def test_offline_heuristic_names_itself_and_flags_blank_screens(tmp_path: Path) -> None:
    good = await score_visual([_game_like(tmp_path / "a.png")], "a shop", None)
    assert good.layer == "L3" and good.evidence["scorer"] == HEURISTIC_SCORER and not good.evidence["degraded"]
    assert good.evidence["score"] > 0.4
    blank = await score_visual([_blank(tmp_path / "b.png")], "a shop", None)
    assert blank.evidence["degraded"] and blank.evidence["score"] < good.evidence["score"]


async def test_model_scorer_reads_the_rubric_answer(tmp_path: Path) -> None:
    answer = {"looks_finished": 8, "matches_brief": 6, "degraded": False, "notes": "tidy shop screen"}
    with FakeOpenAIServer(lambda body: Reply(text="Here: " + json.dumps(answer))) as srv:
        result = await score_visual([_game_like(tmp_path / "a.png")], "a potion shop", _scorer(srv.base_url))
        sent = next(m for m in srv.requests[0]["messages"] if m["role"] == "user")["content"]
    assert result.evidence["scorer"] == "vision (fake-vision)" and result.evidence["score"] == 0.7
    assert any(part.get("type") == "image_url" for part in sent) and "a potion shop" in sent[0]["text"]


@pytest.mark.parametrize("failure", ["dead", "garbage", "slow"])
async def test_scorer_failure_or_timeout_falls_back_and_never_blocks(failure: str, tmp_path: Path) -> None:
    shot = _game_like(tmp_path / "a.png")
    if failure == "dead":
        result = await score_visual([shot], "x", _scorer("http://127.0.0.1:9/v1"), timeout_s=2)
    else:
        release = threading.Event()

        def responder(body: dict) -> Reply:
            if failure == "slow":
                release.wait(30)  # answers only after the scorer gave up (its timeout is 1 s)
            return Reply(text="I like it!")
        try:
            with FakeOpenAIServer(responder) as srv:
                result = await score_visual([shot], "x", _scorer(srv.base_url), timeout_s=1)
                release.set()
        finally:
            release.set()
    assert result.evidence["scorer"] == HEURISTIC_SCORER
    assert "failed" in result.findings[0].message
    assert not apply_policy(result, Policy()).blocking


async def test_the_route_fallback_answers_when_the_primary_is_down(tmp_path: Path) -> None:
    answer = {"looks_finished": 6, "matches_brief": 6, "degraded": False}
    with FakeOpenAIServer(lambda body: Reply(text=json.dumps(answer))) as backup:
        result = await score_visual([_game_like(tmp_path / "a.png")], "x",
                                    _scorer("http://127.0.0.1:9/v1", backup.base_url), timeout_s=10)
    assert result.evidence["scorer"] == "vision (backup-vision)" and result.evidence["score"] == 0.6


def test_no_image_capable_route_means_the_heuristic() -> None:
    assert l3_scorer(Policy()) is None
    offline = {"off": ModelRoute(kind="offline", model="offline-policy")}
    assert l3_scorer(Policy(models=offline, l3_scorer="off")) is None


def test_l3_never_blocks_even_when_it_fails() -> None:
    failed = ValidationResult(id="l3.visual_score", layer="L3", passed=False, summary="looks degraded")
    assert not apply_policy(failed, Policy(gates={"l3.visual_score": "enforce"})).blocking
