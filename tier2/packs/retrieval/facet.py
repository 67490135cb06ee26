"""A pack's docs facet as retrieval reads it: ``<pack>/<manifest.docs>/retrieval.yaml``.

Everything engine-specific is here, as the pack's data: the type declarations to generate the API reference from,
the engine package whose version is recorded, the guides (globs), the receivers and aliases an expression in an
error message starts with (``this`` → the scene class, ``physics.add`` → the physics factory...) and priors that
rank one class's copy of a shared member above another's.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePosixPath

import yaml
from pydantic import BaseModel, ConfigDict, Field

from tier2.errors import PackError
from tier2.packs.registry import Pack

__all__ = ["DocsFacet", "FACET_FILE", "load_facet"]

FACET_FILE = "retrieval.yaml"


class DocsFacet(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the engine's generated type declarations, relative to the pack root
    types: str
    #: the engine package's package.json (its ``version`` is recorded in the index)
    engine_package: str = ""
    #: markdown guides, globs relative to the pack root (split at headings)
    guides: list[str] = []
    #: every genre's ``notes.md`` is a guide too (wherever its rules live: shared ones are beside the pack)
    genre_notes: bool = False
    #: first word of an expression → the class it usually is (``this`` in a scene...)
    receivers: dict[str, str] = {}
    #: a dotted path met anywhere in an expression → the class it is (``physics.add`` → the physics factory)
    aliases: dict[str, str] = {}
    #: id prefix → rank weight (longest prefix wins; default 1.0)
    priors: dict[str, float] = {}
    #: an API that is gone (removed, renamed, from an older major version) → the sections that replace it; keys are
    #: ``Owner#member``, a bare member name or a dotted tail (``time.events``)
    replaced: dict[str, list[str]] = {}
    #: `tier2 packs check`: a query whose first answer must be ``expect`` (the index builds and answers)
    check: dict[str, str] = {}
    #: a query longer than this is cut (hostile or pasted logs)
    max_query_chars: int = Field(default=2000, gt=0, le=20_000)


def _inside(root: Path, rel: str) -> Path:
    """``rel`` under the pack root, refused when absolute or climbing out (symlinked node_modules stay allowed)."""
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts:
        raise PackError(f"docs facet path {rel!r} must stay inside the pack")
    return root / pure


class LoadedFacet:
    """The facet with its files resolved."""

    def __init__(self, pack: Pack, spec: DocsFacet, path: Path) -> None:
        self.pack, self.spec, self.path = pack, spec, path
        self.types_path = _inside(pack.root, spec.types)
        self.package_path = _inside(pack.root, spec.engine_package) if spec.engine_package else None

    def guide_files(self) -> list[Path]:
        found: set[Path] = set()
        for pattern in self.spec.guides:
            _inside(self.pack.root, pattern)
            found |= {p for p in self.pack.root.glob(pattern) if p.is_file() and p.suffix == ".md"}
        if self.spec.genre_notes:
            found |= {g.root / "notes.md" for g in self.pack.genres.values() if (g.root / "notes.md").is_file()}
        return sorted(found)

    def guide_name(self, guide: Path) -> str:
        """A guide's name in the index: its path in the pack (``docs/x.md``), or beside it for shared genre rules
        (``../genres/<id>/notes.md``)."""
        root = self.pack.root
        if guide.is_relative_to(root):
            return str(guide.relative_to(root))
        return f"../genres/{guide.parent.name}/{guide.name}"  # the only guides outside: shared genre rules

    def engine_version(self) -> str:
        if self.package_path is None or not self.package_path.is_file():
            return self.pack.manifest.engine.version
        return str(json.loads(self.package_path.read_text()).get("version", ""))

    def types_sha256(self) -> str:
        if not self.types_path.is_file():
            raise PackError(f"pack {self.pack.ref}: type declarations {self.types_path} missing "
                            f"(run `npm ci` in {self.pack.root})")
        return hashlib.sha256(self.types_path.read_bytes()).hexdigest()

    def inputs_sha256(self) -> str:
        """sha256 over everything the index is made of besides the type file: the facet and every guide."""
        digest = hashlib.sha256(self.path.read_bytes())
        for guide in self.guide_files():
            digest.update(self.guide_name(guide).encode() + b"\0" + guide.read_bytes())
        return digest.hexdigest()


def load_facet(pack: Pack) -> LoadedFacet:
    path = _inside(pack.root, pack.manifest.docs) / FACET_FILE
    if not path.is_file():
        raise PackError(f"pack {pack.ref} has no docs retrieval facet ({path})")
    try:
        spec = DocsFacet(**(yaml.safe_load(path.read_text()) or {}))
    except Exception as exc:
        raise PackError(f"invalid docs facet {path}: {exc}") from exc
    return LoadedFacet(pack, spec, path)
