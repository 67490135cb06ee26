"""Load an existing game project from an uploaded archive or a server directory — safely.

Archives are unpacked entry by entry with every path checked: no absolute paths, no ``..``, no symlinks or
hard links, no devices/FIFOs, and limits on the number of files, each file's size and the total size. A
server directory must resolve (symlinks included) inside the configured import root; its regular files are
copied (symlinks are refused, so nothing outside the root can be reached through one).
"""

from __future__ import annotations

import io
import shutil
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from tier2.errors import BadInput

__all__ = ["ImportLimits", "extract_archive", "copy_directory", "archive_kind"]


@dataclass(frozen=True)
class ImportLimits:
    max_files: int = 2000
    max_file_bytes: int = 20_000_000
    max_total_bytes: int = 100_000_000


def archive_kind(data: bytes) -> str:
    if data[:4] == b"PK\x03\x04":
        return "zip"
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*"):
            return "tar"
    except tarfile.TarError:
        raise BadInput("upload is neither a zip nor a tar archive") from None


def _safe_rel(name: str) -> PurePosixPath:
    rel = PurePosixPath(name.replace("\\", "/"))
    if rel.is_absolute() or ".." in rel.parts or not rel.parts or name.startswith(("/", "\\")):
        raise BadInput(f"archive entry {name!r} escapes the project (absolute path or '..')")
    return rel


def _strip_common_root(names: list[PurePosixPath]) -> int:
    """1 when every entry sits under one top-level folder (``game/src/...``), else 0."""
    tops = {n.parts[0] for n in names}
    return 1 if len(tops) == 1 and all(len(n.parts) > 1 for n in names) else 0


def extract_archive(data: bytes, dest: Path, limits: ImportLimits = ImportLimits()) -> int:
    """Unpack a zip/tar archive into ``dest`` (which must not exist); returns the number of files."""
    kind = archive_kind(data)
    entries: list[tuple[PurePosixPath, int, object]] = []
    if kind == "zip":
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise BadInput(f"archive entry {info.filename!r} is a symlink: refused")
                entries.append((_safe_rel(info.filename), info.file_size, info))
            _write(entries, dest, limits, lambda e: zf.read(e))  # type: ignore[arg-type]
    else:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tf:
            for member in tf.getmembers():
                if member.isdir():
                    continue
                if member.issym() or member.islnk():
                    raise BadInput(f"archive entry {member.name!r} is a link: refused")
                if not member.isfile():
                    raise BadInput(f"archive entry {member.name!r} is not a regular file: refused")
                entries.append((_safe_rel(member.name), member.size, member))
            _write(entries, dest, limits, lambda m: tf.extractfile(m).read())  # type: ignore[arg-type,union-attr]
    return len(entries)


def _write(entries: list[tuple[PurePosixPath, int, object]], dest: Path, limits: ImportLimits, read) -> None:
    if not entries:
        raise BadInput("archive is empty")
    if len(entries) > limits.max_files:
        raise BadInput(f"archive has {len(entries)} files; the limit is {limits.max_files}")
    total = sum(size for _, size, _ in entries)
    if total > limits.max_total_bytes:
        raise BadInput(f"archive unpacks to {total} bytes; the limit is {limits.max_total_bytes}")
    big = [str(rel) for rel, size, _ in entries if size > limits.max_file_bytes]
    if big:
        raise BadInput(f"{big[0]} is over the per-file limit of {limits.max_file_bytes} bytes")
    skip = _strip_common_root([rel for rel, _, _ in entries])
    dest.mkdir(parents=True)
    written = 0
    for rel, _size, handle in entries:
        target = dest.joinpath(*rel.parts[skip:])
        data = read(handle)
        written += len(data)
        if len(data) > limits.max_file_bytes or written > limits.max_total_bytes:  # sizes in headers can lie
            shutil.rmtree(dest, ignore_errors=True)
            raise BadInput("archive content is larger than its headers claim: refused")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def copy_directory(src: Path, allowed_root: Path, dest: Path, limits: ImportLimits = ImportLimits()) -> int:
    """Copy a server directory that lies inside ``allowed_root`` into ``dest``; returns the number of files."""
    root = allowed_root.resolve()
    real = src.resolve()
    if not real.is_relative_to(root):
        raise BadInput(f"{src} is outside the import root {root}")
    if not real.is_dir():
        raise BadInput(f"{src} is not a directory")
    files: list[Path] = []
    for path in sorted(real.rglob("*")):
        rel = path.relative_to(real)
        if rel.parts and rel.parts[0] in {"node_modules", "dist", ".git", ".tier2", "sessions", "skills"}:
            continue
        if path.is_symlink():
            raise BadInput(f"{rel} is a symlink: refused")
        if path.is_file():
            files.append(path)
    if len(files) > limits.max_files:
        raise BadInput(f"{src} has {len(files)} files; the limit is {limits.max_files}")
    sizes = [p.stat().st_size for p in files]
    if sum(sizes) > limits.max_total_bytes or any(s > limits.max_file_bytes for s in sizes):
        raise BadInput(f"{src} is over the size limits ({limits.max_total_bytes} total, "
                       f"{limits.max_file_bytes} per file)")
    for path in files:
        target = dest / path.relative_to(real)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return len(files)
