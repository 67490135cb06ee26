"""Project file trees as content-addressed manifests: scan a project, and make a project hold exactly a manifest.

A manifest lists every project file that is not build output or tier2/AgentScope runtime (`SNAPSHOT_EXCLUDES`):
its path, sha256 and mode, or a symlink's target. Its id is the sha256 of its canonical JSON, so equal trees have
equal ids. `apply` deletes what the manifest does not hold and writes what differs — never through a symlink, never
outside the project (`tier2.hostio`) — so after it the project holds exactly the manifest's files (the storage of
the blobs is the caller's: `tier2.store.snapshots`). A file over the blob cap (``snapshot_blob_bytes``) is never
read: the scan refuses the snapshot with `QuotaExceeded` (a file that cannot be stored could not be restored either).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tier2.errors import QuotaExceeded
from tier2.hostio import ProjectDir
from tier2.workspace.projects import SNAPSHOT_EXCLUDES

__all__ = ["Entry", "Manifest", "scan", "apply"]


@dataclass(frozen=True)
class Entry:
    path: str
    sha256: str = ""  # regular file
    mode: int = 0o644
    link: str | None = None  # symlink target (stored as is, never followed)

    def to_json(self) -> list[object]:
        return [self.path, self.sha256, self.mode, self.link]


@dataclass
class Manifest:
    entries: list[Entry] = field(default_factory=list)

    def canonical(self) -> str:
        return json.dumps([e.to_json() for e in sorted(self.entries, key=lambda e: e.path)], separators=(",", ":"))

    @property
    def id(self) -> str:
        return hashlib.sha256(self.canonical().encode()).hexdigest()[:32]

    @classmethod
    def loads(cls, raw: str) -> Manifest:
        return cls([Entry(p, h, int(m), link) for p, h, m, link in json.loads(raw)])


def _walk(root: Path) -> list[tuple[str, os.stat_result]]:
    out: list[tuple[str, os.stat_result]] = []
    for dirpath, dirnames, filenames, dirfd in os.fwalk(root, follow_symlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d not in SNAPSHOT_EXCLUDES]
            filenames = [f for f in filenames if f not in SNAPSHOT_EXCLUDES]
        for name in dirnames[:]:  # a symlink to a directory is an entry, not a tree to enter
            if stat.S_ISLNK(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode):
                dirnames.remove(name)
                filenames.append(name)
        for name in filenames:
            rel = os.path.normpath(os.path.join(rel_dir, name))
            out.append((rel, os.stat(name, dir_fd=dirfd, follow_symlinks=False)))
    return sorted(out)


def _too_large(rel: str, size: int, cap: int) -> QuotaExceeded:
    return QuotaExceeded("snapshot_blob_bytes", size, cap,
                         f"{rel} is {size} bytes, over the snapshot cap of {cap} bytes per file (snapshot_blob_bytes): "
                         "the project cannot be snapshotted with it")


def scan(root: Path, max_blob_bytes: int | None = None) -> tuple[Manifest, dict[str, bytes]]:
    """The project's manifest and the bytes of its files by sha256 (other special files are skipped). Every
    directory and file is opened relative to its parent's descriptor without following symlinks, so a process
    swapping a directory for a symlink meanwhile cannot make the scan read outside the project. A file over
    ``max_blob_bytes`` is `QuotaExceeded` before it is read (and if it grows past it while read)."""
    entries: list[Entry] = []
    blobs: dict[str, bytes] = {}
    for dirpath, dirnames, filenames, dirfd in os.fwalk(root, follow_symlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d not in SNAPSHOT_EXCLUDES]
            filenames = [f for f in filenames if f not in SNAPSHOT_EXCLUDES]
        names = list(filenames)
        for name in dirnames[:]:
            if stat.S_ISLNK(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode):
                dirnames.remove(name)
                names.append(name)
        for name in names:
            rel = os.path.normpath(os.path.join(rel_dir, name))
            try:
                st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    entries.append(Entry(rel, link=os.readlink(name, dir_fd=dirfd)))
                elif stat.S_ISREG(st.st_mode):
                    if max_blob_bytes is not None and st.st_size > max_blob_bytes:
                        raise _too_large(rel, st.st_size, max_blob_bytes)
                    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dirfd)
                    with os.fdopen(fd, "rb") as fh:
                        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a FIFO/device meanwhile
                            continue
                        data = fh.read() if max_blob_bytes is None else fh.read(max_blob_bytes + 1)
                    if max_blob_bytes is not None and len(data) > max_blob_bytes:
                        raise _too_large(rel, len(data), max_blob_bytes)
                    digest = hashlib.sha256(data).hexdigest()
                    blobs[digest] = data
                    entries.append(Entry(rel, digest, stat.S_IMODE(st.st_mode) & 0o755))
            except OSError:
                continue  # changed under the scan (a running command): the next write step's snapshot has it
    return Manifest(sorted(entries, key=lambda e: e.path)), blobs


def apply(root: Path, manifest: Manifest, blob: Callable[[str], bytes]) -> int:
    """Make ``root`` hold exactly ``manifest`` (outside `SNAPSHOT_EXCLUDES`); returns how many entries changed.
    Every access goes through `tier2.hostio.ProjectDir` (relative to directory descriptors, no link followed)."""
    root = root.resolve()
    root.mkdir(parents=True, exist_ok=True)
    pdir = ProjectDir(root)
    want = {e.path: e for e in manifest.entries}
    changed = 0
    for rel, st in reversed(_walk(root)):
        entry = want.get(rel)
        same = entry is not None and (
            (entry.link is not None and stat.S_ISLNK(st.st_mode) and pdir.readlink(rel) == entry.link)
            or (entry.link is None and stat.S_ISREG(st.st_mode)))
        if not same:
            pdir.remove(rel)  # (a symlink at a directory's place goes here too: the manifest has no such entry)
            changed += 1
    for entry in manifest.entries:
        if entry.link is not None:
            now = pdir.lstat(entry.path)
            if now is None or not stat.S_ISLNK(now.st_mode):
                if now is not None:
                    pdir.remove(entry.path)
                pdir.symlink(entry.path, entry.link)
                changed += 1
            continue
        try:
            current: bytes | None = pdir.read_bytes(entry.path, max_bytes=None)
        except OSError:  # missing, or not a regular file with one name: replaced below
            current = None
        if current is not None and hashlib.sha256(current).hexdigest() == entry.sha256:
            now = pdir.lstat(entry.path)
            if now is not None and stat.S_IMODE(now.st_mode) & 0o755 != entry.mode:
                pdir.chmod(entry.path, entry.mode)
            continue
        pdir.write_bytes(entry.path, blob(entry.sha256), mode=entry.mode)
        changed += 1
    keep = {str(Path(e.path).parent) for e in manifest.entries}
    keep |= {str(p) for e in manifest.entries for p in Path(e.path).parents}
    for dirpath, dirnames, _files, dirfd in os.fwalk(root, topdown=False, follow_symlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        for name in dirnames:
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if rel.split(os.sep, 1)[0] in SNAPSHOT_EXCLUDES or rel in keep:
                continue
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=dirfd)  # an empty directory the snapshot did not have (else: not empty)
    return changed
