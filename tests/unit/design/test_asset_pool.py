"""The asset pool: the offline generator (deterministic, different per description), the manifest read without
trust (hostile files, links, traversal, keys), registration limits, the L1 asset gate and the asset_role
predicate on hand-made traces, and the offline writer's asset requests."""

from __future__ import annotations

import hashlib
import io
import json
import os
import wave
from pathlib import Path

import pytest
from PIL import Image

from tier2.design.asset_gen import generate, shape_of
from tier2.design.asset_pool import (
    MANIFEST,
    MAX_ASSET_BYTES,
    MAX_ASSETS,
    AssetRefused,
    check_request,
    name_of,
    publish_assets,
    read_manifest,
    register_asset,
)
from tier2.design.assets import ASSET_KEY, asset_key
from tier2.models.offline.policy import asset_requests
from tier2.validators.l1.assets import asset_gate
from tier2.validators.l2.conformance import _judge
from tier2.validators.trace import PlayTrace


def _mask(png: bytes, size: int = 32) -> list[bool]:
    img = Image.open(io.BytesIO(png)).convert("RGBA").resize((size, size))
    return [a > 127 for a in img.getchannel("A").tobytes()]


def _mean_rgb(png: bytes) -> tuple[float, float, float]:
    img = Image.open(io.BytesIO(png)).convert("RGBA")
    raw = img.tobytes()
    px = [raw[i:i + 4] for i in range(0, len(raw), 4) if raw[i + 3] > 127]
    return tuple(sum(p[i] for p in px) / len(px) for i in range(3))  # type: ignore[return-value]


def test_the_generator_is_deterministic_and_differs_per_description_in_silhouette_and_palette() -> None:
    plane, birds = generate("player", "paper airplane"), generate("enemy", "angry origami birds")
    assert plane == generate("player", "paper airplane") and plane.startswith(b"\x89PNG")
    assert shape_of("player", "paper airplane") == "dart" and shape_of("enemy", "angry origami birds") == "wings"
    a, b = _mask(plane), _mask(birds)
    assert sum(x != y for x, y in zip(a, b, strict=True)) > 0.15 * len(a)  # a different silhouette, not just bytes
    # same shape family, other words: other colours or size
    crane, crow = generate("enemy", "origami crane"), generate("enemy", "black crow")
    assert shape_of("enemy", "origami crane") == shape_of("enemy", "black crow") == "wings"
    ca, cb = _mean_rgb(crane), _mean_rgb(crow)
    size_a, size_b = Image.open(io.BytesIO(crane)).size, Image.open(io.BytesIO(crow)).size
    assert size_a != size_b or max(abs(x - y) for x, y in zip(ca, cb, strict=True)) > 20
    city, forest = generate("backdrop", "a city"), generate("backdrop", "a haunted forest")
    assert Image.open(io.BytesIO(city)).size == (400, 300)
    ia = Image.open(io.BytesIO(city)).convert("L").resize((40, 30))
    ib = Image.open(io.BytesIO(forest)).convert("L").resize((40, 30))
    assert sum(abs(x - y) > 24 for x, y in zip(ia.tobytes(), ib.tobytes(), strict=True)) > 120


def test_the_sound_is_a_short_wav_that_differs_per_description() -> None:
    one, two = generate("sound", "fireball cast"), generate("sound", "coin pickup")
    assert one == generate("sound", "fireball cast") and one != two
    with wave.open(io.BytesIO(one)) as w:
        assert (w.getnchannels(), w.getsampwidth()) == (1, 2) and 0.1 < w.getnframes() / w.getframerate() < 0.6


def test_the_id_comes_from_the_description_name() -> None:
    assert name_of("a paper airplane, folded from notebook paper") == "paper airplane"
    assert name_of("  The angry origami birds with sharp beaks") == "angry origami birds"
    assert name_of("纸飞机，白色") == "纸飞机" and ASSET_KEY.match(asset_key("player", name_of("纸飞机，白色")))


@pytest.mark.parametrize(("args", "message"), [
    (("hero", "a knight"), "role must be one of"),
    (("player", ""), "description is empty"),
    (("player", 5), "description must be a string"),
    (("player", "x" * 201), "over the limit"),
    (("player", "a\x00b"), "control characters"),
    (("player", "a plane", "R1"), "must be a list"),
    (("player", "a plane", ["R1", "../x"]), "not of the form"),
    (("player", "a plane", [f"R{i}" for i in range(30)]), "at most"),
])
def test_request_arguments_are_checked(args: tuple, message: str) -> None:
    with pytest.raises(AssetRefused, match=message):
        check_request(*args)


