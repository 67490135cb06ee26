"""Load capability packs as validated bundles and fail fast when anything is missing.

Every pack — the built-in one included — goes through `load_pack`; nothing outside
``capability_packs/<id>/`` knows a pack by name.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from tier2.errors import BadInput, PackError, ToolchainMissing
from tier2.hostio import ProjectDir
from tier2.packs.engine import EngineAdapter, load_adapter
from tier2.packs.genres import Genre, load_genres
from tier2.packs.manifest import PackManifest
from tier2.packs.skills import check_skill, core_skill_dirs
from tier2.settings.loader import Settings, load_security

__all__ = ["PIN_FILES", "Pack", "allowed_packs", "configured_pack", "installed_pack_ids", "load_installed", "load_pack",
           "loaded_packs", "pack_by_ref", "pack_of_engine_modules", "pins_hash"]

#: the files of a pack that pin what a build uses (engine version, build profile, exact npm packages)
PIN_FILES = ("pack.yaml", "package.json", "package-lock.json")


def pins_hash(root: Path) -> str:
    """sha256 over the pack's `PIN_FILES` (name and bytes; a missing one counts as absent), 16 hex characters."""
    digest = hashlib.sha256()
    for name in PIN_FILES:
        path = root / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Pack:
    """A loaded pack: its manifest plus resolved paths."""

    manifest: PackManifest
    root: Path
    skills_root: Path
    genres: dict[str, Genre]
    #: the engine facet the validators call (`tier2.packs.engine`)
    adapter: EngineAdapter
    #: sha256 (16 hex) of the pack's build inputs — `PIN_FILES`: manifest (engine pin, build profile) and npm locks
    pins_hash: str = ""

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def ref(self) -> str:
        return f"{self.manifest.id}@{self.manifest.version}"

    @property
    def default_genre(self) -> Genre:
        return self.genres[self.manifest.default_genre]

    @property
    def template_dir(self) -> Path:
        """The default genre's template."""
        return self.default_genre.template_dir

    def genre(self, genre_id: str | None) -> Genre:
        """A genre by id (None: the default); `BadInput` naming the known ones otherwise."""
        if genre_id is None:
            return self.default_genre
        if genre_id not in self.genres:
            raise BadInput(f"pack {self.ref} has no genre {genre_id!r} (it has: {', '.join(self.genres)})")
        return self.genres[genre_id]

    def genre_of(self, project: Path) -> Genre:
        """The genre a project was made from: tier2's own metadata (``.tier2/project.json``, never writable
        from inside a run), else the genre whose tables the project has (most tables wins), else the default."""
        pdir = ProjectDir(project)  # never through a link the sandbox planted (tier2.hostio)
        try:
            named = json.loads(pdir.read_text(".tier2/project.json", max_bytes=1_000_000)).get("genre")
        except (OSError, ValueError, AttributeError):
            named = None
        if isinstance(named, str) and named in self.genres:
            return self.genres[named]
        fits = [g for g in self.genres.values() if all(pdir.is_file(f"data/{t}") for t in g.spec.data_tables)]
        return max(fits, key=lambda g: len(g.spec.data_tables)) if fits else self.default_genre

    def genre_vocab(self) -> dict[str, list[str]]:
        """genre id -> brief words, for `tier2.design.classify_brief`: the pack's genres (the default one last, so
        a tie goes to the more specific genre), then the genres it knows it cannot build."""
        order = [g for g in sorted(self.genres) if g != self.manifest.default_genre] + [self.manifest.default_genre]
        vocab = {g: list(self.genres[g].spec.brief_words) for g in order}
        return vocab | {g: list(w) for g, w in self.manifest.unsupported_genres.items() if g not in vocab}

    def genre_cues(self) -> dict[str, dict[str, dict[str, float]]]:
        """genre id -> ``{"en": {cue: weight}, "zh": {cue: weight}}`` for `tier2.design.reader.read_brief`: each
        genre's ``reader:`` cues (its lexicon.yaml) and its brief words, then the genres the pack knows it cannot
        build (their words, so such a brief is read as that genre and refused, never built as another)."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for gid, genre in self.genres.items():
            cues = genre.reader_cues
            en = {w: 3.0 for w in genre.spec.brief_words} | cues["en"]
            out[gid] = {"en": en, "zh": dict(cues["zh"])}
        for gid, words in self.manifest.unsupported_genres.items():
            if gid not in out:
                out[gid] = {"en": {w: 4.0 for w in words}, "zh": {}}
        return out

    @property
    def behaviours(self) -> list[str]:
        return sorted({b for g in self.genres.values() for b in g.spec.behaviours})

    @property
    def node_modules(self) -> Path:
        return self.root / "node_modules"

    @property
    def esbuild(self) -> Path:
        return self.node_modules / ".bin" / "esbuild"

    @property
    def skill_dirs(self) -> list[Path]:
        """The pack's own (engine) skills, as its manifest names them."""
        return [self.skills_root / name for name in self.manifest.skills]

    @property
    def agent_skill_dirs(self) -> list[Path]:
        """The skills every agent role of a run with this pack loads: the core ones (``skills/``), then the pack's
        (`tier2.packs.skills`). The one list: the writer's workspace, the designers and the companions use it."""
        return [*core_skill_dirs(), *self.skill_dirs]

    def engine_package_dir(self) -> Path:
        return self.node_modules / self.manifest.engine.name

    def check_toolchain(self) -> None:
        """Raise `ToolchainMissing` unless node, esbuild and the engine package at the pinned version are installed."""
        hint = f"run `npm ci` in {self.root} (or `make setup`)"
        if not self.esbuild.exists():
            raise ToolchainMissing(f"esbuild not found at {self.esbuild}: {hint}")
        if shutil.which("node") is None:
            raise ToolchainMissing("node not found on PATH: builds run esbuild through its JS API")
        pkg = self.engine_package_dir() / "package.json"
        if not pkg.exists():
            raise ToolchainMissing(f"{self.manifest.engine.name} is not installed in {self.node_modules}: {hint}")
        version = json.loads(pkg.read_text()).get("version")
        if version != self.manifest.engine.version:
            raise ToolchainMissing(
                f"{self.manifest.engine.name} {version} installed, pack pins {self.manifest.engine.version}: {hint}"
            )


