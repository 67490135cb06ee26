"""The Phaser pack's engine adapter (`tier2.packs.engine`): what the core validators know of Phaser, from here.

* ``l1.engine_calls``: every Phaser API a game calls exists in the Phaser it runs on — the pinned one for tier2's
  games, the one a game nobody here wrote ships (`engine_version`) — against an index derived from the package's
  own type data (`api`, `dts`), cached; the checker itself is `engine_calls`.
* ``page.js``: generic mode's in-page introspection (the Phaser.Game, its loop, scenes, display lists, keyboard
  plugin keys, interactive objects, the missing-texture placeholder) behind ``window.__tier2Engine``;
  ``legibility.js``: the texts every rendered scene draws, for the legibility gate.
* `detects`: Phaser's banner or version constant in a script (generic mode's evidence).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from tier2.validators.base import ValidationResult

from .api import PhaserApi, load_phaser_api
from .engine_calls import check_engine_calls as _check
from .engine_version import fetch_phaser_types, installed_version, shipped_phaser

__all__ = ["check_engine_calls", "check_sources", "detects"]

_BANNER = re.compile(r"Phaser v|VERSION\s*:\s*[\"']3\.\d+\.\d+[\"']")


def detects(text: str) -> bool:
    """A script that already contains Phaser (its console banner or its version constant)."""
    return bool(_BANNER.search(text))


async def _engine_modules(project: Path, node_modules: Path,
                          engines_dir: Path | None) -> tuple[Path, tuple[str, str] | None, bool]:
    """(node_modules whose phaser to check against, the shipped (version, evidence), unverified?)."""
    if engines_dir is None:
        return node_modules, None, False
    shipped = await asyncio.to_thread(shipped_phaser, project)
    if shipped is None or shipped[0] == installed_version(node_modules):
        return node_modules, shipped, False
    fetched = await asyncio.to_thread(fetch_phaser_types, shipped[0], engines_dir)
    return (fetched, shipped, False) if fetched is not None else (node_modules, shipped, True)


async def check_engine_calls(project: Path, src: dict[str, str], scan: dict[str, dict[str, Any]],
                             node_modules: Path, engines_dir: Path | None) -> ValidationResult:
    """``l1.engine_calls``; ``engines_dir``: for a game nobody here wrote, where the type data of the Phaser it
    ships is cached (`engine_version`), and the check then uses that version (None: the pinned Phaser).
    Raises `tier2.errors.ToolchainMissing` when the phaser package is missing."""
    modules, shipped, unverified = await _engine_modules(Path(project), Path(node_modules), engines_dir)
    api = await asyncio.to_thread(load_phaser_api, modules)
    return _check(src, api, scan=scan, shipped=shipped, unverified=unverified)


def check_sources(src: dict[str, str], scan: dict[str, dict[str, Any]], node_modules: Path) -> ValidationResult:
    """``l1.engine_calls`` against the pinned Phaser (blocking: the index loads, cached)."""
    api: PhaserApi = load_phaser_api(node_modules)
    return _check(src, api, scan=scan)
