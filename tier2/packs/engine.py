"""The engine-adapter facet: what a capability pack tells the core validators about its engine.

Core never names an engine. Each pack ships an adapter (``capability_packs/<id>/<adapter.dir>/``, named in its
``pack.yaml``) and the validators call it:

* the static engine-call check (``l1.engine_calls``): the pinned version's API data, removed APIs, the version a
  game nobody here wrote ships — the adapter module's ``check_engine_calls`` / ``check_sources``;
* the in-page introspection for games without the tier2 hook (generic mode): ``page.js``, an init script that
  finds the engine's game/app object and defines ``window.__tier2Engine`` (its loop, its display list or scene
  graph, its registered input, the missing-texture count), and ``legibility.js`` (the texts it draws);
* ``page.js`` also names the renderer the two validation sessions report (``canvas``/``webgl``) and turns the
  engine's key names into ``KeyboardEvent.code`` names; the module's ``detects`` is the evidence that a script
  already contains the engine; the manifest gives the engine title the prompts and texts use.

`load_adapter` loads a pack's adapter (refusing one that lacks a part, with the reason); `choose_adapter` picks,
among the loaded packs' adapters, the one whose engine the evidence (a page's scripts, a folder's files) shows.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, cast

from tier2.errors import PackError
from tier2.packs.manifest import PackManifest

__all__ = ["AdapterModule", "EngineAdapter", "PAGE_SCRIPTS", "choose_adapter", "load_adapter"]

#: the in-page scripts every adapter ships beside its module (``<adapter dir>/<name>``)
PAGE_SCRIPTS = ("page.js", "legibility.js")


class AdapterModule(Protocol):
    """What the adapter's ``__init__.py`` exports (checked when the pack loads)."""

    def detects(self, text: str) -> bool:
        """Does this script/bundle text carry the engine (its banner or version constant)?"""

    async def check_engine_calls(self, project: Path, src: dict[str, str], scan: dict[str, dict[str, Any]],
                                 node_modules: Path, engines_dir: Path | None) -> Any:
        """``l1.engine_calls`` on a project's sources (a `ValidationResult`); ``engines_dir`` set: a game nobody
        here wrote, checked against the engine version it ships."""

    def check_sources(self, src: dict[str, str], scan: dict[str, dict[str, Any]], node_modules: Path) -> Any:
        """``l1.engine_calls`` against the pinned version only (the companions' quick check)."""


_REQUIRED = ("detects", "check_engine_calls", "check_sources")


@dataclass(frozen=True)
class EngineAdapter:
    """A loaded adapter: the pack's engine facts, its module and its in-page scripts."""

    pack_id: str
    #: the engine as texts name it (``engine.title`` of the manifest)
    title: str
    version: str
    root: Path
    node_modules: Path
    module: AdapterModule
    scripts: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def label(self) -> str:
        return f"{self.title} {self.version}"

    @property
    def page_js(self) -> str:
        return self.scripts["page.js"]

    @property
    def legibility_js(self) -> str:
        return self.scripts["legibility.js"]

    def detects(self, text: str) -> bool:
        return bool(self.module.detects(text))

    async def check_engine_calls(self, project: Path, src: dict[str, str], scan: dict[str, dict[str, Any]],
                                 engines_dir: Path | None = None) -> Any:
        return await self.module.check_engine_calls(project, src, scan, self.node_modules, engines_dir)

    def check_sources(self, src: dict[str, str], scan: dict[str, dict[str, Any]]) -> Any:
        return self.module.check_sources(src, scan, self.node_modules)


def _import(root: Path, pack_id: str, name: str) -> ModuleType:
    """The adapter package, imported once as ``tier2_packs.<pack>_<hash>.<dir>`` under a parent package whose only
    search path is the pack's folder (as for genres; the adapter's modules import each other relatively)."""
    where = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:10]
    parent, qual = f"tier2_packs.{pack_id}_{where}", f"tier2_packs.{pack_id}_{where}.{name}"
    if qual in sys.modules:
        return sys.modules[qual]
    for pkg_name, search in (("tier2_packs", []), (parent, [str(root.parent)])):
        if pkg_name not in sys.modules:
            pkg = ModuleType(pkg_name)
            pkg.__path__ = search
            sys.modules[pkg_name] = pkg
    try:
        return importlib.import_module(qual)
    except Exception as exc:
        sys.modules.pop(qual, None)
        raise PackError(f"pack {pack_id}: engine adapter {name}/ failed to import: {exc}") from exc


def load_adapter(manifest: PackManifest, pack_root: Path) -> EngineAdapter:
    """The adapter the manifest names (``adapter.dir``), checked: every `AdapterModule` name, every page script."""
    root = (pack_root / manifest.adapter.dir).resolve()
    if not (root / "__init__.py").is_file():
        raise PackError(f"pack {manifest.id}: engine adapter {root}/__init__.py missing")
    module = _import(root, manifest.id, root.name)
    missing = [n for n in _REQUIRED if not hasattr(module, n)]
    if missing:
        raise PackError(f"pack {manifest.id}: engine adapter lacks {', '.join(missing)}")
    scripts = {}
    for name in PAGE_SCRIPTS:
        if not (root / name).is_file():
            raise PackError(f"pack {manifest.id}: engine adapter {name} missing in {root}")
        scripts[name] = (root / name).read_text()
    return EngineAdapter(pack_id=manifest.id, title=manifest.engine.title, version=manifest.engine.version,
                         root=root, node_modules=pack_root / "node_modules", module=cast(AdapterModule, module),
                         scripts=scripts)


def choose_adapter(adapters: Sequence[EngineAdapter], evidence: Sequence[str]) -> EngineAdapter:
    """The adapter whose engine the evidence texts (page scripts, bundles, package files) show; the first one
    (the configured pack's) when none does or several do."""
    if not adapters:
        raise PackError("no engine adapter loaded")
    found = [a for a in adapters if any(a.detects(text) for text in evidence)]
    return found[0] if len(found) == 1 else adapters[0]
