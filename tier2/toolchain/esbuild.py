"""Run esbuild for a project with a pack's build profile and parse its diagnostics.

Builds are confined: esbuild runs through its JS API in ``confined_build.mjs`` (one runner for tier2 and generic
builds), whose resolve plugin refuses any import that leaves the project and the pack's node_modules, and no project
file (tsconfig.json, jsconfig.json) configures the build.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import signal
import stat
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tier2.design.asset_pool import publish_assets
from tier2.errors import ToolchainMissing
from tier2.hostio import ProjectDir
from tier2.packs import BuildProfile, Pack

__all__ = ["BuildError", "BuildResult", "Launcher", "build_options", "copy_inside", "parse_diagnostics", "project_file",
           "run_build", "run_esbuild", "sha256_file"]

_RUNNER = Path(__file__).with_name("confined_build.mjs")

#: Runs a command somewhere else (a workspace sandbox): (argv, environment, working directory) → the host argv
#: that runs it there with that environment. None: on the host, as before.
Launcher = Callable[[list[str], dict[str, str], Path], list[str]]

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
    """The sha256 of the regular file ``path``; `OSError` for a link, FIFO or device at its name (never followed,
    never blocks: a project's files are the sandbox's to change)."""
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
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


def build_options(profile: BuildProfile) -> dict[str, object]:
    """The esbuild JS API options of a pack's build profile (the confined runner adds the rest)."""
    return {
        "entryPoints": [profile.entry], "outfile": profile.outfile, "format": profile.format,
        "target": profile.target, "minify": profile.minify, "sourcemap": profile.sourcemap,
        "loader": dict(sorted(profile.loaders.items())),
    }


async def run_esbuild(
    pack: Pack, project: Path, options: dict[str, object], out_root: Path, timeout_s: float, started: float,
    launcher: Launcher | None = None,
) -> tuple[BuildResult | None, str, list[BuildError]]:
    """Bundle ``project`` with ``options`` through the confined runner (``confined_build.mjs``), with a timeout.

    Imports may only reach the project and the pack's node_modules; outputs are written under ``out_root``.
    Returns (a failed BuildResult or None, the log, warnings)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NODE_PATH": str(pack.node_modules)}
    request = {"esbuild": str(pack.node_modules / "esbuild"), "project": str(project),
               "packages": [str(pack.node_modules)], "outRoot": str(out_root), "options": options}
    argv = ["node", str(_RUNNER)]
    if launcher is not None:  # inside the workspace's sandbox, with exactly this environment
        argv, env = launcher(argv, {"NODE_PATH": env["NODE_PATH"]}, project), {"PATH": env["PATH"]}
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=project, env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    except OSError as exc:
        raise ToolchainMissing(f"cannot run node for esbuild: {exc}") from exc
    try:
        out, _ = await asyncio.wait_for(proc.communicate(json.dumps(request).encode()), timeout_s)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # node and the esbuild service it spawned
        await proc.wait()
        return BuildResult(ok=False, errors=[BuildError(f"esbuild timed out after {timeout_s:.0f}s")]), "", []
    log = out.decode(errors="replace")
    errors, warnings = parse_diagnostics(log)
    if proc.returncode != 0:
        errors = errors or [BuildError(f"esbuild exited with {proc.returncode}: {log.strip()[-400:]}")]
        duration = int((time.monotonic() - started) * 1000)
        return BuildResult(ok=False, errors=errors, warnings=warnings, log=log, duration_ms=duration), log, warnings
    return None, log, warnings


def project_file(project: Path, rel: str) -> Path | None:
    """``project/rel`` when it is a regular file inside ``project`` with no symlink on the way, else None."""
    path = project / rel
    if not path.resolve().is_relative_to(project.resolve()):
        return None
    probe = project
    for part in Path(rel).parts:
        probe = probe / part
        if probe.is_symlink():
            return None
    return path if path.is_file() else None


def copy_inside(src: Path, dst: Path, root: Path) -> None:
    """Copy ``src`` to ``dst``, both under ``root``, never through a link at any component (`ProjectDir`)."""
    pdir = ProjectDir(root)
    pdir.write_bytes(dst, pdir.read_bytes(src, max_bytes=None))


async def run_build(pack: Pack, project: Path, timeout_s: float = 60.0,
                    launcher: Launcher | None = None) -> BuildResult:
    """Bundle ``project`` into ``dist/`` (bundle + index.html + the registered assets that verify, `publish_assets`).
    Never raises for build errors. ``launcher``: run
    esbuild inside the workspace's sandbox (`tier2.sandbox.Sandbox.launcher`)."""
    pack.check_toolchain()
    profile = pack.manifest.build
    started = time.monotonic()
    if not (project / profile.entry).exists():
        return BuildResult(ok=False, errors=[BuildError(f"entry point {profile.entry} does not exist")])
    for rel in (profile.entry, profile.html):
        if ((project / rel).exists() or (project / rel).is_symlink()) and project_file(project, rel) is None:
            return BuildResult(ok=False, errors=[BuildError(f"{rel} is a symlink or leaves the project")])
    failed, log, warnings = await run_esbuild(pack, project, build_options(profile), project, timeout_s, started,
                                              launcher)
    if failed is not None:
        return failed
    duration = int((time.monotonic() - started) * 1000)
    bundle = project / profile.outfile
    html_src = project / profile.html
    if not html_src.exists():
        return BuildResult(ok=False, errors=[BuildError(f"{profile.html} missing")], log=log, duration_ms=duration)
    html_dst = bundle.parent / "index.html"
    copy_inside(html_src, html_dst, project)
    try:  # the registered assets (assets/manifest.json) that verify, beside the page: dist/assets/
        publish_assets(ProjectDir(project), os.path.join(os.path.dirname(profile.outfile) or ".", "assets"))
    except OSError as exc:
        return BuildResult(ok=False, errors=[BuildError(f"assets: {exc}")], log=log, duration_ms=duration)
    st = ProjectDir(project).lstat(bundle)  # the bundle's own status: a link or FIFO there is not a build
    if st is None or not stat.S_ISREG(st.st_mode):
        return BuildResult(ok=False, errors=[BuildError(f"{profile.outfile} is not a regular file")], log=log,
                           duration_ms=duration)
    size = st.st_size
    result = BuildResult(
        ok=True, warnings=warnings, log=log, bundle_path=str(bundle), html_path=str(html_dst),
        bundle_sha256=sha256_file(bundle), bundle_bytes=size, duration_ms=duration,
    )
    if size > profile.max_bundle_bytes:
        result.ok = False
        result.errors = [BuildError(f"bundle is {size} bytes, over the pack limit of {profile.max_bundle_bytes}")]
    return result
