"""The RequestAsset tool on a real project directory: offline (the generator) and with an ``images`` route against
the local fake OpenAI server (loopback), falling back to the generator when the route fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tier2.design.asset_gen import generate
from tier2.design.asset_pool import MANIFEST, read_manifest
from tier2.models.images import ImageRoute, image_route
from tier2.settings.loader import Policy
from tier2.testing.fake_openai import FakeOpenAIServer, Reply
from tier2.tools.assets import RequestAssetTool


def _chat(body: dict) -> Reply:
    return Reply(text="unused")


async def test_offline_request_registers_a_procedural_asset(tmp_path: Path) -> None:
    (tmp_path / "design").mkdir()
    (tmp_path / "design/spec.json").write_text(json.dumps({"requirements": [
        {"id": "R9", "predicate": {"kind": "asset_role", "role": "enemy", "asset": "enemy.angry_origami_birds"}},
        {"id": "R2", "predicate": {"kind": "asset_role", "role": "player", "asset": "player.paper_airplane"}},
        "not a requirement"]}))
    tool = RequestAssetTool(tmp_path)
    out = await tool.call(role="enemy", description="angry origami birds", requirements=["R6"])
    assert out.state.value == "success" and "enemy.angry_origami_birds" in out.content[0].text
    entry = read_manifest(tmp_path).entries[0]
    assert (entry.id, entry.source, entry.licence, entry.requirements) == (
        "enemy.angry_origami_birds", "procedural", "CC0-1.0", ("R6", "R9"))  # the spec's requirement recorded
    assert (tmp_path / entry.file).read_bytes() == generate("enemy", "angry origami birds")


@pytest.mark.parametrize("kwargs", [{"role": "hero", "description": "x"}, {"role": "player"},
                                    {"role": "player", "description": "a plane", "requirements": "R1"},
                                    {"role": "player", "description": "a plane", "file": "../../x"}])
async def test_bad_arguments_are_refused_and_nothing_is_written(tmp_path: Path, kwargs: dict) -> None:
    out = await RequestAssetTool(tmp_path).call(**kwargs)
    assert out.state.value == "error" and out.content[0].text.startswith("Refused")
    assert not (tmp_path / "assets").exists()


async def test_an_images_route_replaces_the_generator_and_a_failing_one_falls_back(tmp_path: Path) -> None:
    png = generate("pickup", "a model-made golden acorn")
    answers: list[bytes | Reply] = [png, Reply(status=500), b"not a png"]
    with FakeOpenAIServer(_chat, images=lambda body: answers.pop(0)) as srv:
        policy = Policy(models={"img": {"kind": "images", "model": "fake-image-1", "base_url": srv.base_url}},
                        agents={"assets": "img"})
        route = image_route(policy)
        assert isinstance(route, ImageRoute) and route.base_url.startswith("http://127.0.0.1:")
        tool = RequestAssetTool(tmp_path, route)
        out = await tool.call(role="player", description="a paper airplane")
        assert "model" in out.content[0].text
        assert srv.image_requests[0]["response_format"] == "b64_json"
        assert "a paper airplane" in srv.image_requests[0]["prompt"]
        assert (tmp_path / "assets/player.paper_airplane.png").read_bytes() == png
        for desc in ("a rubber duck", "a tin soldier"):
            out = await tool.call(role="enemy", description=desc)
            assert "the images route failed" in out.content[0].text and "offline generator" in out.content[0].text
    doc = json.loads((tmp_path / MANIFEST).read_text())
    assert [a["source"] for a in doc["assets"]] == ["model", "procedural", "procedural"]
    assert read_manifest(tmp_path).ids == {"player.paper_airplane", "enemy.rubber_duck", "enemy.tin_soldier"}


def test_an_images_route_serves_only_the_assets_role() -> None:
    routes = {"img": {"kind": "images", "model": "m"}, "off": {"kind": "offline", "model": "o"}}
    with pytest.raises(ValueError, match="an images route serves only the assets role"):
        Policy(models=routes, agents={"writer": "img"})
    assert image_route(Policy(models=routes, agents={"assets": "off"})) is None
    assert image_route(Policy(models=routes)) is None


def test_an_images_route_without_its_key_is_a_route_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from tier2.errors import ModelRouteError

    monkeypatch.delenv("TIER2_TEST_IMAGES_KEY", raising=False)
    policy = Policy(models={"img": {"kind": "images", "model": "m", "api_key_env": "TIER2_TEST_IMAGES_KEY"}},
                    agents={"assets": "img"})
    with pytest.raises(ModelRouteError, match="TIER2_TEST_IMAGES_KEY"):
        image_route(policy)