def _register(root: Path, role: str = "player", desc: str = "a paper airplane") -> str:
    entry, _ = register_asset(root, role, desc, ["R5"], generate(role, desc), "procedural", "CC0-1.0")
    return entry.id


def test_register_writes_the_file_and_the_manifest_and_reading_verifies_them(tmp_path: Path) -> None:
    assert not read_manifest(tmp_path).present and asset_gate(tmp_path, None).passed  # nothing registered
    aid = _register(tmp_path)
    assert aid == "player.paper_airplane"
    doc = json.loads((tmp_path / MANIFEST).read_text())
    entry = doc["assets"][0]
    assert entry == {"id": aid, "description": "a paper airplane", "role": "player", "requirements": ["R5"],
                     "source": "procedural", "licence": "CC0-1.0", "file": "assets/player.paper_airplane.png",
                     "sha256": hashlib.sha256((tmp_path / entry["file"]).read_bytes()).hexdigest()}
    assert _register(tmp_path) == aid and len(json.loads((tmp_path / MANIFEST).read_text())["assets"]) == 1
    got = read_manifest(tmp_path)
    assert got.present and got.ids == {aid} and not got.problems
    assert publish_assets(tmp_path) == [] and (tmp_path / "dist/assets/player.paper_airplane.png").is_file()


def _hostile(root: Path, **change: object) -> list[str]:
    aid = _register(root)
    doc = json.loads((root / MANIFEST).read_text())
    doc["assets"][0].update(change)
    (root / MANIFEST).write_text(json.dumps(doc))
    got = read_manifest(root)
    assert aid not in got.ids
    return got.problems


def test_a_changed_or_missing_file_does_not_verify(tmp_path: Path) -> None:
    aid = _register(tmp_path)
    (tmp_path / "assets" / f"{aid}.png").write_bytes(generate("player", "a rubber duck"))
    assert "does not match its sha256" in read_manifest(tmp_path).problems[0]
    assert not publish_assets(tmp_path) == [] and not (tmp_path / "dist/assets" / f"{aid}.png").exists()
    (tmp_path / "assets" / f"{aid}.png").unlink()
    assert "missing" in read_manifest(tmp_path).problems[0]


@pytest.mark.parametrize(("change", "message"), [
    ({"file": "../../etc/passwd"}, "is not assets/player.paper_airplane.png"),
    ({"file": "assets/../data/theme.json"}, "is not assets/"),
    ({"id": "Player..x"}, "is not an asset key"),
    ({"id": "enemy.paper_airplane"}, "role part is not its role"),
    ({"id": "player.rubber_duck"}, "is not the asset key of its role and description"),
    ({"sha256": "00"}, "64 hex"),
    ({"source": "internet"}, "source"),
    ({"requirements": ["x"]}, "requirement ids"),
    ({"extra": 1}, "unknown extra"),
])
def test_a_hostile_manifest_entry_is_never_used(tmp_path: Path, change: dict, message: str) -> None:
    assert any(message in p for p in _hostile(tmp_path, **change))


def test_a_symlinked_or_oversized_manifest_or_asset_is_refused(tmp_path: Path) -> None:
    aid = _register(tmp_path)
    real = tmp_path / "elsewhere.json"
    (tmp_path / MANIFEST).rename(real)
    os.symlink(real, tmp_path / MANIFEST)
    got = read_manifest(tmp_path)
    assert got.present and not got.entries and "symbolic link" in got.problems[0]
    (tmp_path / MANIFEST).unlink()
    real.rename(tmp_path / MANIFEST)
    png = tmp_path / "assets" / f"{aid}.png"
    target = tmp_path / "secret.png"
    png.rename(target)
    os.symlink(target, png)
    assert "symbolic link" in read_manifest(tmp_path).problems[0]
    png.unlink()
    big = generate("player", "a paper airplane") + b"\0" * (MAX_ASSET_BYTES + 1)
    png.write_bytes(big)
    assert "over the limit" in read_manifest(tmp_path).problems[0]
    (tmp_path / MANIFEST).write_bytes(b"{" * 300_000)
    assert "over the limit" in read_manifest(tmp_path).problems[0]


