"""`tier2.hostio.ProjectDir` on a real filesystem: every kind of thing a hostile sandbox can plant (symlink to a
file / a directory outside, dangling symlink, FIFO, hard link to a file outside) at every name tier2 writes, creates
or reads from the host — nothing outside the project is written, created or read, and no read blocks."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.hostile_fs import DIR_NAMES, FILE_NAMES, KINDS, VICTIM, Outside, bounded, plant
from tier2.hostio import ProjectDir, UnsafePath, ensure_dir, read_file, write_file


@pytest.fixture
def outside(tmp_path: Path) -> Outside:
    return Outside(tmp_path / "outside")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src/main.js").write_text("export {};\n")
    return root


def _regular(path: Path) -> bool:
    st = os.lstat(path)
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1


@pytest.mark.parametrize("name", FILE_NAMES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_write_replaces_what_was_planted_at_the_name(kind: str, name: str, project: Path,
                                                       outside: Outside) -> None:
    plant(kind, project / name, outside)
    bounded(lambda: ProjectDir(project).write_bytes(name, b"written by tier2"))
    assert outside.unchanged()
    assert _regular(project / name) and (project / name).read_bytes() == b"written by tier2"
    assert not [p for p in (project / name).parent.iterdir() if p.name.endswith(".tier2-tmp")]


@pytest.mark.parametrize("name", FILE_NAMES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_read_never_follows_blocks_or_reads_another_name(kind: str, name: str, project: Path,
                                                            outside: Outside) -> None:
    plant(kind, project / name, outside)
    pdir = ProjectDir(project)
    with pytest.raises((UnsafePath, FileNotFoundError)) as err:
        bounded(lambda: pdir.read_bytes(name))
    if kind != "dangling":
        assert isinstance(err.value, UnsafePath) and name in str(err.value)
    assert not pdir.is_file(name) and outside.unchanged()
    with pytest.raises((UnsafePath, FileNotFoundError)):
        bounded(lambda: pdir.read_text(f"{name}/../{Path(name).name}"))  # ".." never walks


@pytest.mark.parametrize("name", DIR_NAMES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_tier2_directory_the_sandbox_replaced_becomes_a_real_one_again(kind: str, name: str, project: Path,
                                                                         outside: Outside) -> None:
    plant(kind, project / name, outside)
    pdir = ProjectDir(project)
    bounded(lambda: pdir.write_bytes(f"{name}/deep/x.json", b"{}"))
    bounded(lambda: pdir.mkdirs(f"{name}/other"))
    assert outside.unchanged() and not (outside.dir / "deep").exists() and not (outside.dir / "other").exists()
    assert not (project / name).is_symlink() and (project / name).is_dir()
    assert (project / name / "deep/x.json").read_bytes() == b"{}" and (project / name / "other").is_dir()


@pytest.mark.parametrize("kind", KINDS)
def test_a_link_on_the_way_to_a_game_file_is_refused_not_replaced(kind: str, project: Path,
                                                                  outside: Outside) -> None:
    plant(kind, project / "assets", outside)
    pdir = ProjectDir(project)
    with pytest.raises(UnsafePath, match="assets is .*not a directory"):
        bounded(lambda: pdir.write_text("assets/x.js", "export {};\n"))
    with pytest.raises((UnsafePath, FileNotFoundError)):
        pdir.read_bytes("assets/victim.json")
    assert outside.unchanged() and (project / "assets").is_symlink() == kind.startswith(("link", "dangling"))


def test_a_directory_at_a_tier2_file_name_is_replaced_and_elsewhere_refused(project: Path, outside: Outside) -> None:
    (project / "delivery.json" / "sub").mkdir(parents=True)
    (project / "delivery.json" / "sub" / "escape").symlink_to(outside.dir)
    pdir = ProjectDir(project)
    pdir.write_text("delivery.json", "{}")
    assert _regular(project / "delivery.json") and outside.unchanged()
    (project / "src/game.js").mkdir()
    with pytest.raises(UnsafePath, match="is a directory"):
        pdir.write_text("src/game.js", "x")
    assert (project / "src/game.js").is_dir()


def test_paths_stay_inside_the_project(project: Path, tmp_path: Path) -> None:
    pdir = ProjectDir(project)
    for bad in ("../outside/victim.json", "src/../../x", str(tmp_path / "elsewhere"), "a\x00b"):
        with pytest.raises(UnsafePath):
            pdir.write_text(bad, "x")
    assert pdir.rel(project / "src" / "main.js") == "src/main.js" and pdir.read_text("./src/main.js")
    with pytest.raises(UnsafePath, match="too|over the limit"):
        pdir.read_bytes("src/main.js", max_bytes=3)


def test_listing_walking_and_removing_never_enter_a_link(project: Path, outside: Outside) -> None:
    (project / "src/linked").symlink_to(outside.dir)
    (project / "docs").symlink_to(outside.dir)
    pdir = ProjectDir(project)
    assert [rel for rel, _ in pdir.walk()] == ["src/main.js"]
    assert pdir.listdir("docs") == [] and [n for n, _ in pdir.listdir("src")] == ["linked", "main.js"]
    assert dict(pdir.text_files("src")) == {"src/main.js": "export {};\n"}
    assert pdir.remove("docs") and pdir.remove("src/linked") and not pdir.remove("nothing")
    assert outside.unchanged() and not (project / "docs").exists()
    assert pdir.readlink("src/main.js") is None
    pdir.symlink("src/alias.js", "main.js")
    assert pdir.readlink("src/alias.js") == "main.js" and not pdir.is_file("src/alias.js")


@pytest.mark.parametrize("kind", KINDS)
def test_absolute_report_paths_are_anchored_at_the_project_root(kind: str, project: Path, outside: Outside) -> None:
    """Validators handle report and screenshot paths by name: under ``.tier2`` they are walked from the root."""
    plant(kind, project / ".tier2", outside)
    shot = project / ".tier2" / "reports" / "final" / "01-menu.png"
    bounded(lambda: ensure_dir(shot.parent))
    bounded(lambda: write_file(shot, b"\x89PNG"))
    assert read_file(shot) == b"\x89PNG" and outside.unchanged()
    assert not (project / ".tier2").is_symlink()
    plant(kind, shot, outside)
    with pytest.raises((UnsafePath, FileNotFoundError)):
        bounded(lambda: read_file(shot))
    assert outside.file.read_bytes() == VICTIM


def test_a_copy_in_reads_its_source_without_following_a_link(project: Path, outside: Outside,
                                                              tmp_path: Path) -> None:
    src = tmp_path / "work" / ".tier2" / "shot.png"
    src.parent.mkdir(parents=True)
    src.symlink_to(outside.file)
    with pytest.raises(UnsafePath):
        ProjectDir(project).copy_in(src, "screenshot.png")
    assert not (project / "screenshot.png").exists()
    src.unlink()
    src.write_bytes(b"png")
    ProjectDir(project).copy_in(src, "screenshot.png")
    assert (project / "screenshot.png").read_bytes() == b"png"
