"""What `tier2 validate` can be pointed at, resolved to something a probe can load.

* a tier2 project (pack entry point + data tables) → built with the pack profile, contract mode;
* any other folder with an index.html is classified by evidence (`site.classify_site`):
  - a **built site** (a Vite/webpack ``dist/``, a plain script-tag game: every module the page loads runs
    unbundled) → served exactly as it is;
  - a **source project** (its module entry imports a bare package or extensionless paths, or is TypeScript) →
    bundled against the pinned engine into a site that is served first, with the project folder behind it, so
    every file its page or game references (``assets/``, vendored ``lib/`` scripts...) is still found;
* an ``http://127.0.0.1…`` / ``localhost`` URL → loaded directly (requests to its own origin only, made by
  Playwright; a redirect out of it is refused).

Folders are served on a loopback origin (`SERVED_ORIGIN`), so the game takes the same code paths as on its
author's ``localhost``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from tier2.browser.session import SERVED_ORIGIN
from tier2.errors import BadInput
from tier2.hostio import ProjectDir
from tier2.packs import Pack
from tier2.packs.registry import load_installed, pack_of_engine_modules
from tier2.toolchain import BuildResult, run_build
from tier2.toolchain.generic import build_generic_project
from tier2.validators.base import ProbeMode
from tier2.validators.site import SiteKind, classify_site

__all__ = ["Target", "resolve_target", "detect_mode"]

HOOK_MARKER = "__TIER2__"


@dataclass
class Target:
    label: str
    url: str
    serve_root: Path | None
    project: Path | None
    build: BuildResult | None
    tier2_project: bool
    #: built site or source project, with the evidence (None for tier2 projects and URLs)
    site: SiteKind | None = None
    #: further directories served behind ``serve_root`` (a source project's own folder)
    fallback_roots: list[Path] = field(default_factory=list)

    @property
    def roots(self) -> list[Path]:
        """Every directory that answers the served origin, first match wins."""
        return ([self.serve_root] if self.serve_root else []) + self.fallback_roots


def is_tier2_project(path: Path, pack: Pack) -> bool:
    return (path / pack.manifest.build.entry).is_file() and any(
        all((path / "data" / t).is_file() for t in g.spec.data_tables) for g in pack.genres.values())


def detect_mode(target: Target) -> ProbeMode:
    """contract when the page's bundle carries the tier2 test hook, generic otherwise."""
    if target.tier2_project:
        return "contract"
    if target.build and target.build.bundle_path:
        text = Path(target.build.bundle_path).read_text(errors="replace")
        return "contract" if HOOK_MARKER in text else "generic"
    if target.site and target.serve_root:  # a built site: look in the modules its page loads
        for entry in target.site.entries:
            path = (target.serve_root / entry.lstrip("/").split("?")[0]).resolve()
            if path.is_relative_to(target.serve_root) and path.is_file() and HOOK_MARKER in path.read_text(
                    errors="replace"):
                return "contract"
    return "generic"


_BARE = re.compile(r"imports the bare module '([^']+)'")


def engine_pack(project: Path, kind: SiteKind, pack: Pack) -> Pack:
    """The installed pack a source project is bundled with: the one whose engine package (``engine.name`` of its
    manifest) the project depends on (``package.json``) or imports (the bare import that made it a source
    project); the configured pack when none or several do."""
    names = {m.group(1).split("/")[0] if not m.group(1).startswith("@") else "/".join(m.group(1).split("/")[:2])
             for e in kind.evidence for m in [_BARE.search(e)] if m}
    try:
        pkg = json.loads(ProjectDir(project).read_text("package.json", max_bytes=1_000_000))
        names |= {str(k) for field_ in ("dependencies", "devDependencies") for k in dict(pkg.get(field_) or {})}
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    packs = [pack, *(p for p in load_installed(pack.root.parent)[0] if p.id != pack.id)]
    return pack_of_engine_modules(names, packs) or pack


async def resolve_target(raw: str, pack: Pack, work_dir: Path, build_timeout_s: float = 60.0) -> Target:
    if raw.startswith(("http://", "https://")):
        host = urlparse(raw).hostname or ""
        if host not in {"127.0.0.1", "localhost", "::1"}:
            raise BadInput(f"only loopback URLs can be validated here (got {host!r}); serve the game on 127.0.0.1")
        return Target(raw, raw, None, None, None, False)
    path = Path(raw).expanduser().resolve()
    if not path.is_dir():
        raise BadInput(f"{path} is not a directory or an http://127.0.0.1 URL")
    if is_tier2_project(path, pack):
        build = await run_build(pack, path, timeout_s=build_timeout_s)
        return Target(str(path), SERVED_ORIGIN + "dist/index.html", path, path, build, True)
    index = path / "index.html"
    if not index.is_file():
        raise BadInput(f"{path} has no index.html: not a web game")
    kind = classify_site(path, index.read_text(errors="replace"), [pack.adapter])
    if kind.kind == "source":
        site = work_dir / "site"
        build = await build_generic_project(engine_pack(path, kind, pack), path, site, timeout_s=build_timeout_s)
        return Target(str(path), SERVED_ORIGIN + "index.html", site, path, build, False, kind, [path])
    return Target(str(path), SERVED_ORIGIN + "index.html", path, path, None, False, kind)
