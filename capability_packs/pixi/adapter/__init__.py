"""The PixiJS pack's engine adapter (`tier2.packs.engine`): what the core validators know of PixiJS, from here.

* ``l1.engine_calls``: every PixiJS name a game uses exists in the PixiJS it runs on, against an index of the
  installed package's own type declarations (`api`, `engine_calls`); a game nobody here wrote that ships another
  PixiJS version is not checked against this one (a warning says so).
* ``page.js``: the in-page introspection behind ``window.__tier2Engine`` (the Application and renderer PixiJS
  announces to its devtools hooks, its ticker, the stage's display tree, federated pointer targets, the empty
  texture); ``legibility.js``: the texts the stage draws, for the legibility gate.
* `detects`: PixiJS in a script (its devtools hook names or its banner).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from tier2.hostio import ProjectDir
from tier2.validators.base import ValidationResult

from .api import installed_version, load_pixi_api
from .engine_calls import check_engine_calls as _check

__all__ = ["check_engine_calls", "check_sources", "detects", "shipped_version"]

_EVIDENCE = re.compile(r"__PIXI_APP_INIT__|__PIXI_RENDERER_INIT__|PixiJS|pixi\.js - v\d")
_VERSION = re.compile(r"(?:PixiJS|pixi\.js)[^\n\"']{0,12}?v?(\d+\.\d+\.\d+)")


def detects(text: str) -> bool:
    """A script that contains PixiJS (its devtools hooks or its banner)."""
    return bool(_EVIDENCE.search(text))


def shipped_version(project: Path) -> str | None:
    """The PixiJS version a project ships: its package.json's pixi.js dependency (exact or ``^x.y.z``), else a
    version string next to the banner in a bundled script; None when neither says."""
    pdir = ProjectDir(project)  # a project's files never through a link (tier2.hostio)
    try:
        pkg = json.loads(pdir.read_text("package.json", max_bytes=1_000_000))
        spec = str({**pkg.get("devDependencies", {}), **pkg.get("dependencies", {})}.get("pixi.js", ""))
        m = re.search(r"(\d+\.\d+\.\d+)", spec)
        if m:
            return m.group(1)
    except (OSError, ValueError, AttributeError):
        pass
    for n, (_, text) in enumerate(pdir.text_files("", suffixes=(".js",), skip=frozenset({"node_modules", "src"}),
                                                  max_bytes=20_000_000)):
        if n >= 20:
            break
        if (m := _VERSION.search(text)) is not None:
            return m.group(1)
    return None


async def check_engine_calls(project: Path, src: dict[str, str], scan: dict[str, dict[str, Any]],
                             node_modules: Path, engines_dir: Path | None) -> ValidationResult:
    """``l1.engine_calls``; ``engines_dir`` set: a game nobody here wrote, checked only when it ships the pinned
    PixiJS. Raises `tier2.errors.ToolchainMissing` when pixi.js is not installed."""
    api = await asyncio.to_thread(load_pixi_api, Path(node_modules))
    shipped = await asyncio.to_thread(shipped_version, Path(project)) if engines_dir is not None else None
    other = shipped if shipped is not None and shipped != installed_version(Path(node_modules)) else None
    return _check(src, api, scan, shipped=other)


def check_sources(src: dict[str, str], scan: dict[str, dict[str, Any]], node_modules: Path) -> ValidationResult:
    """``l1.engine_calls`` against the pinned PixiJS (blocking: the index loads, cached)."""
    return _check(src, load_pixi_api(Path(node_modules)), scan)
