"""What a validation may take over from an earlier one — only when nothing it depends on has changed.

`ValidationRunner` owns reuse: its final check takes over the writer's passing RunGame report made on the same
source snapshot (`ValidationRunner.finalize`), and it skips the default-renderer (WebGL) smoke session when a
*passing* smoke of the very same served files is recorded here (`SmokeCache`). The smoke is the costliest part of
a validation on a CPU-only machine (software WebGL), and the writer's RunGame, the final check and the tests
validate the same bundle again and again.

A smoke record is found by a key over everything the observation depends on (`smoke_key`): the page's URL, the
file it loads and the bundle's sha256, the Chromium version and flags, the pack, the validator's own code (a hash of
the modules that drive and judge the session, `validator_version`) and the time limits. The record lists every
path the session asked of the served folders with the sha256 of the file that answered (None for a 404), and is
reused only when each one still resolves to the same bytes (an asset changed beside an unchanged bundle is a miss)
and its screenshot is intact. Only a smoke that found nothing wrong is recorded (`smoke_passed`): a failing or
doubtful one always runs again. Records live under ``<cache_dir>/smoke/`` (`tier2.runs` puts ``cache_dir`` under
``<workspaces>/.cache/validation``, outside every project a writer can edit), are written atomically, and are read
as hostile input: anything malformed is a miss.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tier2
from tier2.browser.session import SERVED_ORIGIN, resolve_served, served_path
from tier2.hostio import read_file, write_file
from tier2.toolchain.esbuild import sha256_file
from tier2.validators.l1.runtime_gates import MIN_COLORS, MIN_NON_BACKGROUND
from tier2.validators.pixels import pixel_stats
from tier2.validators.smoke import SCREENSHOT, fold_smoke
from tier2.validators.trace import PlayTrace

__all__ = ["SmokeCache", "smoke_key", "smoke_passed", "validator_version", "FORMAT", "MAX_RECORDS"]

#: bumped when the record layout changes
FORMAT = 1
#: records kept (oldest dropped first)
MAX_RECORDS = 256
_PKG = Path(tier2.__file__).parent
#: the code that drives, observes and judges a smoke session: any change to it invalidates every record
_VALIDATOR_FILES = ("browser/pool.py", "browser/session.py", "browser/clock.js", "validators/smoke.py",
                    "validators/probing.py", "validators/pixels.py", "validators/reuse.py")
_RESULT_KEYS: dict[str, type | tuple[type, ...]] = {"booted": bool, "renderer": (str, type(None)), "frames": list,
                                                    "hash": str}


@functools.cache
def validator_version() -> str:
    h = hashlib.sha256(f"tier2 {tier2.__version__} smoke record {FORMAT}".encode())
    for rel in _VALIDATOR_FILES:
        h.update(rel.encode() + b"\0" + (_PKG / rel).read_bytes() + b"\0")
    return h.hexdigest()


def smoke_key(*, url: str, roots: Sequence[Path], bundle_sha256: str | None, chromium: str,
              browser_args: Sequence[str], pack_ref: str, boot_timeout_s: float, total_timeout_s: float,
              validator: str | None = None, engine_script: str = "") -> str | None:
    """The record key of a smoke of ``url`` served from ``roots``; None when it cannot be reused at all (a URL
    nobody here serves, a page missing from the folders). ``engine_script``: the engine adapter's in-page script
    (`tier2.packs.engine`), which reads the game in the session."""
    if not roots or not url.startswith(SERVED_ORIGIN):
        return None
    entry = resolve_served(list(roots), served_path(url))
    if entry is None:
        return None
    material = {"format": FORMAT, "validator": validator or validator_version(), "chromium": chromium,
                "browser_args": list(browser_args), "pack": pack_ref, "url": url, "entry": sha256_file(entry),
                "bundle": bundle_sha256, "timeouts": [boot_timeout_s, total_timeout_s],
                "engine": hashlib.sha256(engine_script.encode()).hexdigest()}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def smoke_passed(trace: PlayTrace) -> bool:
    """A smoke (folded into an otherwise empty ``trace``) that found nothing wrong: booted, its frames advanced, a
    screenshot with content, no error, no blocked request, no time-out."""
    d = trace.default_renderer or {}
    frames = d.get("frames") or [0, 0]
    pixels = trace.pixels[0] if trace.pixels else None
    return (d.get("booted") is True and "timed_out" not in d and not trace.errors and not trace.blocked
            and len(frames) == 2 and all(isinstance(f, int) for f in frames) and frames[1] > frames[0]
            and pixels is not None and pixels.path.endswith(SCREENSHOT) and pixels.colors >= MIN_COLORS
            and pixels.non_background_fraction >= MIN_NON_BACKGROUND and isinstance(d.get("hash"), str))


def _served_hashes(served: dict[str, Path | None]) -> dict[str, str | None]:
    return {rel: sha256_file(path) if path is not None else None for rel, path in sorted(served.items())}


class SmokeCache:
    """Passing default-renderer smokes on disk, by `smoke_key`."""

    def __init__(self, cache_dir: Path) -> None:
        self.dir = Path(cache_dir) / "smoke"

    def reuse(self, key: str, roots: Sequence[Path], out_dir: Path, trace: PlayTrace) -> dict[str, Any] | None:
        """Fold the recorded smoke into ``trace`` (its screenshot copied to ``out_dir``) and return the record,
        or return None (a miss: no record, a served file changed, anything malformed) leaving ``trace`` as it is."""
        try:
            record: dict[str, Any] = json.loads((self.dir / f"{key}.json").read_text())
            result = self._checked(record, key, roots)
            if result is None:
                return None
            png = (self.dir / f"{key}.png").read_bytes()
            if hashlib.sha256(png).hexdigest()[:16] != result["hash"]:
                return None
            shot = out_dir / SCREENSHOT
            write_file(shot, png)  # under a project's .tier2: no planted link followed
            result["pixels"] = pixel_stats(png, str(shot))
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None
        fold_smoke(trace, result, [], [])
        return record

    @staticmethod
    def _checked(record: Any, key: str, roots: Sequence[Path]) -> dict[str, Any] | None:
        if not isinstance(record, dict) or record.get("format") != FORMAT or record.get("key") != key:
            return None
        served, result = record.get("served"), record.get("result")
        if not isinstance(served, dict) or not served or not isinstance(result, dict):
            return None
        if set(result) != set(_RESULT_KEYS) or not all(isinstance(result[k], t) for k, t in _RESULT_KEYS.items()):
            return None
        for rel, digest in served.items():
            if not isinstance(rel, str) or not (digest is None or isinstance(digest, str)):
                return None
            path = resolve_served(list(roots), rel)
            if (sha256_file(path) if path is not None else None) != digest:
                return None
        return dict(result)

    def record(self, key: str, trace: PlayTrace, served: dict[str, Path | None]) -> bool:
        """Record a smoke (folded into an otherwise empty ``trace``) when it passed; True when recorded."""
        if not smoke_passed(trace) or not served:
            return False
        d = trace.default_renderer or {}
        record = {"format": FORMAT, "key": key, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "served": _served_hashes(served),
                  "result": {"booted": True, "renderer": d.get("renderer"), "frames": d["frames"], "hash": d["hash"]}}
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            _atomic_write(self.dir / f"{key}.png", read_file(trace.pixels[0].path))
            _atomic_write(self.dir / f"{key}.json", json.dumps(record, indent=1).encode())
            self._prune()
        except OSError:
            return False
        return True

    def _prune(self) -> None:
        records = sorted(self.dir.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in records[:max(0, len(records) - MAX_RECORDS)]:
            for path in (old, old.with_suffix(".png")):
                with contextlib.suppress(OSError):
                    path.unlink()


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
