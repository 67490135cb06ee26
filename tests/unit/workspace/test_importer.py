"""Safe project import: archives and server directories, with traversal, links and size limits refused."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from tier2.errors import BadInput, PayloadTooLarge
from tier2.workspace.importer import ImportLimits, copy_directory, extract_archive


def _zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _tar(add) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        add(tf)
    return buf.getvalue()


def _file(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))


def test_zip_and_tar_unpack_and_strip_a_single_top_folder(tmp_path: Path) -> None:
    assert extract_archive(_zip({"game/index.html": b"<html>", "game/src/main.js": b"1"}), tmp_path / "a").files == 2
    assert (tmp_path / "a/src/main.js").read_text() == "1"
    data = _tar(lambda tf: (_file(tf, "index.html", b"x"), _file(tf, "data/items.json", b"{}")))
    assert extract_archive(data, tmp_path / "b").files == 2 and (tmp_path / "b/data/items.json").exists()


@pytest.mark.parametrize("name", ["../evil.js", "/etc/cron.d/evil", "game/../../evil", "..\\evil.js"])
def test_traversal_is_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="escapes"):
        extract_archive(_zip({name: b"x", "ok.js": b"1"}), tmp_path / "p")
    assert not (tmp_path / "p").exists() and not (tmp_path.parent / "evil.js").exists()


def test_links_and_devices_are_refused(tmp_path: Path) -> None:
    def symlink(tf: tarfile.TarFile) -> None:
        info = tarfile.TarInfo("src/link")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(info)

    def fifo(tf: tarfile.TarFile) -> None:
        info = tarfile.TarInfo("pipe")
        info.type = tarfile.FIFOTYPE
        tf.addfile(info)

    with pytest.raises(BadInput, match="link"):
        extract_archive(_tar(symlink), tmp_path / "a")
    with pytest.raises(BadInput, match="not a regular file"):
        extract_archive(_tar(fifo), tmp_path / "b")


def test_limits(tmp_path: Path) -> None:
    limits = ImportLimits(max_files=3, max_file_bytes=100, max_total_bytes=150)
    with pytest.raises(BadInput, match="more than 3 entries"):
        extract_archive(_zip({f"f{i}": b"x" for i in range(4)}), tmp_path / "a", limits)
    with pytest.raises(BadInput, match="per-file limit"):
        extract_archive(_zip({"big": b"x" * 101}), tmp_path / "b", limits)
    with pytest.raises(BadInput, match="unpacks to more than"):
        extract_archive(_zip({"a": b"x" * 90, "b": b"x" * 90}), tmp_path / "c", limits)
    with pytest.raises(BadInput, match="neither a zip nor a tar"):
        extract_archive(b"just text", tmp_path / "d")


def test_directory_import_stays_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "import"
    (root / "game/src").mkdir(parents=True)
    (root / "game/src/main.js").write_text("1")
    assert copy_directory(root / "game", root, tmp_path / "out").files == 1
    with pytest.raises(BadInput, match="outside the import root"):
        copy_directory(tmp_path, root, tmp_path / "out2")
    os.symlink(tmp_path, root / "escape")
    with pytest.raises(BadInput, match="outside the import root"):
        copy_directory(root / "escape", root, tmp_path / "out3")
    os.symlink("/etc/passwd", root / "game/src/passwd")
    with pytest.raises(BadInput, match="symlink"):
        copy_directory(root / "game", root, tmp_path / "out4")


def _left_behind(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir())


def test_zip_bomb_stops_after_the_first_megabyte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """200 MB of zeros (declared honestly, ~200 KB compressed) under generous size limits: refused on ratio."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("zeros.bin", "w", force_zip64=True) as f:
        for _ in range(200):
            f.write(bytes(1 << 20))
    limits = ImportLimits(max_file_bytes=10**9, max_total_bytes=10**9)
    inflated = _count_inflated(monkeypatch)
    with pytest.raises(PayloadTooLarge, match="ratio"):
        extract_archive(buf.getvalue(), tmp_path / "p", limits)
    assert inflated[0] <= 2 << 20, inflated  # at most the first MB is inflated (past the ratio grace), never 200 MB
    assert _left_behind(tmp_path) == []


