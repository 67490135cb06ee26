"""Game project directories: create one from a pack template, identify it, and snapshot its sources."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import stat
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypedDict

from tier2.errors import BadInput
from tier2.hostio import ProjectDir
from tier2.packs import Pack
from tier2.packs.registry import pack_of_engine_modules

__all__ = ["ProjectInfo", "new_project", "adopt_project", "read_project", "project_pack", "pack_imported", "snapshot",
           "project_id_for", "SNAPSHOT_EXCLUDES"]

META_DIR = ".tier2"
META_FILE = f"{META_DIR}/project.json"
#: Never part of a source snapshot: build output, tier2/AgentScope runtime files.
SNAPSHOT_EXCLUDES = frozenset({
    "dist", META_DIR, "skills", "sessions", ".mcp", "node_modules", ".git", "delivery.json", "screenshot.png",
})
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{2,63}$")


@dataclass(frozen=True)
class ProjectInfo:
    project_id: str
    path: str
    pack: str
    created_at: float
    #: the pack genre whose template the project started from
    genre: str | None = None


def project_id_for(value: str | None = None) -> str:
    """A new project id, or ``value`` checked as a safe id."""
    if value is None:
        return "p-" + uuid.uuid4().hex[:12]
    if not _ID_RE.match(value):
        raise BadInput(f"invalid project id {value!r}: use 3-64 chars of a-z 0-9 _ -")
    return value


def new_project(pack: Pack, dest: Path, project_id: str | None = None, genre: str | None = None) -> ProjectInfo:
    """Copy the genre's template (None: the pack's default genre) to ``dest`` (which must not exist or be empty)
    and stamp its metadata."""
    template = pack.genre(genre)
    dest = dest.expanduser().resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BadInput(f"output directory {dest} exists and is not empty")
    dest.parent.mkdir(parents=True, exist_ok=True)
    # built beside dest and renamed into place: a crash mid-copy never leaves a half project at dest
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    staging.chmod(0o755)
    try:
        shutil.copytree(template.template_dir, staging, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("dist", "node_modules"))
        info = ProjectInfo(project_id=project_id_for(project_id), path=str(dest), pack=pack.ref,
                           created_at=time.time(), genre=template.id)
        meta = staging / META_DIR
        meta.mkdir(exist_ok=True)
        (meta / "project.json").write_text(json.dumps(asdict(info), indent=2))
        if dest.exists():
            dest.rmdir()  # empty (checked above)
        staging.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return info


def adopt_project(pack: Pack, path: Path, project_id: str) -> ProjectInfo:
    """Stamp an imported directory as a tier2 project after checking it has the pack's layout."""
    genre = pack.genre_of(path)
    pdir = ProjectDir(path)
    missing = [rel for rel in [pack.manifest.build.entry, pack.manifest.build.html]
               + [f"data/{t}" for t in genre.spec.data_tables] if not pdir.is_file(rel)]
    if missing:
        raise BadInput(f"not a {pack.ref} project: missing {', '.join(missing[:5])}")
    info = ProjectInfo(project_id=project_id_for(project_id), path=str(path), pack=pack.ref, created_at=time.time(),
                       genre=genre.id)
    pdir.write_text(META_FILE, json.dumps(asdict(info), indent=2))
    return info


def read_project(path: Path) -> ProjectInfo:
    """The project's ``.tier2/project.json`` (read without following a link: `tier2.hostio`)."""
    try:
        raw = ProjectDir(path).read_text(META_FILE, max_bytes=1_000_000)
    except FileNotFoundError:
        raise BadInput(f"{path} is not a tier2 project ({path / META_FILE} missing)") from None
    except OSError as exc:
        raise BadInput(f"{path} is not a tier2 project: {exc}") from None
    return ProjectInfo(**json.loads(raw))


def project_pack(path: Path) -> str | None:
    """The id of the pack the project at ``path`` was made with (its ``.tier2/project.json``), None when it has no
    readable metadata yet (a thread whose first run never created its project)."""
    try:
        return read_project(path).pack.partition("@")[0] or None
    except (BadInput, TypeError, ValueError):
        return None


#: how many source files, and how many bytes of each, `pack_imported` reads
_IMPORT_SCAN_FILES, _IMPORT_SCAN_BYTES = 400, 200_000


