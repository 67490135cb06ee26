"""The Phaser API index: derived from the installed package, cached per package version + content hash.

Source: ``node_modules/phaser/types/phaser.json`` — the JSDoc doclet dump Phaser ships next to ``phaser.d.ts``
(the d.ts is generated from the same doclets). It is plain JSON and already lists inherited and mixed-in members
on every class, so no TypeScript parser is needed. A version that ships only ``phaser.d.ts`` (before 3.60) is read
from its declarations (`dts.doclets_from_dts`). The index keeps only what the engine-call check needs:

* ``statics``: every static path (``Phaser.Math.Between``, ``Phaser.Scale.FIT``...) → ``"kind:types"`` where kind
  is ``n`` namespace, ``c`` class, ``f`` function (types = return types) or ``v`` value (types = its types), and
  types are kept only when they are all indexed classes (or ``this``) — nothing else is ever followed;
* ``classes``: class or object typedef → ``{"augments": [...], "members": {name: "kind:types"}}`` with members
  flattened over the whole ``augments`` chain (mixins included);
* ``subclasses``: class → every class that (transitively) augments it.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tier2.errors import ToolchainMissing

from .dts import doclets_from_dts

__all__ = ["PhaserApi", "load_phaser_api", "build_index", "INDEX_SCHEMA"]

INDEX_SCHEMA = 3
_OBJECT_BUILTINS = frozenset({"constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
                              "toLocaleString", "toString", "valueOf", "__proto__"})
_FUNCTION_BUILTINS = _OBJECT_BUILTINS | {"apply", "bind", "call", "length", "name", "prototype"}
_NOT_A_CLASS = re.compile(r"^(any|\*|object|Object|function|Array|array|number|string|boolean|null|undefined|void)$")


_GENERIC = re.compile(r"\.<.*>$")  # Phaser.Structs.List.<Phaser.GameObjects.GameObject> → Phaser.Structs.List


def _types(doclet: dict[str, Any], key: str = "type") -> list[str]:
    if key == "returns":
        names = [n for r in doclet.get("returns") or [] for n in (r.get("type") or {}).get("names", [])]
    else:
        names = (doclet.get(key) or {}).get("names", [])
    return [_GENERIC.sub("", n) for n in names]


def build_index(doclets: list[dict[str, Any]], version: str) -> dict[str, Any]:
    """Turn the JSDoc doclet list into the compact index (pure; see the module docstring)."""
    statics: dict[str, list[Any]] = {}
    own: dict[str, dict[str, list[Any]]] = {}
    augments: dict[str, list[str]] = {}
    for d in doclets:
        kind, longname, scope = d.get("kind"), d.get("longname", ""), d.get("scope")
        if d.get("undocumented") or not longname.startswith("Phaser"):
            continue
        if kind == "event":  # doclet `Phaser.Input.Events#event:POINTER_DOWN` = Phaser.Input.Events.POINTER_DOWN
            statics[f"{d['memberof']}.{d['name']}"] = ["v", ["string"]]
            continue
        if kind in ("class", "typedef"):
            if kind == "class" or d.get("augments") or d.get("properties"):
                augments[longname] = [_GENERIC.sub("", a) for a in d.get("augments") or []]
                members = own.setdefault(longname, {})
                for p in d.get("properties") or [] if kind == "typedef" else []:
                    if p.get("name"):  # (some versions' doclets carry an unnamed property)
                        members.setdefault(p["name"], ["v", _types(p)])
            if kind == "typedef":
                continue
        if scope == "instance" and kind in ("function", "member", "constant") and d.get("memberof"):
            entry = ["f", _types(d, "returns")] if kind == "function" else ["v", _types(d)]
            own.setdefault(d["memberof"], {})[d["name"]] = entry
        elif scope in ("static", "global") and "#" not in longname and "~" not in longname:
            k = {"namespace": "n", "class": "c", "function": "f"}.get(kind or "", "v")
            statics[longname] = [k, _types(d, "returns") if k == "f" else _types(d)]

    @functools.cache
    def flat(cls: str) -> tuple[tuple[str, list[Any]], ...]:
        merged: dict[str, list[Any]] = {}
        for parent in augments.get(cls, []):
            if parent != cls:
                merged.update(dict(flat(parent)))
        merged.update(own.get(cls, {}))
        return tuple(sorted(merged.items()))

    names = set(own) | set(augments)

    def compact(entry: list[Any]) -> str:
        """``"f:A|B"`` when every type is a known class (or ``this``), else just the kind (never followed)."""
        kind, types = entry
        keep = types and all(t in names or t == "this" for t in types)
        return f"{kind}:{'|'.join(types)}" if keep else kind

    classes = {c: {"augments": augments.get(c, []), "members": {k: compact(v) for k, v in flat(c)}}
               for c in sorted(names)}
    compact_statics = {k: compact(v) for k, v in statics.items()}
    subclasses: dict[str, set[str]] = {}

    def ancestors(c: str, seen: set[str]) -> set[str]:
        for p in augments.get(c, []):
            if p not in seen:
                seen.add(p)
                ancestors(p, seen)
        return seen

    for c in classes:
        for a in ancestors(c, set()):
            subclasses.setdefault(a, set()).add(c)
    return {"schema": INDEX_SCHEMA, "version": version, "statics": compact_statics, "classes": classes,
            "subclasses": {k: sorted(v) for k, v in subclasses.items()}}


@dataclass
class PhaserApi:
    """The loaded index plus lookups. Types are class longnames; members are checked leniently over subclasses."""

    version: str
    statics: dict[str, str]  # path -> compact entry ("f:A|B", "n", ...)
    classes: dict[str, dict[str, Any]]
    subclasses: dict[str, list[str]]
    node_modules: Path
    cache_path: Path | None = None
    build_ms: int = 0
    load_ms: int = 0
    _children: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for path in self.statics:
            parent, _, name = path.rpartition(".")
            if parent:
                self._children.setdefault(parent, []).append(name)

    # --- static paths (Phaser.X.Y) ---
    def static_kind(self, path: str) -> str | None:
        entry = self.statics.get(path)
        return entry[0] if entry else None

    def static_types(self, path: str) -> list[str]:
        return _split(self.statics.get(path))

    def static_children(self, path: str) -> list[str]:
        return self._children.get(path, [])

    def static_builtin(self, path: str, name: str) -> bool:
        return name in (_OBJECT_BUILTINS if self.static_kind(path) == "n" else _FUNCTION_BUILTINS)

    # --- instances ---
    def is_class(self, name: str) -> bool:
        return name in self.classes

    def class_types(self, names: list[str]) -> frozenset[str] | None:
        """The known classes among a doclet's type names; None when any is not a class (number, object, T...)."""
        if not names or any(_NOT_A_CLASS.match(n) or n not in self.classes for n in names):
            return None
        return frozenset(names)

    def member(self, classes: frozenset[str], name: str) -> list[tuple[str, list[str]]]:
        """(kind, class types) of `name` on each class that has it; kind ``f`` types are return types."""
        found = [self.classes[c]["members"][name] for c in classes if name in self.classes[c]["members"]]
        return [(e[0], _split(e)) for e in found]

    def plausible(self, classes: frozenset[str], name: str) -> bool:
        """Does any of these classes, or any subclass (the value may be a subclass at runtime), have `name`?"""
        if name in _OBJECT_BUILTINS:
            return True
        return any(name in self.classes[s]["members"] for c in classes for s in (c, *self.subclasses.get(c, [])))

    def members_of(self, classes: frozenset[str]) -> list[str]:
        return sorted({m for c in classes for m in self.classes[c]["members"]})

    @staticmethod
    def suggest(name: str, candidates: list[str]) -> str | None:
        hits = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
        if not hits:
            lowered = {c.lower(): c for c in candidates}
            hits = [lowered[h] for h in difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)]
        return hits[0] if hits else None


