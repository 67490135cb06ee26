"""Safe project import: archives and server directories, with traversal, links and size limits refused."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from tier2.errors import BadInput
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
    assert extract_archive(_zip({"game/index.html": b"<html>", "game/src/main.js": b"1"}), tmp_path / "a") == 2
    assert (tmp_path / "a/src/main.js").read_text() == "1"
    data = _tar(lambda tf: (_file(tf, "index.html", b"x"), _file(tf, "data/items.json", b"{}")))
    assert extract_archive(data, tmp_path / "b") == 2 and (tmp_path / "b/data/items.json").exists()


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
    with pytest.raises(BadInput, match="4 files"):
        extract_archive(_zip({f"f{i}": b"x" for i in range(4)}), tmp_path / "a", limits)
    with pytest.raises(BadInput, match="per-file limit"):
        extract_archive(_zip({"big": b"x" * 101}), tmp_path / "b", limits)
    with pytest.raises(BadInput, match="unpacks to"):
        extract_archive(_zip({"a": b"x" * 90, "b": b"x" * 90}), tmp_path / "c", limits)
    with pytest.raises(BadInput, match="neither a zip nor a tar"):
        extract_archive(b"just text", tmp_path / "d")


def test_directory_import_stays_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "import"
    (root / "game/src").mkdir(parents=True)
    (root / "game/src/main.js").write_text("1")
    assert copy_directory(root / "game", root, tmp_path / "out") == 1
    with pytest.raises(BadInput, match="outside the import root"):
        copy_directory(tmp_path, root, tmp_path / "out2")
    os.symlink(tmp_path, root / "escape")
    with pytest.raises(BadInput, match="outside the import root"):
        copy_directory(root / "escape", root, tmp_path / "out3")
    os.symlink("/etc/passwd", root / "game/src/passwd")
    with pytest.raises(BadInput, match="symlink"):
        copy_directory(root / "game", root, tmp_path / "out4")
