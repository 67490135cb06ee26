"""Load capability packs as validated bundles and fail fast when anything is missing.

Every pack — the built-in Phaser one included — goes through `load_pack`; nothing outside
``capability_packs/<id>/`` knows a pack by name.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import frontmatter
import yaml

from tier2.errors import PackError, ToolchainMissing
from tier2.packs.manifest import PackManifest

__all__ = ["PIN_FILES", "Pack", "load_pack", "pins_hash"]

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
    #: sha256 (16 hex) of the pack's build inputs — `PIN_FILES`: manifest (engine pin, build profile) and npm locks
    pins_hash: str = ""

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def ref(self) -> str:
        return f"{self.manifest.id}@{self.manifest.version}"

    @property
    def template_dir(self) -> Path:
        return self.root / self.manifest.template

    @property
    def node_modules(self) -> Path:
        return self.root / "node_modules"

    @property
    def esbuild(self) -> Path:
        return self.node_modules / ".bin" / "esbuild"

    @property
    def skill_dirs(self) -> list[Path]:
        return [self.skills_root / name for name in self.manifest.skills]

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
        import json

        version = json.loads(pkg.read_text()).get("version")
        if version != self.manifest.engine.version:
            raise ToolchainMissing(
                f"{self.manifest.engine.name} {version} installed, pack pins {self.manifest.engine.version}: {hint}"
            )


def _check_skill(path: Path) -> None:
    md = path / "SKILL.md"
    if not md.exists():
        raise PackError(f"skill {path.name}: {md} missing")
    meta = frontmatter.load(md).metadata
    for field in ("name", "description"):
        if not meta.get(field):
            raise PackError(f"skill {path.name}: SKILL.md front matter lacks {field!r}")


@functools.cache
def load_pack(packs_dir: Path, pack_id: str, skills_root: Path) -> Pack:
    """Load and validate ``<packs_dir>/<pack_id>/pack.yaml``."""
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
    pack = Pack(manifest=manifest, root=root, skills_root=skills_root.resolve(), pins_hash=pins_hash(root))
    if not pack.template_dir.is_dir():
        raise PackError(f"pack {pack.ref}: template dir {pack.template_dir} missing")
    for rel in (manifest.build.entry, manifest.build.html):
        if not (pack.template_dir / rel).exists():
            raise PackError(f"pack {pack.ref}: template lacks {rel}")
    for table in manifest.data_tables:
        if not (pack.template_dir / "data" / table).exists():
            raise PackError(f"pack {pack.ref}: template lacks data/{table}")
    for skill in pack.skill_dirs:
        _check_skill(skill)
    return pack
