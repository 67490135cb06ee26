"""The smoke record store (tier2.validators.reuse) on real files: what makes a key, what a record must match to be
reused, and that a failing, doubtful or tampered record is never reused. The browser side (the smoke really
skipped, really run again) is in tests/integration/test_validation_reuse.py."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from tier2.browser.session import SERVED_ORIGIN
from tier2.validators import reuse
from tier2.validators.pixels import pixel_stats
from tier2.validators.reuse import SmokeCache, smoke_key, smoke_passed, validator_version
from tier2.validators.smoke import SCREENSHOT, fold_smoke
from tier2.validators.trace import PlayTrace

URL = SERVED_ORIGIN + "dist/index.html"


def _png(colour: str = "#ff8800") -> bytes:
    img = Image.new("RGB", (80, 60), "#111111")
    ImageDraw.Draw(img).rectangle((10, 10, 50, 40), fill=colour, outline="#ffffff")
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


@pytest.fixture
def game(tmp_path: Path) -> Path:
    root = tmp_path / "game"
    (root / "dist").mkdir(parents=True)
    (root / "dist/index.html").write_text("<script src='bundle.js'></script>")
    (root / "dist/bundle.js").write_text("console.log('game v1');")
    (root / "assets").mkdir()
    (root / "assets/hero.png").write_bytes(_png())
    return root


def _served(root: Path) -> dict[str, Path | None]:
    return {"dist/index.html": root / "dist/index.html", "dist/bundle.js": root / "dist/bundle.js",
            "assets/hero.png": root / "assets/hero.png", "favicon.ico": None}


def _smoke(out: Path, *, errors: tuple[str, ...] = (), blocked: tuple[str, ...] = (), booted: bool = True,
           frames: tuple[int, int] = (6, 21), png: bytes | None = None, timed_out: str | None = None) -> PlayTrace:
    """A trace holding a smoke result exactly as `smoke_default_renderer` folds it."""
    out.mkdir(parents=True, exist_ok=True)
    data = png or _png()
    shot = out / SCREENSHOT
    shot.write_bytes(data)
    result = {"booted": booted, "renderer": "webgl", "frames": list(frames),
              "hash": hashlib.sha256(data).hexdigest()[:16], "pixels": pixel_stats(data, str(shot))}
    if timed_out:
        result["timed_out"] = timed_out
    trace = PlayTrace()
    fold_smoke(trace, result, list(errors), list(blocked))
    return trace


def _key(root: Path, **change: object) -> str | None:
    args: dict = {"url": URL, "roots": [root], "bundle_sha256": "b" * 64, "chromium": "140.0.1",
                  "browser_args": ["--a"], "pack_ref": "phaser@0.1.0", "boot_timeout_s": 15.0, "total_timeout_s": 20.0}
    args.update(change)
    return smoke_key(**args)


def test_every_input_of_the_observation_changes_the_key(game: Path) -> None:
    base = _key(game)
    assert base is not None and base == _key(game)
    variants = [_key(game, bundle_sha256="c" * 64), _key(game, chromium="141.0.0"), _key(game, pack_ref="phaser@0.2.0"),
                _key(game, validator="another validator"), _key(game, boot_timeout_s=5.0),
                _key(game, total_timeout_s=8.0), _key(game, browser_args=["--a", "--b"])]
    assert validator_version() != "another validator"
    (game / "dist/index.html").write_text("<script src='bundle.js?v=2'></script>")
    variants.append(_key(game))
    assert len({base, *variants}) == len(variants) + 1


def test_no_key_for_pages_nobody_here_serves(game: Path) -> None:
    assert _key(game, roots=[]) is None
    assert _key(game, url="http://127.0.0.1:8080/index.html") is None
    assert _key(game, url=SERVED_ORIGIN + "missing.html") is None


def test_a_passing_smoke_is_reused_with_its_screenshot(game: Path, tmp_path: Path) -> None:
    cache, key = SmokeCache(tmp_path / "cache"), _key(game)
    first = _smoke(tmp_path / "run1")
    assert cache.record(key, first, _served(game))
    again = PlayTrace(errors=["main session error"])
    record = cache.reuse(key, [game], tmp_path / "run2", again)
    assert record is not None and record["served"]["favicon.ico"] is None
    assert again.default_renderer == first.default_renderer
    assert again.errors == ["main session error"] and again.blocked == []
    assert again.screenshots == [str(tmp_path / "run2" / SCREENSHOT)]
    assert (tmp_path / "run2" / SCREENSHOT).read_bytes() == (tmp_path / "run1" / SCREENSHOT).read_bytes()
    p, q = again.pixels[0], first.pixels[0]
    assert (p.width, p.height, p.colors, p.non_background_fraction) == (q.width, q.height, q.colors,
                                                                       q.non_background_fraction)


@pytest.mark.parametrize("edit", ["bundle", "asset", "asset_removed", "missing_appears"])
def test_a_changed_served_file_is_a_miss(edit: str, game: Path, tmp_path: Path) -> None:
    cache, key = SmokeCache(tmp_path / "cache"), _key(game)
    assert cache.record(key, _smoke(tmp_path / "run1"), _served(game))
    if edit == "bundle":  # (the runner's key changes too; the record alone must still refuse it)
        (game / "dist/bundle.js").write_text("console.log('game v2');")
    elif edit == "asset":
        (game / "assets/hero.png").write_bytes(_png("#00ff00"))
    elif edit == "asset_removed":
        (game / "assets/hero.png").unlink()
    else:  # a path that answered 404 now answers with a file
        (game / "favicon.ico").write_bytes(b"icon")
    trace = PlayTrace()
    assert cache.reuse(key, [game], tmp_path / "run2", trace) is None
    assert trace == PlayTrace()  # a miss leaves the trace untouched
    assert not (tmp_path / "run2" / SCREENSHOT).exists()


@pytest.mark.parametrize("smoke", [
    {"errors": ("pageerror: boom",)}, {"blocked": ("https://fonts.example.com/a.css [stylesheet]",)},
    {"booted": False}, {"frames": (6, 6)}, {"timed_out": "the default-renderer session stopped answering"},
])
def test_only_a_smoke_that_found_nothing_wrong_is_recorded(smoke: dict, game: Path, tmp_path: Path) -> None:
    trace = _smoke(tmp_path / "run", **smoke)
    assert not smoke_passed(trace)
    assert not SmokeCache(tmp_path / "cache").record(_key(game), trace, _served(game))
    assert not (tmp_path / "cache" / "smoke").exists() or not list((tmp_path / "cache" / "smoke").iterdir())


def test_a_blank_smoke_screenshot_is_not_recorded(game: Path, tmp_path: Path) -> None:
    buf = io.BytesIO()
    Image.new("RGB", (80, 60), "#000000").save(buf, "PNG")
    trace = _smoke(tmp_path / "run", png=buf.getvalue())
    assert not smoke_passed(trace)
    assert not SmokeCache(tmp_path / "cache").record(_key(game), trace, _served(game))


@pytest.mark.parametrize("tamper", ["png", "json", "key", "result", "served_escape", "served_type", "format"])
def test_a_tampered_or_malformed_record_is_a_miss(tamper: str, game: Path, tmp_path: Path) -> None:
    cache, key = SmokeCache(tmp_path / "cache"), _key(game)
    assert cache.record(key, _smoke(tmp_path / "run1"), _served(game))
    path = cache.dir / f"{key}.json"
    record = json.loads(path.read_text())
    if tamper == "png":
        (cache.dir / f"{key}.png").write_bytes(_png("#0000ff"))
    elif tamper == "json":
        path.write_text(path.read_text()[:40])
    elif tamper == "key":
        record["key"] = "0" * 64
    elif tamper == "result":
        record["result"]["booted"] = "yes"
    elif tamper == "served_escape":  # a path outside the served folders never resolves: never matches a hash
        outside = tmp_path / "secret.txt"
        outside.write_text("x")
        record["served"]["../secret.txt"] = hashlib.sha256(b"x").hexdigest()
    elif tamper == "served_type":
        record["served"]["dist/bundle.js"] = 12
    else:
        record["format"] = 0
    if tamper not in ("png", "json"):
        path.write_text(json.dumps(record))
    assert cache.reuse(key, [game], tmp_path / "run2", PlayTrace()) is None


def test_old_records_are_pruned(game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reuse, "MAX_RECORDS", 2)
    cache = SmokeCache(tmp_path / "cache")
    keys = [_key(game, bundle_sha256=str(i) * 64) for i in range(4)]
    for i, key in enumerate(keys):
        assert cache.record(key, _smoke(tmp_path / f"run{i}"), _served(game))
        os.utime(cache.dir / f"{key}.json", (1000 + i, 1000 + i))
    assert sorted(p.name for p in cache.dir.iterdir()) == sorted(
        n for k in keys[2:] for n in (f"{k}.json", f"{k}.png"))
