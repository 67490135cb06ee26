"""Run the acorn scanner (``scan_sources.mjs`` beside this module) once for all of a project's sources.

The scanner is engine-neutral: it takes the pack's ``node_modules`` (where acorn is) and the engine's npm module
(``engine.name`` of the pack's manifest: imports from it are chains rooted at ``{t: "engine"}``), and the pack's
adapter resolves the facts against its engine's API."""

from __future__ import annotations

import asyncio
import functools
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tier2.errors import ToolchainMissing
from tier2.hostio import ProjectDir
from tier2.packs.manifest import PackManifest
from tier2.settings.loader import Settings

__all__ = ["Scan", "read_sources", "scanner_command", "scan_sources", "scan_sources_async", "default_node_modules"]

SCAN_TIMEOUT_S = 30.0

#: path → per-file facts as emitted by the scanner (see the header of scan_sources.mjs)
Scan = dict[str, dict[str, Any]]


def read_sources(project: Path) -> dict[str, str]:
    """``src/**/*.js`` of a project, keyed by the POSIX path relative to the project (``src/scenes/Play.js``)."""
    # never through a link: a project's files are the sandbox's to change (tier2.hostio)
    return dict(ProjectDir(project).text_files("src", suffixes=(".js",), skip=frozenset({"node_modules"})))


SCANNER = Path(__file__).with_name("scan_sources.mjs")


def default_node_modules() -> Path:
    """The configured pack's node_modules (``TIER2_PACK``), used when a check is called without scan facts."""
    settings = Settings()
    return settings.packs_dir / settings.pack_id / "node_modules"


@functools.cache
def _engine_module(pack_root: Path) -> str:
    """The engine's npm module a pack pins (``engine.name`` of its ``pack.yaml``)."""
    try:
        data = yaml.safe_load((pack_root / "pack.yaml").read_text()) or {}
        return str(PackManifest(**data).engine.name)
    except (OSError, ValueError, TypeError, yaml.YAMLError) as exc:
        raise ToolchainMissing(f"no engine module: {pack_root / 'pack.yaml'} unreadable ({exc})") from exc


def scanner_command(node_modules: Path) -> list[str]:
    """``[node, scan_sources.mjs, node_modules, engine module]``; raises ToolchainMissing if node or acorn is
    missing."""
    node_modules = Path(node_modules)
    node = shutil.which("node")
    if node is None:
        raise ToolchainMissing("node is not on PATH: the static gates parse game sources with node + acorn")
    if not (node_modules / "acorn" / "package.json").exists():
        raise ToolchainMissing(f"acorn is not installed in {node_modules}: run `npm ci` in {node_modules.parent}")
    return [node, str(SCANNER), str(node_modules), _engine_module(node_modules.parent.resolve())]


def _decode(out: bytes, err: bytes, rc: int | None) -> Scan:
    if rc != 0:
        raise ToolchainMissing(f"scanner failed (exit {rc}): {err.decode(errors='replace')[-800:]}")
    files: Scan = json.loads(out)["files"]
    return files


def scan_sources(
    src_files: dict[str, str], node_modules: Path | None = None, timeout_s: float = SCAN_TIMEOUT_S,
) -> Scan:
    """Blocking variant (for direct calls of the checks); `scan_sources_async` is what the gate runner uses."""
    if not src_files:
        return {}
    cmd = scanner_command(node_modules or default_node_modules())
    try:
        proc = subprocess.run(cmd, input=json.dumps({"files": src_files}).encode(), capture_output=True,
                              timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ToolchainMissing(f"scanner timed out after {timeout_s:.0f} s") from exc
    return _decode(proc.stdout, proc.stderr, proc.returncode)


async def scan_sources_async(src_files: dict[str, str], node_modules: Path, timeout_s: float = SCAN_TIMEOUT_S) -> Scan:
    if not src_files:
        return {}
    cmd = scanner_command(node_modules)
    proc = await asyncio.create_subprocess_exec(*cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(json.dumps({"files": src_files}).encode()), timeout_s)
    except TimeoutError as exc:
        proc.kill()
        await proc.wait()
        raise ToolchainMissing(f"scanner timed out after {timeout_s:.0f} s") from exc
    return _decode(out, err, proc.returncode)
