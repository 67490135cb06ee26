"""Build a project of the pack's engine that is not a tier2 project (e.g. a Vite template) into a servable directory.

The entry is the ``<script type="module" src=...>`` of its index.html (or src/main.js); esbuild bundles it
against the pack's pinned engine into ``<out>/bundle.js``; ``public/`` is copied beside it and index.html is
rewritten to load the bundle. The build is confined like a tier2 one: imports may only reach the project and
the pack's node_modules, and ``public/`` symlinks that leave the project are not copied.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from tier2.errors import BadInput
from tier2.packs import Pack
from tier2.toolchain.esbuild import BuildError, BuildResult, run_esbuild, sha256_file

__all__ = ["build_generic_project", "find_entry", "MODULE_SCRIPT"]

_LOCAL_REFS = re.compile(r"""(?:href|src)=["'](/?[A-Za-z0-9_./-]+\.(?:css|png|jpg|ico|svg|json|webp))["']""", re.I)

MODULE_SCRIPT = re.compile(r"<script[^>]*type=[\"']module[\"'][^>]*src=[\"']/?([^\"']+)[\"'][^>]*>\s*</script>", re.I)


def find_entry(project: Path) -> tuple[str, str]:
    """(entry path relative to project, index.html text)."""
    index = project / "index.html"
    if not index.is_file():
        raise BadInput(f"{project} has no index.html")
    html = index.read_text(errors="replace")
    m = MODULE_SCRIPT.search(html)
    entry = m.group(1) if m else "src/main.js"
    if not (project / entry).is_file():
        raise BadInput(f"{project}: entry script {entry} not found")
    return entry, html


def _leaving(root: Path) -> Callable[[str, list[str]], set[str]]:
    """A copytree ``ignore`` that drops symlinks leaving ``root`` (their targets are not the project's)."""
    def ignore(directory: str, names: list[str]) -> set[str]:
        return {n for n in names if (p := Path(directory) / n).is_symlink() and not p.resolve().is_relative_to(root)}
    return ignore


async def build_generic_project(pack: Pack, project: Path, out: Path, timeout_s: float = 60.0) -> BuildResult:
    """Bundle ``project`` into ``out`` through the confined runner (imports stay in the project and the pack)."""
    pack.check_toolchain()
    entry, html = find_entry(project)
    started = time.monotonic()
    if out.exists():
        shutil.rmtree(out)
    public = project / "public"
    if public.is_dir() and not public.is_symlink():
        shutil.copytree(public, out, ignore=_leaving(project.resolve()))
    out.mkdir(parents=True, exist_ok=True)
    for ref in _LOCAL_REFS.findall(html):  # root-level files the page links (Vite serves the project root too)
        if ".." in Path(ref).parts:
            continue
        src = (project / ref.lstrip("/")).resolve()
        if src.is_file() and src.is_relative_to(project.resolve()) and not (out / ref.lstrip("/")).exists():
            (out / ref.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, out / ref.lstrip("/"))
    options: dict[str, object] = {"entryPoints": [entry], "format": "iife", "minify": True, "target": "es2020",
                                  "outfile": str(out / "bundle.js"), "loader": {".json": "json"}}
    failed, log, warnings = await run_esbuild(pack, project, options, out, timeout_s, started)
    if failed is not None:
        return failed
    duration = int((time.monotonic() - started) * 1000)
    page = MODULE_SCRIPT.sub('<script src="bundle.js"></script>', html, count=1)
    if "bundle.js" not in page:
        page = page.replace("</body>", '<script src="bundle.js"></script></body>')
    (out / "index.html").write_text(page)
    bundle = out / "bundle.js"
    size = bundle.stat().st_size
    result = BuildResult(ok=True, warnings=warnings, log=log, bundle_path=str(bundle),
                         html_path=str(out / "index.html"), bundle_sha256=sha256_file(bundle), bundle_bytes=size,
                         duration_ms=duration)
    limit = pack.manifest.build.max_bundle_bytes
    if size > limit:
        result.ok = False
        result.errors = [BuildError(f"bundle is {size} bytes, over the pack limit of {limit}")]
    return result
