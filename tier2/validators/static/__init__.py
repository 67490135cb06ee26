"""Static L1 gates: checks of a project's sources that need no build and no browser.

* ``l1.engine_calls`` (enforce): every engine API the game calls exists in the engine version it runs on — the
  pack's engine adapter owns the check and its data (`tier2.packs.engine`); core only runs it.
* ``l1.magic_numbers`` (observe, always passes): gameplay-looking numbers in ``src/`` that belong in ``data/``.

Both read the facts of one run of the acorn scanner (``scan_sources.mjs`` here, engine-neutral) over ``src/**/*.js``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import cast

from tier2.packs.engine import EngineAdapter
from tier2.validators.base import ValidationResult
from tier2.validators.static.magic_numbers import check_magic_numbers
from tier2.validators.static.scan import SCAN_TIMEOUT_S, read_sources, scan_sources, scan_sources_async

__all__ = ["read_sources", "scan_sources", "check_magic_numbers", "run_static_gates"]


async def run_static_gates(
    project: Path, adapter: EngineAdapter, timeout_s: float = SCAN_TIMEOUT_S, engines_dir: Path | None = None,
) -> list[ValidationResult]:
    """Run ``l1.engine_calls`` (the adapter's) and ``l1.magic_numbers`` on ``project/src``.

    ``engines_dir``: for a game nobody here wrote, where the adapter caches the type data of the engine version it
    ships (None: the pack's pinned engine, tier2's own games).
    Raises `tier2.errors.ToolchainMissing` when node, the scanner, acorn or the engine package is missing.
    """
    started = time.monotonic()
    src = read_sources(Path(project))
    scan = await scan_sources_async(src, adapter.node_modules, timeout_s)
    engine = cast(ValidationResult, await adapter.check_engine_calls(Path(project), src, scan, engines_dir))
    magic = check_magic_numbers(src, scan=scan)
    scan_ms = int((time.monotonic() - started) * 1000) - engine.duration_ms - magic.duration_ms
    for r in (engine, magic):
        r.evidence["scan_ms"] = max(0, scan_ms)
    return [engine, magic]