def _split(entry: str | None) -> list[str]:
    return entry[2:].split("|") if entry and len(entry) > 2 else []


def _package_key(node_modules: Path) -> tuple[str, str, Path]:
    """(version, content hash, phaser.json path) without reading the 47 MB doclet file."""
    pkg_dir = node_modules / "phaser"
    doclets = pkg_dir / "types" / "phaser.json"
    if not doclets.exists() and (pkg_dir / "types" / "phaser.d.ts").exists():  # before 3.60: declarations only
        doclets = pkg_dir / "types" / "phaser.d.ts"
    try:
        version = json.loads((pkg_dir / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError) as exc:
        hint = f"run `npm ci` in {node_modules.parent}"
        raise ToolchainMissing(f"phaser is not installed in {node_modules}: {hint}") from exc
    if not doclets.exists():
        raise ToolchainMissing(f"{doclets} missing: the phaser package should ship its JSDoc JSON (types/phaser.json)")
    integrity = ""
    lock = node_modules / ".package-lock.json"
    if lock.exists():
        integrity = json.loads(lock.read_text()).get("packages", {}).get("node_modules/phaser", {}).get("integrity", "")
    st = doclets.stat()
    basis = f"{INDEX_SCHEMA}|{version}|{integrity}|{st.st_size}|{st.st_mtime_ns}"
    return version, hashlib.sha256(basis.encode()).hexdigest()[:12], doclets


def _cache_dirs(node_modules: Path) -> list[Path]:
    return [node_modules, Path(tempfile.gettempdir()) / "tier2-phaser-api"]


def load_phaser_api(pack_node_modules: Path) -> PhaserApi:
    """Load (or build once and cache) the API index for the phaser package under ``pack_node_modules``."""
    version, digest, doclets = _package_key(Path(pack_node_modules))
    return _load(Path(pack_node_modules).resolve(), version, digest, str(doclets))


@functools.lru_cache(maxsize=4)
def _load(node_modules: Path, version: str, digest: str, doclets: str) -> PhaserApi:
    name = f".tier2-phaser-api-{version}-{digest}.json"
    started = time.monotonic()
    for d in _cache_dirs(node_modules):
        path = d / name
        try:
            index = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if index.get("schema") == INDEX_SCHEMA and index.get("version") == version:
            return _api(index, node_modules, path, 0, int((time.monotonic() - started) * 1000))
    text = Path(doclets).read_text(encoding="utf-8")
    index = build_index(doclets_from_dts(text) if doclets.endswith(".d.ts") else json.loads(text), version)
    build_ms = int((time.monotonic() - started) * 1000)
    written: Path | None = None
    for d in _cache_dirs(node_modules):
        try:
            d.mkdir(parents=True, exist_ok=True)
            tmp = d / f"{name}.{time.time_ns()}.tmp"
            tmp.write_text(json.dumps(index, separators=(",", ":")))
            tmp.replace(d / name)
            written = d / name
            for stale in d.glob(".tier2-phaser-api-*.json"):
                if stale.name != name:
                    stale.unlink(missing_ok=True)
            break
        except OSError:
            continue
    return _api(index, node_modules, written, build_ms, 0)


def _api(index: dict[str, Any], node_modules: Path, path: Path | None, build_ms: int, load_ms: int) -> PhaserApi:
    return PhaserApi(version=index["version"], statics=index["statics"], classes=index["classes"],
                     subclasses=index["subclasses"], node_modules=node_modules, cache_path=path,
                     build_ms=build_ms, load_ms=load_ms)