_LOADED: dict[str, Pack] = {}


def loaded_packs() -> list[Pack]:
    """Every pack this process has loaded (generic mode chooses among their engine adapters)."""
    return list(_LOADED.values())


def pack_by_ref(ref: str) -> Pack | None:
    """A pack this process has loaded, by ``id@version`` or ``id`` (the offline model finds its pack this way)."""
    return _LOADED.get(ref) or next((p for p in _LOADED.values() if p.id == ref), None)


@functools.cache
def load_pack(packs_dir: Path, pack_id: str, skills_root: Path | None = None) -> Pack:
    """Load and validate ``<packs_dir>/<pack_id>/pack.yaml``; its skills live in ``<pack>/skills`` unless
    ``skills_root`` says otherwise."""
    root = (packs_dir / pack_id).resolve()
    manifest_path = root / "pack.yaml"
    if not manifest_path.exists():
        raise PackError(f"unknown capability pack {pack_id!r}: {manifest_path} not found")
    try:
        manifest = PackManifest(**(yaml.safe_load(manifest_path.read_text()) or {}))
    except Exception as exc:
        raise PackError(f"invalid pack manifest {manifest_path}: {exc}") from exc
    if manifest.id != pack_id:
        raise PackError(f"{manifest_path}: id {manifest.id!r} does not match directory {pack_id!r}")
    genres = load_genres(root / manifest.genres_dir, manifest.id)
    if manifest.default_genre not in genres:
        raise PackError(f"pack {pack_id}: default genre {manifest.default_genre!r} not in {', '.join(genres)}")
    pack = Pack(manifest=manifest, root=root, skills_root=(skills_root or root / "skills").resolve(),
                genres=genres, adapter=load_adapter(manifest, root), pins_hash=pins_hash(root))
    for genre in genres.values():
        for rel in (manifest.build.entry, manifest.build.html):
            if not (genre.template_dir / rel).exists():
                raise PackError(f"pack {pack.ref}: genre {genre.id}'s template lacks {rel}")
    core = {d.name for d in core_skill_dirs()}
    for skill in pack.skill_dirs:
        if check_skill(skill) in core:  # AgentScope would let one overwrite the other
            raise PackError(f"pack {pack.ref}: skill {skill.name} has the name of a core skill (skills/)")
    # the first pack of a ref keeps it: an edited copy of a pack loaded later (another packs dir, same id@version)
    # never takes the ref over from the one the process runs (`pack_by_ref`: the offline model finds its pack so)
    _LOADED.setdefault(pack.ref, pack)
    return pack


def pack_of_engine_modules(modules: Iterable[str], packs: Sequence[Pack]) -> Pack | None:
    """The one pack among ``packs`` whose engine package (``engine.name`` of its manifest) is among ``modules``
    (npm package names a project depends on or imports); None when none or several are."""
    names = set(modules)
    found = [p for p in packs if p.manifest.engine.name in names]
    return found[0] if len(found) == 1 else None


def installed_pack_ids(packs_dir: Path) -> list[str]:
    """The packs installed under ``packs_dir`` (every folder with a ``pack.yaml``), sorted."""
    if not packs_dir.is_dir():
        return []
    return sorted(p.name for p in packs_dir.iterdir() if (p / "pack.yaml").is_file())


def load_installed(packs_dir: Path) -> tuple[list[Pack], dict[str, str]]:
    """Every installed pack that loads (generic mode chooses among their engine adapters), and why each other one
    did not (pack id -> the `PackError`'s text): a broken pack never stops the others' games being judged."""
    packs: list[Pack] = []
    refused: dict[str, str] = {}
    for pack_id in installed_pack_ids(packs_dir):
        try:
            packs.append(load_pack(packs_dir, pack_id))
        except PackError as exc:
            refused[pack_id] = str(exc)
    return packs, refused


def configured_pack() -> Pack:
    """The pack the settings name (``TIER2_PACK``, default in `tier2.settings.loader.Settings`)."""
    settings = Settings()
    return load_pack(settings.packs_dir, settings.pack_id, settings.skills_dir)


def allowed_packs(settings: Settings | None = None) -> list[Pack]:
    """Every installed pack the security config allows (``allowed_packs``), loaded (cached), in that order; one
    that is allowed but not installed is left out (the submit path names it when asked for)."""
    settings = settings or Settings()
    out = []
    for pack_id in load_security(settings.config_dir).allowed_packs:
        if (settings.packs_dir / pack_id / "pack.yaml").is_file():
            out.append(load_pack(settings.packs_dir, pack_id, settings.skills_dir if pack_id == settings.pack_id
                                 else None))
    return out