def test_registration_limits_hold(tmp_path: Path) -> None:
    with pytest.raises(AssetRefused, match="not a PNG"):
        register_asset(tmp_path, "player", "a plane", [], b"GIF89a", "procedural", "CC0-1.0")
    with pytest.raises(AssetRefused, match="over the limit"):
        register_asset(tmp_path, "player", "a plane", [], b"\x89PNG\r\n\x1a\n" + b"\0" * MAX_ASSET_BYTES,
                       "procedural", "CC0-1.0")
    for i in range(MAX_ASSETS):
        _register(tmp_path, "pickup", f"coin number {chr(97 + i % 26)}{i}")
    with pytest.raises(AssetRefused, match="limit is"):
        _register(tmp_path, "pickup", "one coin too many")
    os.symlink("/tmp", tmp_path / "linked")
    (tmp_path / "assets").rename(tmp_path / "assets-real")
    os.symlink(tmp_path / "assets-real", tmp_path / "assets")
    with pytest.raises(OSError):
        _register(tmp_path, "player", "a paper airplane")  # never written through a planted link


def _trace(roles: dict, loaded: list[str], failed: list[str] | None = None) -> PlayTrace:
    return PlayTrace(booted=True, loaded=True, assets={"registered": loaded, "loaded": loaded, "failed": failed or [],
                                                       "roles": roles})


def test_the_asset_gate_on_hand_made_traces(tmp_path: Path) -> None:
    aid = _register(tmp_path)
    assert asset_gate(tmp_path, _trace({}, [aid])).passed
    assert "failed to load" in asset_gate(tmp_path, _trace({}, [aid], [aid])).findings[0].message
    assert "not loaded by the game" in asset_gate(tmp_path, _trace({}, [])).findings[0].message
    assert "reports no assets" in asset_gate(tmp_path, PlayTrace(booted=True)).findings[0].message
    (tmp_path / "src").mkdir()
    (tmp_path / "src/Play.js").write_text("this.add.image(0, 0, 'enemy.ghost'); load('data/player.json');\n")
    msgs = [f.message for f in asset_gate(tmp_path, _trace({}, [aid])).findings]
    assert msgs == ["src/Play.js names asset key 'enemy.ghost', which is not registered in assets/manifest.json"]


def test_the_asset_role_predicate_passes_only_on_what_was_seen() -> None:
    pred = {"kind": "asset_role", "role": "player", "asset": "player.paper_airplane"}
    seen = _trace({"player": {"player.paper_airplane": ["02-play"]}}, ["player.paper_airplane"])
    ok, why, _ = _judge(pred, seen, {}, {}, {}, {"player.paper_airplane"})
    assert ok and "02-play" in why
    ok, why, _ = _judge(pred, _trace({"player": {"ship": ["02-play"]}}, []), {}, {}, {}, {"player.paper_airplane"})
    assert not ok and "drawn with ship (02-play), not the registered asset" in why
    ok, why, _ = _judge(pred, seen, {}, {}, {}, set())
    assert not ok and "not registered" in why
    ok, why, _ = _judge(pred, PlayTrace(booted=True), {}, {}, {}, {"player.paper_airplane"})
    assert not ok and "reports no assets" in why
    ok, why, _ = _judge(pred, _trace({}, []), {}, {}, {}, {"player.paper_airplane"})
    assert not ok and "no display object was reported for role player" in why


def test_the_offline_writer_requests_the_assets_the_spec_names() -> None:
    brief = "a vertical shmup where a paper airplane shoots down angry origami birds over a city"
    spec = {"brief": brief, "requirements": [
        {"id": "R5", "text": "the player is a paper airplane",
         "predicate": {"kind": "asset_role", "role": "player", "asset": "player.paper_airplane"}},
        {"id": "R6", "text": "the enemies are angry origami birds", "span": [44, 63],
         "predicate": {"kind": "asset_role", "role": "enemy", "asset": "enemy.angry_origami_birds"}},
        {"id": "R7", "text": "纸飞机", "predicate": {"kind": "asset_role", "role": "player",
                                                  "asset": asset_key("player", "纸飞机")}},
        {"id": "R8", "text": "?", "predicate": {"kind": "asset_role", "role": "enemy", "asset": "enemy.u00000000"}},
        {"id": "R1", "text": "the player shoots", "predicate": {"kind": "key_action", "key": "Space",
                                                               "action": "fire"}},
    ]}
    calls = asset_requests(json.dumps(spec))
    assert asset_requests(json.dumps(spec, indent=2, ensure_ascii=False)) == calls  # pretty or compact, grepped
    assert calls == [{"role": "player", "description": "paper airplane", "requirements": ["R5"]},
                     {"role": "enemy", "description": "angry origami birds", "requirements": ["R6"]},
                     {"role": "player", "description": "纸飞机", "requirements": ["R7"]}]  # R8: no name gives its key


