"""Run esbuild for a project with a pack's build profile and parse its diagnostics."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tier2.errors import ToolchainMissing
from tier2.packs import Pack

__all__ = ["BuildError", "BuildResult", "run_build", "run_esbuild", "parse_diagnostics", "sha256_file"]

# "✘ [ERROR] Expected ";" but found "{"\n\n    src/scenes/Play.js:25:22:"
_DIAG = re.compile(r"\[(ERROR|WARNING)\]\s+(?P<msg>.+?)\n\s*\n\s+(?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+):", re.S)
_DIAG_NOLOC = re.compile(r"\[(ERROR)\]\s+(?P<msg>[^\n]+)")


@dataclass(frozen=True)
class BuildError:
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        loc = f"{self.file}:{self.line}:{self.column}: " if self.file else ""
        return f"{loc}{self.message}"


@dataclass
class BuildResult:
    ok: bool
    errors: list[BuildError] = field(default_factory=list)
    warnings: list[BuildError] = field(default_factory=list)
    log: str = ""
    bundle_path: str | None = None
    html_path: str | None = None
    bundle_sha256: str | None = None
    bundle_bytes: int = 0
    duration_ms: int = 0

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["errors"] = [str(e) for e in self.errors]
        d["warnings"] = [str(w) for w in self.warnings]
        return d


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def parse_diagnostics(log: str) -> tuple[list[BuildError], list[BuildError]]:
    errors: list[BuildError] = []
    warnings: list[BuildError] = []
    for m in _DIAG.finditer(log):
        d = BuildError(m["msg"].strip(), m["file"], int(m["line"]), int(m["col"]))
        (errors if m.group(1) == "ERROR" else warnings).append(d)
    if not errors:
        errors = [BuildError(m["msg"].strip()) for m in _DIAG_NOLOC.finditer(log)]
    return errors, warnings


def build_command(pack: Pack, project: Path) -> list[str]:
    p = pack.manifest.build
    cmd = [
        str(pack.esbuild), p.entry, "--bundle", f"--format={p.format}", f"--target={p.target}",
        f"--outfile={p.outfile}", "--log-level=warning", "--color=false", "--log-limit=20",
    ]
    if p.minify:
        cmd.append("--minify")
    if p.sourcemap:
        cmd.append("--sourcemap")
    cmd += [f"--loader:{ext}={loader}" for ext, loader in sorted(p.loaders.items())]
    return cmd


async def run_esbuild(
    pack: Pack, cmd: list[str], cwd: Path, timeout_s: float, started: float,
) -> tuple[BuildResult | None, str, list[BuildError]]:
    """Run one esbuild command (engine resolved from the pack's node_modules) with a timeout.

    Returns (a failed BuildResult or None, the log, warnings)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NODE_PATH": str(pack.node_modules)}
    try:
        proc = await asyncio.create_subprocess_exec(*cmd, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.STDOUT)
    except OSError as exc:
        raise ToolchainMissing(f"cannot run esbuild: {exc}") from exc
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout_s)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return BuildResult(ok=False, errors=[BuildError(f"esbuild timed out after {timeout_s:.0f}s")]), "", []
    log = out.decode(errors="replace")
    errors, warnings = parse_diagnostics(log)
    if proc.returncode != 0:
        errors = errors or [BuildError(f"esbuild exited with {proc.returncode}: {log.strip()[-400:]}")]
        duration = int((time.monotonic() - started) * 1000)
        return BuildResult(ok=False, errors=errors, warnings=warnings, log=log, duration_ms=duration), log, warnings
    return None, log, warnings


async def run_build(pack: Pack, project: Path, timeout_s: float = 60.0) -> BuildResult:
    """Bundle ``project`` into ``dist/`` (bundle + index.html). Never raises for build errors."""
    pack.check_toolchain()
    profile = pack.manifest.build
    started = time.monotonic()
    if not (project / profile.entry).exists():
        return BuildResult(ok=False, errors=[BuildError(f"entry point {profile.entry} does not exist")])
    failed, log, warnings = await run_esbuild(pack, build_command(pack, project), project, timeout_s, started)
    if failed is not None:
        return failed
    duration = int((time.monotonic() - started) * 1000)
    bundle = project / profile.outfile
    html_src = project / profile.html
    if not html_src.exists():
        return BuildResult(ok=False, errors=[BuildError(f"{profile.html} missing")], log=log, duration_ms=duration)
    html_dst = bundle.parent / "index.html"
    shutil.copyfile(html_src, html_dst)
    size = bundle.stat().st_size
    result = BuildResult(
        ok=True, warnings=warnings, log=log, bundle_path=str(bundle), html_path=str(html_dst),
        bundle_sha256=sha256_file(bundle), bundle_bytes=size, duration_ms=duration,
    )
    if size > profile.max_bundle_bytes:
        result.ok = False
        result.errors = [BuildError(f"bundle is {size} bytes, over the pack limit of {profile.max_bundle_bytes}")]
    return result
