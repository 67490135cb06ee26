"""Load an existing game project from an uploaded archive or a server directory — safely.

Every limit is checked while the archive is read, never after unpacking it whole: the entry count (for a zip
from its central directory before anything is parsed into memory), each entry's declared size (zip header, tar
member size), the bytes actually written (stopping the moment a file or the total passes its limit), the
compression ratio of each zip entry and of the whole archive (past the first MB), the length and depth of every
name, and PAX/GNU long-name headers. Refused outright: absolute names, ``..``, symlinks and hard links,
devices/FIFOs/sparse files, names that are not clean text, duplicate names and file/directory clashes (``a`` as a
file and ``a/b``). A corrupt archive is a `BadInput`, a limit a `PayloadTooLarge`.

With a tenant's disk quota (`ImportLimits.disk_limit`) the unpacked bytes count against the room it has left — a
zip's declared total before anything is written, every byte as it is written — and passing it is a `QuotaExceeded`:
an archive is charged what it expands to, not what it weighs.

Unpacking happens in a staging directory beside ``dest``, renamed into place only when it all succeeded; on any
error nothing is left behind. A single top-level folder (``game/src/...``) is hoisted. Reserved top-level names —
tier2 and AgentScope runtime files such as ``.mcp`` (an MCP config that launches commands), ``skills/``,
``sessions/``, ``.tier2/``, ``dist/``, ``delivery.json`` — are configuration or output, never project input:
they are stripped and reported in `Imported.stripped`.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import lzma
import os
import re
import shutil
import stat
import struct
import tarfile
import uuid
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from tier2.errors import BadInput, PayloadTooLarge, QuotaExceeded
from tier2.workspace.projects import SNAPSHOT_EXCLUDES

__all__ = ["ImportLimits", "Imported", "RESERVED_NAMES", "extract_archive", "copy_directory", "archive_kind"]

#: top-level names an imported project may not bring: tier2/AgentScope runtime files and build output
RESERVED_NAMES = SNAPSHOT_EXCLUDES
_CHUNK = 1 << 16
_RATIO_GRACE_BYTES = 1 << 20  # ratios are only judged past this many unpacked bytes (tiny files compress a lot)
_MAX_HEADER_BYTES = 64 << 10  # a PAX / GNU long-name header's payload
_BAD_NAME = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")
_EOCD, _EOCD64_LOCATOR, _CENTRAL = b"PK\x05\x06", b"PK\x06\x07", b"PK\x01\x02"


@dataclass(frozen=True)
class ImportLimits:
    max_files: int = 2000
    max_file_bytes: int = 20_000_000
    max_total_bytes: int = 100_000_000
    max_ratio: float = 100.0
    max_name_chars: int = 240
    max_depth: int = 24
    #: the tenant's disk quota (``disk_bytes``) and what its other projects and imports use (None: no quota)
    disk_limit: int | None = None
    disk_used: int = 0

    @classmethod
    def from_config(cls, cfg: Any) -> ImportLimits:
        """From `tier2.settings.loader.ImportConfig` (``[imports]`` in ``config/security/*.toml``)."""
        return cls(cfg.max_files, cfg.max_file_bytes, cfg.max_total_bytes, cfg.max_ratio, cfg.max_name_chars,
                   cfg.max_depth)

    def over_quota(self, unpacked: int) -> QuotaExceeded | None:
        """The error when ``unpacked`` bytes do not fit the room the tenant's disk quota leaves (else None)."""
        if self.disk_limit is None or self.disk_used + unpacked <= self.disk_limit:
            return None
        return QuotaExceeded("disk_bytes", self.disk_used, self.disk_limit,
                             f"the tenant's projects use {self.disk_used} of {self.disk_limit} bytes (disk_bytes); "
                             f"this import unpacks to more than the {self.disk_limit - self.disk_used} bytes left")


@dataclass(frozen=True)
class Imported:
    files: int
    stripped: list[str] = field(default_factory=list)


class _Tally:
    """Entries, names and bytes seen so far, checked against the limits as they grow."""

    def __init__(self, limits: ImportLimits) -> None:
        self.limits, self.entries, self.written = limits, 0, 0
        self.archive_bytes = 0  # a zip's size: the whole archive's ratio (a tar checks its decompressed stream)
        self.files: set[PurePosixPath] = set()
        self.dirs: set[PurePosixPath] = set()

    def entry(self, name: str, is_dir: bool) -> PurePosixPath:
        lim = self.limits
        self.entries += 1
        if self.entries > lim.max_files:
            raise PayloadTooLarge(f"archive has more than {lim.max_files} entries")
        if len(name) > lim.max_name_chars:
            raise BadInput(f"an archive entry name is over {lim.max_name_chars} characters")
        if _BAD_NAME.search(name):
            raise BadInput("an archive entry name contains a control character or is not valid UTF-8")
        rel = PurePosixPath(name.replace("\\", "/"))
        if rel.is_absolute() or ".." in rel.parts or not rel.parts or name.startswith(("/", "\\")):
            raise BadInput(f"archive entry {name!r} escapes the project (absolute path or '..')")
        if len(rel.parts) > lim.max_depth or any(len(p.encode()) > 255 for p in rel.parts):
            raise BadInput(f"archive entry {name!r} is nested deeper than {lim.max_depth} or has a too-long name")
        parents = set(rel.parents)
        if rel in self.files or (not is_dir and rel in self.dirs) or parents & self.files:
            raise BadInput(f"archive entry {name!r} is a duplicate or clashes with a file/directory of the same name")
        (self.dirs if is_dir else self.files).add(rel)
        self.dirs |= parents
        return rel

    def declared(self, name: str, size: int) -> None:
        if size > self.limits.max_file_bytes:
            raise PayloadTooLarge(f"{name} is over the per-file limit of {self.limits.max_file_bytes} bytes")
        if self.written + size > self.limits.max_total_bytes:
            raise PayloadTooLarge(f"archive unpacks to more than the limit of {self.limits.max_total_bytes} bytes")
        if (over := self.limits.over_quota(self.written + size)) is not None:
            raise over

    def ratio_ok(self, unpacked: int, packed: int) -> bool:
        return unpacked <= _RATIO_GRACE_BYTES or unpacked <= self.limits.max_ratio * max(packed, 1)

    def copy(self, src: IO[bytes], target: Path, packed: int | None = None) -> None:
        """Stream one entry to ``target``, stopping as soon as a limit is crossed."""
        lim, size = self.limits, 0
        with open(target, "xb") as out:
            while chunk := src.read(_CHUNK):
                size += len(chunk)
                self.written += len(chunk)
                if size > lim.max_file_bytes:
                    raise PayloadTooLarge(f"an entry is over the per-file limit of {lim.max_file_bytes} bytes "
                                          "(larger than its header claims)")
                if self.written > lim.max_total_bytes:
                    raise PayloadTooLarge(f"archive unpacks to more than the limit of {lim.max_total_bytes} bytes")
                if (over := lim.over_quota(self.written)) is not None:
                    raise over
                if packed is not None and not self.ratio_ok(size, packed):
                    raise PayloadTooLarge(f"an entry's compression ratio is over {lim.max_ratio:g}: refused")
                if self.archive_bytes and not self.ratio_ok(self.written, self.archive_bytes):
                    raise PayloadTooLarge(f"archive compression ratio is over {lim.max_ratio:g}: refused")
                out.write(chunk)


class _Counted:
    """A read-only stream that counts its bytes and calls ``check`` after every read."""

    def __init__(self, raw: IO[bytes], check: Callable[[int], None] | None = None) -> None:
        self.raw, self.count, self.check = raw, 0, check

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n if n is not None and n >= 0 else _CHUNK)
        self.count += len(data)
        if self.check is not None:
            self.check(self.count)
        return data


class _CheckedTarInfo(tarfile.TarInfo):
    """Refuses an oversized PAX / GNU long-name header before tarfile reads its payload into memory."""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
                         tarfile.GNUTYPE_LONGLINK) and self.size > _MAX_HEADER_BYTES:
            raise PayloadTooLarge("archive has an oversized extended header")
        # typeshed gap: the private TarInfo._proc_member is not in the stubs (so its result is untyped too)
        return super()._proc_member(tarfile_)  # type: ignore[misc,no-any-return]


def archive_kind(head: bytes) -> str:
    """``zip`` or ``tar`` (plain, gzip, bzip2 or xz) from the first bytes; a plain tar is confirmed later."""
    if head[:4] in (b"PK\x03\x04", _EOCD):
        return "zip"
    return "tar"


def _zip_entry_count(fh: IO[bytes], size: int, limit: int) -> None:
    """Walk the central directory's fixed headers (nothing else is parsed) and refuse over ``limit`` entries."""
    tail_at = max(0, size - 65_557)
    fh.seek(tail_at)
    tail = fh.read()
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) < at + 22:
        raise BadInput("upload is not a valid zip archive (no end of central directory)")
    cd_size = struct.unpack("<I", tail[at + 12:at + 16])[0]
    end = tail_at + at
    if cd_size == 0xFFFFFFFF and at >= 20 and tail[at - 20:at - 16] == _EOCD64_LOCATOR:
        rec_at = struct.unpack("<Q", tail[at - 12:at - 4])[0]
        fh.seek(rec_at)
        rec = fh.read(56)
        if len(rec) < 56:
            raise BadInput("upload is not a valid zip archive (bad zip64 record)")
        cd_size, end = struct.unpack("<Q", rec[40:48])[0], rec_at
    pos, count = end - cd_size, 0
    if pos < 0:
        raise BadInput("upload is not a valid zip archive (bad central directory)")
    while pos < end:
        fh.seek(pos)
        hdr = fh.read(46)
        if len(hdr) < 46 or hdr[:4] != _CENTRAL:
            raise BadInput("upload is not a valid zip archive (bad central directory)")
        count += 1
        if count > limit:
            raise PayloadTooLarge(f"archive has more than {limit} entries")
        n, m, k = struct.unpack("<HHH", hdr[28:34])
        pos += 46 + n + m + k
    fh.seek(0)


def _unzip(fh: IO[bytes], size: int, staging: Path, tally: _Tally) -> None:
    _zip_entry_count(fh, size, tally.limits.max_files)
    tally.archive_bytes = size
    with zipfile.ZipFile(fh) as zf:
        if (over := tally.limits.over_quota(sum(i.file_size for i in zf.infolist()))) is not None:
            raise over  # the declared total, before a byte is written (the stream is still checked as it unpacks)
        for info in zf.infolist():
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise BadInput(f"archive entry {info.filename!r} is a symlink: refused")
            kind = stat.S_IFMT(mode)
            if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                raise BadInput(f"archive entry {info.filename!r} is not a regular file: refused")
            rel = tally.entry(info.filename, info.is_dir())
            target = staging.joinpath(*rel.parts)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            tally.declared(info.filename, info.file_size)
            if not tally.ratio_ok(info.file_size, info.compress_size):
                raise PayloadTooLarge(f"{info.filename}: compression ratio over {tally.limits.max_ratio:g}: refused")
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src:
                tally.copy(src, target, packed=info.compress_size)


def _decompressor(head: bytes, fh: Any) -> Any:
    if head[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=fh, mode="rb")
    if head[:3] == b"BZh":
        return bz2.BZ2File(fh, mode="rb")
    if head == b"\xfd7zXZ\x00":
        return lzma.LZMAFile(fh, mode="rb")
    return fh


def _untar(fh: IO[bytes], staging: Path, tally: _Tally) -> None:
    lim = tally.limits
    head = fh.read(6)
    fh.seek(0)
    packed = _Counted(fh)
    cap = lim.max_total_bytes + (lim.max_files + 16) * 2048 + _MAX_HEADER_BYTES * 4  # data + headers, padding

    def check(unpacked: int) -> None:
        if unpacked > cap:
            raise PayloadTooLarge(f"archive unpacks to more than the limit of {lim.max_total_bytes} bytes")
        if not tally.ratio_ok(unpacked, packed.count):
            raise PayloadTooLarge(f"archive compression ratio is over {lim.max_ratio:g}: refused")

    stream = _Counted(_decompressor(head, packed), check)
    try:
        tf = tarfile.open(fileobj=stream, mode="r|", tarinfo=_CheckedTarInfo)  # type: ignore[call-overload]
    except tarfile.ReadError:
        raise BadInput("upload is neither a zip nor a tar archive") from None
    with tf:
        for member in tf:
            if member.issym() or member.islnk():
                raise BadInput(f"archive entry {member.name!r} is a link: refused")
            if not (member.isdir() or member.isfile()) or member.issparse():
                raise BadInput(f"archive entry {member.name!r} is not a regular file: refused")
            rel = tally.entry(member.name, member.isdir())
            target = staging.joinpath(*rel.parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            tally.declared(member.name, member.size)
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tf.extractfile(member)
            assert src is not None
            tally.copy(src, target)


_CORRUPT = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, lzma.LZMAError, tarfile.TarError, EOFError,
            OSError, RuntimeError, NotImplementedError, ValueError, struct.error, UnicodeError)


def _finish(staging: Path, dest: Path) -> Imported:
    """Hoist a single top-level folder, strip reserved names, move into place."""
    top = list(staging.iterdir())
    if not top:
        raise BadInput("archive is empty")
    root = top[0] if len(top) == 1 and top[0].is_dir() and not top[0].is_symlink() else staging
    stripped = sorted(p.name for p in root.iterdir() if p.name in RESERVED_NAMES)
    for name in stripped:
        path = root / name
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    files = sum(1 for p in root.rglob("*") if p.is_file())
    if not files:
        raise BadInput("archive has no project files" + (f" (stripped: {', '.join(stripped)})" if stripped else ""))
    root.rename(dest)
    return Imported(files, stripped)


def _staging_for(dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        raise BadInput("the destination project already exists")
    staging = dest.parent / f".import-{dest.name}-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    return staging


def extract_archive(source: bytes | Path, dest: Path, limits: ImportLimits = ImportLimits()) -> Imported:
    """Unpack a zip/tar archive (bytes or a file) into ``dest`` (which must not exist)."""
    import io

    fh: IO[bytes] = io.BytesIO(source) if isinstance(source, bytes) else open(source, "rb")  # noqa: SIM115
    staging = _staging_for(dest)
    try:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(0)
        tally = _Tally(limits)
        try:
            if archive_kind(fh.read(4)) == "zip":
                fh.seek(0)
                _unzip(fh, size, staging, tally)
            else:
                fh.seek(0)
                _untar(fh, staging, tally)
        except BadInput:
            raise
        except _CORRUPT as exc:
            if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EROFS):
                raise
            kind = "neither a zip nor a tar archive" if tally.entries == 0 else "a corrupt or unsupported archive"
            raise BadInput(f"upload is {kind} ({type(exc).__name__})") from None
        return _finish(staging, dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        fh.close()
        shutil.rmtree(staging, ignore_errors=True)


def copy_directory(src: Path, allowed_root: Path, dest: Path, limits: ImportLimits = ImportLimits()) -> Imported:
    """Copy a server directory that lies inside ``allowed_root`` into ``dest`` (reserved names stripped)."""
    root = allowed_root.resolve()
    real = src.resolve()
    if not real.is_relative_to(root):
        raise BadInput(f"{src} is outside the import root")
    if not real.is_dir():
        raise BadInput(f"{src} is not a directory")
    staging = _staging_for(dest)
    tally = _Tally(limits)
    stripped: set[str] = set()
    try:
        for path in sorted(real.rglob("*")):
            rel = path.relative_to(real)
            if rel.parts[0] in RESERVED_NAMES:
                stripped.add(rel.parts[0])
                continue
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                raise BadInput(f"{rel} is a symlink: refused")
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                raise BadInput(f"{rel} is not a regular file: refused")
            is_dir = stat.S_ISDIR(st.st_mode)
            tally.entry(rel.as_posix(), is_dir)
            target = staging / rel
            if is_dir:
                target.mkdir(parents=True, exist_ok=True)
                continue
            tally.declared(rel.as_posix(), st.st_size)
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "rb") as fh:
                tally.copy(fh, target)
        staging.rename(dest)
        return Imported(len(tally.files), sorted(stripped))
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
