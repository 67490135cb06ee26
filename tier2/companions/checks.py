"""The reviewer's deterministic checks of a project (what the offline reviewer runs, and what a model reviewer may
run through the ``Checks`` tool): problems the gates report late or not at all, located by file and line.

* ``data.parse`` — a ``data/*.json`` table that does not parse;
* ``data.key_missing`` — a data key the code reads (``tables.economy.start_money``) that its table lacks;
* ``scene.unregistered`` — a scene key started (``this.scene.start('Upgrades')``, ``this.game.start('Upgrades')``)
  that no scene registers;
* ``module.unimported`` — a ``src/`` module nothing imports (written, but it never runs);
* ``js.syntax`` and ``l1.engine_calls`` — from the validators' static scanner (`tier2.validators.static`): a file
  acorn cannot parse, an engine API that does not exist (the pack's engine adapter). Without node/acorn these two
  are skipped with a note.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tier2.companions.findings import Finding
from tier2.companions.index import ProjectIndex
from tier2.errors import ToolchainMissing
from tier2.packs.engine import EngineAdapter
from tier2.validators.base import ValidationResult
from tier2.validators.static import read_sources
from tier2.validators.static.scan import scan_sources_async

__all__ = ["run_checks", "index_checks", "MAX_PER_RULE"]

MAX_PER_RULE = 8


def index_checks(idx: ProjectIndex) -> list[Finding]:
    """The checks that need only the index (no node)."""
    out: list[Finding] = []
    for file, why in sorted(idx.data_errors.items()):
        out.append(Finding(file=file, rule="data.parse", severity="error",
                           message=f"does not parse as JSON: {why}"[:600]))
    for dotted, hit in idx.missing_reads()[:MAX_PER_RULE]:
        table, key = dotted.split(".", 1)
        message = f"reads data key {dotted} but data/{table}.json has no key {key!r}: {hit.text}"
        out.append(Finding(file=hit.path, line=hit.line, rule="data.key_missing", severity="error",
                           message=message[:600]))
    for key, hit in [(k, h) for k, h in idx.scene_starts if k not in idx.scene_keys][:MAX_PER_RULE]:
        out.append(Finding(file=hit.path, line=hit.line, rule="scene.unregistered", severity="error",
                           message=f"starts scene {key!r} but no scene registers that key (super('{key}'))"[:600]))
    for rel in idx.unimported()[:MAX_PER_RULE]:
        out.append(Finding(file=rel, rule="module.unimported", severity="warning",
                           message="no module imports it: its code never runs (import it, or delete it)"))
    return out


async def run_checks(project: Path, adapter: EngineAdapter | None,
                     timeout_s: float = 30.0) -> tuple[list[Finding], str]:
    """``(findings, note)``: every check on ``project``; ``note`` says which checks could not run."""
    idx = await asyncio.to_thread(ProjectIndex.build, project)
    findings = index_checks(idx)
    if adapter is None:
        return findings, "static scanner skipped: no pack engine adapter"
    src = await asyncio.to_thread(read_sources, project)
    try:
        scan = await scan_sources_async(src, adapter.node_modules, timeout_s)
        engine: ValidationResult = await asyncio.to_thread(adapter.check_sources, src, scan)
    except ToolchainMissing as exc:
        return findings, f"static scanner skipped: {exc}"[:300]
    for rel, facts in sorted(scan.items()):
        err = facts.get("error") if isinstance(facts, dict) else None
        if err:
            findings.append(Finding(file=rel, line=err.get("line") or None, rule="js.syntax", severity="error",
                                    message=f"does not parse: {err.get('message', '?')}"[:600]))
    if not engine.passed:
        findings += [Finding(rule=engine.id, severity="error", message=f.message[:600])
                     for f in engine.findings[:MAX_PER_RULE]]
    return findings, ""
