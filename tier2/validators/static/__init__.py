"""Static L1 gates: checks of a project's sources that need no build and no browser.

* ``l1.engine_calls`` (enforce): every Phaser API the game calls exists in the Phaser it runs on — the pack's pinned
  one for tier2's games, the one a game nobody here wrote ships (`engine_version`) — index derived from the
  package's own type data, cached — catches invented and removed APIs.
* ``l1.magic_numbers`` (observe, always passes): gameplay-looking numbers in ``src/`` that belong in ``data/``.

Both read the facts of one ``node capability_packs/phaser/tools/scan_sources.mjs`` run (acorn) over ``src/**/*.js``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tier2.validators.base import ValidationResult
from tier2.validators.static.engine_calls import check_engine_calls
from tier2.validators.static.engine_version import fetch_phaser_types, installed_version, shipped_phaser
from tier2.validators.static.magic_numbers import check_magic_numbers
from tier2.validators.static.phaser_api import PhaserApi, load_phaser_api
from tier2.validators.static.scan import SCAN_TIMEOUT_S, read_sources, scan_sources, scan_sources_async

__all__ = ["PhaserApi", "load_phaser_api", "read_sources", "scan_sources", "check_engine_calls",
           "check_magic_numbers", "run_static_gates"]


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


async def run_static_gates(
    project: Path, node_modules: Path, timeout_s: float = SCAN_TIMEOUT_S, engines_dir: Path | None = None,
) -> list[ValidationResult]:
    """Run ``l1.engine_calls`` and ``l1.magic_numbers`` on ``project/src``.

    ``engines_dir``: for a game nobody here wrote, where the type data of the Phaser it ships is cached
    (`engine_version`); the check then uses that version (None: the pack's pinned Phaser, tier2's own games).
    Raises `tier2.errors.ToolchainMissing` when node, the scanner, acorn or the phaser package is missing.
    """
    started = time.monotonic()
    src = read_sources(Path(project))
    api_modules, shipped, unverified = await _engine_modules(Path(project), Path(node_modules), engines_dir)
    api_task = asyncio.to_thread(load_phaser_api, api_modules)  # index load overlaps the node run
    scan, api = await asyncio.gather(scan_sources_async(src, Path(node_modules), timeout_s), api_task)
    engine = check_engine_calls(src, api, scan=scan, shipped=shipped, unverified=unverified)
    magic = check_magic_numbers(src, scan=scan)
    scan_ms = int((time.monotonic() - started) * 1000) - engine.duration_ms - magic.duration_ms
    for r in (engine, magic):
        r.evidence["scan_ms"] = max(0, scan_ms)
    return [engine, magic]