def pack_imported(path: Path, packs: Sequence[Pack]) -> Pack | None:
    """The one pack among ``packs`` whose engine package (`tier2.packs.registry.pack_of_engine_modules`) the sources
    of the project at ``path`` import — statically or dynamically, the package or a subpath of it — under the packs'
    entry folders; None when none or several do (an uploaded project says which engine it is written for this way)."""
    pdir = ProjectDir(path)
    modules: set[str] = set()
    read = 0
    for top in sorted({Path(p.manifest.build.entry).parts[0] for p in packs}):
        for rel, st in pdir.walk(top):
            if (read < _IMPORT_SCAN_FILES and rel.endswith((".js", ".mjs", ".ts"))
                    and st.st_size <= _IMPORT_SCAN_BYTES):
                read += 1
                with contextlib.suppress(OSError, ValueError):  # changed meanwhile: not evidence
                    text = pdir.read_text(rel, max_bytes=_IMPORT_SCAN_BYTES, errors="replace")
                    modules |= {_package(m) for m in _IMPORT.findall(text)}
    return pack_of_engine_modules(modules, packs)


#: a bare module specifier after ``from``, ``import`` or ``import(`` (relative and absolute paths are not bare)
_IMPORT = re.compile(r"""(?:\bfrom|\bimport)\s*\(?\s*["']([^"'./][^"']*)["']""")


def _package(specifier: str) -> str:
    """The npm package a bare specifier names (``a/b`` → ``a``, ``@s/a/b`` → ``@s/a``)."""
    parts = specifier.split("/")
    return "/".join(parts[:2]) if specifier.startswith("@") else parts[0]


def _files(root: Path) -> list[str]:
    """The project's source files (regular files reached through real directories; links are not entered), in
    path order (component by component, as `Path` sorts)."""
    pdir = ProjectDir(root)
    found = [rel for name, st in pdir.listdir() if name not in SNAPSHOT_EXCLUDES
             for rel, _ in ([(name, st)] if stat.S_ISREG(st.st_mode) else pdir.walk(name))]
    return sorted(found, key=lambda rel: rel.split("/"))


class SourceFile(TypedDict):
    path: str
    sha256: str
    bytes: int


class Snapshot(TypedDict):
    files: list[SourceFile]
    sha256: str


def snapshot(root: Path) -> Snapshot:
    """Source files with their sha256 and one snapshot hash over (path, hash) pairs."""
    files: list[SourceFile] = []
    overall = hashlib.sha256()
    pdir = ProjectDir(root)
    for rel in _files(root):
        try:
            data = pdir.read_bytes(rel, max_bytes=None)
        except OSError:
            continue  # changed under the scan, or no longer a regular file with one name
        digest = hashlib.sha256(data).hexdigest()
        files.append({"path": rel, "sha256": digest, "bytes": len(data)})
        overall.update(f"{rel}\0{digest}\n".encode())
    return {"files": files, "sha256": overall.hexdigest()}


def _template_files(root: Path) -> list[Path]:
    return [p.relative_to(root) for p in sorted(root.rglob("*"))
            if p.is_file() and not {"dist", "node_modules"} & set(p.relative_to(root).parts)]


def switch_genre(pack: Pack, path: Path, genre_id: str) -> bool:
    """Re-seed a project that is still its genre's untouched template with another genre's template (the design
    chose another genre before anyone wrote code). False, and nothing changed, when it already is that genre or
    any template file was changed, removed or replaced by a link."""
    target = pack.genre(genre_id)
    current = pack.genre_of(path)
    if current.id == target.id:
        return False
    pdir = ProjectDir(path)  # never through a link the sandbox planted (tier2.hostio)
    old = _template_files(current.template_dir)
    for rel in old:
        try:
            mine = pdir.read_bytes(rel.as_posix(), max_bytes=None)
        except OSError:
            return False
        if mine != (current.template_dir / rel).read_bytes():
            return False
    for rel in old:
        pdir.remove(rel.as_posix())
    for rel in sorted({r.parent for r in old if r.parent != Path(".")}, key=lambda r: len(r.parts), reverse=True):
        if pdir.is_dir(rel.as_posix()) and not pdir.listdir(rel.as_posix()):
            pdir.remove(rel.as_posix())  # only when empty
    for rel in _template_files(target.template_dir):
        pdir.write_bytes(rel.as_posix(), (target.template_dir / rel).read_bytes())
    info = read_project(path)
    pdir.write_text(META_FILE, json.dumps(asdict(info) | {"genre": target.id}, indent=2))
    return True
