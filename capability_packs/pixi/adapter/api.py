"""The PixiJS API a game may call, from the installed package's own type declarations (``dist/pixi.js.d.ts``).

`load_pixi_api` parses the bundled declaration file with core's ``.d.ts`` reader (`tier2.packs.retrieval.sections`,
the docs facet's too) into what the engine-call check asks: the module's exports (the names a game imports) and,
per class, its members with their inherited ones (``extends`` followed), static or not, deprecated or not. Cached
per process by the file's path and mtime.
"""

from __future__ import annotations

import functools
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from tier2.errors import ToolchainMissing
from tier2.packs.retrieval.sections import Section, export_renames, parse_dts

__all__ = ["Member", "PixiApi", "load_pixi_api"]

PACKAGE = "pixi.js"
TYPES = "dist/pixi.js.d.ts"


@dataclass(frozen=True)
class Member:
    name: str
    kind: str
    static: bool
    deprecated: bool
    owner: str
    #: a property's declared type, a method's return type
    type: str = ""


@dataclass
class PixiApi:
    version: str
    node_modules: Path
    #: every exported name -> its kind (class, interface, function, constant, type, namespace, enum)
    exports: dict[str, str]
    #: class or interface -> its own members
    own: dict[str, dict[str, Member]]
    #: class or interface -> everything it extends (a ``PixiMixins.X`` augmentation under that name)
    parents: dict[str, list[str]]
    #: names exported as deprecated
    deprecated_exports: frozenset[str] = frozenset()
    build_ms: int = 0
    _members: dict[str, dict[str, Member]] = field(default_factory=dict, repr=False)

    def members(self, cls: str) -> dict[str, Member]:
        """``cls``'s members, its own over its ancestors' and mixins' (every ``extends``, breadth first)."""
        if cls in self._members:
            return self._members[cls]
        order: list[str] = []
        queue, seen = [cls], set()
        while queue:
            at = queue.pop(0)
            if at in seen:
                continue
            seen.add(at)
            order.append(at)
            queue.extend(self.parents.get(at, []))
            if not at.startswith("PixiMixins."):
                queue.append(f"PixiMixins.{at}")
        out: dict[str, Member] = {}
        for name in reversed(order):
            out.update(self.own.get(name, {}))
        self._members[cls] = out
        return out


_HEADER = re.compile(r"^(?P<indent>\s*)(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(?:class|interface)\s+"
                     r"(?P<name>[\w$]+)(?P<rest>.*)\{\s*$")
_WRAPPED = re.compile(r"^(?:Partial|Required|Readonly|Omit|Pick)<\s*([\w$.]+)")
_BASE = re.compile(r"^([\w$.]+)")


def _top_level(text: str) -> list[str]:
    """``text`` split at the commas outside ``<…>``."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in [*parts, cur] if p.strip()]


def _parents(text: str, renames: dict[str, str]) -> dict[str, list[str]]:
    """Every class or interface header's bases (``extends A<T>, Partial<B>, C``), the ``PixiMixins`` namespace's
    augmentations under ``PixiMixins.<name>``; bundler-renamed names as exported."""
    out: dict[str, list[str]] = {}
    in_mixins = False
    for line in text.splitlines():
        if line.strip().startswith("namespace PixiMixins"):
            in_mixins = True
            continue
        if in_mixins and line.rstrip() == "\t}":
            in_mixins = False
        m = _HEADER.match(line)
        if not m:
            continue
        rest = m["rest"]
        while "<" in rest and (less := re.sub(r"^\s*<[^<>]*>", "", rest)) != rest:  # the header's own generics
            rest = less
        rest = re.split(r"\bimplements\b", rest)[0]
        bases: list[str] = []
        if (ext := re.search(r"\bextends\b(.*)$", rest)) is not None:
            for part in _top_level(ext.group(1)):
                b = _WRAPPED.match(part) or _BASE.match(part)
                if b:
                    bases.append(renames.get(b.group(1), b.group(1)))
        name = renames.get(m["name"], m["name"])
        key = f"PixiMixins.{name}" if in_mixins and m["indent"] else name
        out.setdefault(key, [])
        out[key] += [b for b in bases if b != key and b not in out[key]]
    return out


def _from_sections(sections: list[Section], parents: dict[str, list[str]], version: str,
                   node_modules: Path) -> PixiApi:
    exports: dict[str, str] = {}
    deprecated: set[str] = set()
    own: dict[str, dict[str, Member]] = {}
    kinds = {s.id: s.kind for s in sections}
    for s in sections:
        if not s.owner:
            exports[s.id] = s.kind
            if s.deprecated:
                deprecated.add(s.id)
        if s.kind in ("method", "property", "constant") and kinds.get(s.owner) in ("class", "interface", "type"):
            static = s.id[len(s.owner):len(s.owner) + 1] == "."
            own.setdefault(s.owner, {})[s.name] = Member(s.name, s.kind, static, s.deprecated, s.owner,
                                                                 s.type)
    return PixiApi(version=version, node_modules=node_modules, exports=exports, own=own, parents=parents,
                   deprecated_exports=frozenset(deprecated))


@functools.lru_cache(maxsize=4)
def _cached(types: Path, mtime: float, version: str, node_modules: Path) -> PixiApi:
    started = time.monotonic()
    text = types.read_text(encoding="utf-8")
    api = _from_sections(parse_dts(text, TYPES), _parents(text, export_renames(text)), version, node_modules)
    api.build_ms = int((time.monotonic() - started) * 1000)
    return api


def installed_version(node_modules: Path) -> str | None:
    try:
        return str(json.loads((node_modules / PACKAGE / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def load_pixi_api(node_modules: Path) -> PixiApi:
    """The API of the pixi.js installed in ``node_modules``; `ToolchainMissing` when it is not installed."""
    node_modules = Path(node_modules)
    types = node_modules / PACKAGE / TYPES
    version = installed_version(node_modules)
    if version is None or not types.is_file():
        raise ToolchainMissing(f"{PACKAGE} is not installed in {node_modules} (no {TYPES}): run `npm ci` in "
                               f"{node_modules.parent}")
    return _cached(types, types.stat().st_mtime, version, node_modules)