def test_a_digest_key_is_found_in_the_part_of_the_text_that_names_the_entity() -> None:
    """The offline leader labels entity requirements (``goods: 面包``, ``面包店 backdrop``): the name inside the
    label gives the digest key back; a text none of whose parts gives it is still left out."""
    spec = {"requirements": [
        {"id": "R14", "text": "goods: 面包", "predicate": {"kind": "asset_role", "role": "goods",
                                                         "asset": asset_key("goods", "面包")}},
        {"id": "R12", "text": "面包店 backdrop", "predicate": {"kind": "asset_role", "role": "backdrop",
                                                            "asset": asset_key("backdrop", "面包店")}},
        {"id": "R17", "text": "customers：顾客", "predicate": {"kind": "asset_role", "role": "customer",
                                                           "asset": asset_key("customer", "顾客")}},
        {"id": "R18", "text": "goods: 蛋糕", "predicate": {"kind": "asset_role", "role": "goods",
                                                         "asset": asset_key("goods", "面包")}},
    ]}
    assert asset_requests(json.dumps(spec, ensure_ascii=False)) == [
        {"role": "goods", "description": "面包", "requirements": ["R14"]},
        {"role": "backdrop", "description": "面包店", "requirements": ["R12"]},
        {"role": "customer", "description": "顾客", "requirements": ["R17"]}]  # R18's text names another good


def test_the_offline_writer_greps_the_spec_keys_then_requests() -> None:
    from tier2.models.offline.history import Conversation, ToolStep
    from tier2.models.offline.policy import _assets_first

    spec = "/p/design/spec.json"
    params = {"tools": ["Grep", "RequestAsset"]}

    def conv(*steps: ToolStep) -> Conversation:
        return Conversation(system="", brief="b", project="/p", steps=list(steps),
                            last_user="The design is in design/spec.json", chars=0)

    first = _assets_first(conv(), params)
    assert first is not None and first.calls[0][0] == "Grep" and '"asset"' in first.calls[0][1]["pattern"]
    assert _assets_first(conv(), {"tools": ["Grep"]}) is None  # no RequestAsset tool: nothing asked
    none = ToolStep("1", "Grep", {"path": spec}, "No matches found for pattern: x", "success")
    assert _assets_first(conv(none), params) is None  # a spec without asset_role: on to the writes
    keys = ToolStep("1", "Grep", {"path": spec}, f'{spec}:9:  "asset": "player.paper_plane"', "success")
    asked = _assets_first(conv(keys), params)
    assert asked is not None and asked.calls == [("RequestAsset", {"role": "player", "description": "paper plane"})]
    done = ToolStep("3", "RequestAsset", asked.calls[0][1], "Registered", "success")
    assert _assets_first(conv(keys, done), params) is None  # once
    key = asset_key("player", "纸飞机")
    digest = ToolStep("1", "Grep", {"path": spec}, f'{spec}:9:  "asset": "{key}"', "success")
    texts = _assets_first(conv(digest), params)  # a digest key: only the requirement's text names it
    assert texts is not None and '"(?:id|text|asset)"' in texts.calls[0][1]["pattern"]
    with_text = ToolStep("2", "Grep", {"path": spec}, f'{spec}:3:  "id": "R5",\n{spec}:4:  "text": "纸飞机",\n'
                         f'{spec}:9:  "asset": "{key}"', "success")
    last = _assets_first(conv(digest, with_text), params)
    assert last is not None and last.calls == [
        ("RequestAsset", {"role": "player", "description": "纸飞机", "requirements": ["R5"]})]


def test_the_build_never_publishes_through_a_planted_link(tmp_path: Path) -> None:
    from tier2.hostio import UnsafePath

    _register(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    os.symlink(outside, tmp_path / "dist")
    with pytest.raises(UnsafePath):
        publish_assets(tmp_path)
    assert list(outside.iterdir()) == []
