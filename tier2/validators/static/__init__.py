"""Static L1 gates: checks of a project's sources that need no build and no browser.

* ``l1.engine_calls`` (enforce): every Phaser API the game calls exists in the installed Phaser (index derived from
  the package's own JSDoc JSON, cached under node_modules) — catches invented and removed APIs.
* ``l1.magic_numbers`` (observe, always passes): gameplay-looking numbers in ``src/`` that belong in ``data/``.

Both read the facts of one ``node capability_packs/phaser/tools/scan_sources.mjs`` run (acorn) over ``src/**/*.js``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tier2.validators.base import ValidationResult
from tier2.validators.static.engine_calls import check_engine_calls
from tier2.validators.static.magic_numbers import check_magic_numbers
from tier2.validators.static.phaser_api import PhaserApi, load_phaser_api
from tier2.validators.static.scan import SCAN_TIMEOUT_S, read_sources, scan_sources, scan_sources_async

__all__ = ["PhaserApi", "load_phaser_api", "read_sources", "scan_sources", "check_engine_calls",
           "check_magic_numbers", "run_static_gates"]


async def run_static_gates(
    project: Path, node_modules: Path, timeout_s: float = SCAN_TIMEOUT_S,
) -> list[ValidationResult]:
    """Run ``l1.engine_calls`` and ``l1.magic_numbers`` on ``project/src``.

    Raises `tier2.errors.ToolchainMissing` when node, the scanner, acorn or the phaser package is missing.
    """
    started = time.monotonic()
    src = read_sources(Path(project))
    api_task = asyncio.to_thread(load_phaser_api, Path(node_modules))  # index load overlaps the node run
    scan, api = await asyncio.gather(scan_sources_async(src, Path(node_modules), timeout_s), api_task)
    engine = check_engine_calls(src, api, scan=scan)
    magic = check_magic_numbers(src, scan=scan)
    scan_ms = int((time.monotonic() - started) * 1000) - engine.duration_ms - magic.duration_ms
    for r in (engine, magic):
        r.evidence["scan_ms"] = max(0, scan_ms)
    return [engine, magic]