def _count_inflated(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes every zip entry read decompresses from now on (the observable work an import did)."""
    inflated, read = [0], zipfile.ZipExtFile.read

    def counting(self: zipfile.ZipExtFile, n: int | None = -1) -> bytes:
        data = read(self, n)
        inflated[0] += len(data)
        return data

    monkeypatch.setattr(zipfile.ZipExtFile, "read", counting)
    return inflated


def tar_bomb(size: int) -> bytes:
    """A .tar.gz whose one member is ``size`` bytes of zeros (a header and the data, gzip-compressed)."""
    import gzip

    info = tarfile.TarInfo("game/big.bin")
    info.size = size
    return gzip.compress(info.tobuf() + bytes(size) + bytes(1024), compresslevel=1)


def test_tar_bomb_declared_size_refused_before_reading_data(tmp_path: Path) -> None:
    with pytest.raises(PayloadTooLarge, match="per-file limit"):
        extract_archive(tar_bomb(30_000_000), tmp_path / "p", ImportLimits(max_file_bytes=20_000_000))
    with pytest.raises(PayloadTooLarge, match="ratio"):  # under the size limits: the stream's ratio stops it
        extract_archive(tar_bomb(30_000_000), tmp_path / "q", ImportLimits(max_file_bytes=10**9))
    assert _left_behind(tmp_path) == []


def test_too_many_entries_clashes_and_duplicates(tmp_path: Path) -> None:
    with pytest.raises(PayloadTooLarge, match="more than 5 entries"):
        extract_archive(_zip({f"f{i}": b"x" for i in range(50)}), tmp_path / "a", ImportLimits(max_files=5))
    with pytest.raises(BadInput, match="clashes"):
        extract_archive(_zip({"a": b"file", "a/b": b"inside"}), tmp_path / "b")
    with pytest.raises(BadInput, match="clashes"):
        extract_archive(_tar(lambda tf: (_file(tf, "x/y", b"1"), _file(tf, "x", b"2"))), tmp_path / "c")
    with pytest.raises(BadInput, match="duplicate"):
        extract_archive(_tar(lambda tf: (_file(tf, "x", b"1"), _file(tf, "x", b"2"))), tmp_path / "d")
    with pytest.raises(BadInput, match="deeper"):
        extract_archive(_zip({"/".join("d" * 30) + "/f": b"1"}), tmp_path / "e")
    with pytest.raises(BadInput, match="over 240 characters"):
        extract_archive(_zip({"n" * 300: b"1"}), tmp_path / "f")
    assert _left_behind(tmp_path) == []


def test_reserved_names_are_stripped_and_reported(tmp_path: Path) -> None:
    data = _zip({"game/index.html": b"<html>", "game/.mcp": b'{"mcpServers": {"x": {"command": "sh"}}}',
                 "game/skills/evil/SKILL.md": b"x", "game/dist/index.html": b"old", "game/delivery.json": b"{}"})
    result = extract_archive(data, tmp_path / "p")
    assert result.files == 1 and result.stripped == [".mcp", "delivery.json", "dist", "skills"]
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["index.html"]


def test_corrupt_archives_are_bad_input_and_leave_nothing(tmp_path: Path) -> None:
    good = _zip({"game/index.html": b"<html>" * 1000, "game/src/main.js": b"1" * 1000})
    broken = good[:200] + b"\xff" * 50 + good[250:]
    with pytest.raises(BadInput):
        extract_archive(broken, tmp_path / "a")
    with pytest.raises(BadInput):
        extract_archive(good[: len(good) // 2], tmp_path / "b")
    with pytest.raises(BadInput):
        extract_archive(b"\x1f\x8b\x08\x00garbage-not-gzip", tmp_path / "c")
    assert _left_behind(tmp_path) == []
