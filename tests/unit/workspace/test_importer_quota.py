"""The importer charges the tenant's disk quota what an import unpacks to (issue #21, M7), on real files: the room
left is checked against a zip's declared total before anything is written, and against every byte as a tar streams
or a server directory is copied; passing it is `QuotaExceeded` (used and limit named) and leaves nothing behind."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from tier2.errors import QuotaExceeded
from tier2.workspace.importer import ImportLimits, copy_directory, extract_archive

ROOM = ImportLimits(max_ratio=1e6, disk_limit=1_000_000, disk_used=400_000)  # 600 KB left


def _zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _tar(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.parametrize("pack", [_zip, _tar])
def test_an_archive_is_charged_what_it_unpacks_to(pack, tmp_path: Path) -> None:
    small = pack({"game/a.txt": bytes(300_000)})
    extract_archive(small, tmp_path / "fits", ROOM)  # 300 KB of 600 KB left
    bomb = pack({"game/a.txt": bytes(300_000), "game/b.txt": bytes(400_000)})
    assert len(bomb) < 10_000  # charged small by its size on the wire
    with pytest.raises(QuotaExceeded) as refused:
        extract_archive(bomb, tmp_path / "bomb", ROOM)
    assert (refused.value.quota, refused.value.used, refused.value.limit) == ("disk_bytes", 400_000, 1_000_000)
    assert "600000 bytes left" in str(refused.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fits"]  # no project, no staging directory left


def test_a_zip_over_the_room_is_refused_before_a_byte_is_written(tmp_path: Path, monkeypatch) -> None:
    written: list[Path] = []
    real_open = open

    def spy(path, mode="r", *args, **kwargs):  # the importer writes entries with open(target, "xb")
        if "x" in str(mode):
            written.append(Path(path))
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", spy)
    with pytest.raises(QuotaExceeded):
        extract_archive(_zip({"game/a.txt": bytes(100), "game/b.txt": bytes(700_000)}), tmp_path / "p", ROOM)
    assert written == []


def test_a_server_directory_copy_counts_against_the_room(tmp_path: Path) -> None:
    src = tmp_path / "import" / "game"
    src.mkdir(parents=True)
    (src / "a.bin").write_bytes(bytes(350_000))
    (src / "b.bin").write_bytes(bytes(350_000))
    with pytest.raises(QuotaExceeded):
        copy_directory(src, tmp_path / "import", tmp_path / "dest", ROOM)
    assert not (tmp_path / "dest").exists()
    assert copy_directory(src, tmp_path / "import", tmp_path / "dest", ImportLimits()).files == 2  # no quota: fine
