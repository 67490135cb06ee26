"""tier2's own host-side writers and readers against a project a hostile sandbox prepared (issue #21 C1): the
delivery record and its screenshot, the validation report (and the screenshots it inlines), the design phase's
documents, spec, data tables and state, the source snapshot. Each kind of thing the sandbox can plant — symlink to
a file / a directory outside, dangling symlink, FIFO, hard link to a file outside — at each name: nothing outside
the project is written, created or read, nothing blocks, and the writer ends normally."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from tests.hostile_fs import KINDS, VICTIM, Outside, bounded, plant
from tier2.runs.loop.delivery import load_delivery, write_delivery
from tier2.validators import ValidationReport
from tier2.workspace import new_project, snapshot
from tier2.workspace.projects import read_project


@pytest.fixture
def outside(tmp_path: Path) -> Outside:
    return Outside(tmp_path / "outside")


@pytest.fixture
def project(tmp_path: Path, pack) -> Path:
    dest = tmp_path / "game"
    new_project(pack, dest, "p-hostile")
    return dest


def _report(project: Path, shot: Path) -> ValidationReport:
    return ValidationReport(target=str(project), passed=True, screenshots=[str(shot)],
                            build={"ok": True, "bundle_path": str(project / "dist/bundle.js")})


def _regular(path: Path) -> bool:
    return not path.is_symlink() and path.is_file() and os.stat(path).st_nlink == 1


@pytest.mark.parametrize("kind", KINDS)
def test_the_delivery_and_its_screenshot_replace_what_was_planted(kind: str, project: Path, outside: Outside,
                                                                  tmp_path: Path) -> None:
    for name in ("delivery.json", "screenshot.png"):
        plant(kind, project / name, outside)
    shot = project / ".tier2/reports/final/01-menu.png"
    shot.parent.mkdir(parents=True)
    plant(kind, shot, outside)  # the screenshot the delivery copies: swapped after validation
    path, record = bounded(lambda: write_delivery(
        project=project, run_id="r-1", project_id="p-hostile", status="delivered", stop_reason="all gates passed",
        brief="a shop\nwith lines", pack="phaser@0.1.0", model={}, report=_report(project, shot),
        report_path=project / ".tier2/reports/final/report.json", usage={}, timings={}))
    assert outside.unchanged()
    assert _regular(path) and load_delivery(path)["run_id"] == "r-1" and record["screenshot"] is None
    assert not (project / "screenshot.png").exists() or _regular(project / "screenshot.png")
    assert VICTIM not in (project / "delivery.json").read_bytes()


@pytest.mark.parametrize("kind", KINDS)
def test_a_delivery_copies_a_real_screenshot_over_a_planted_one(kind: str, project: Path, outside: Outside) -> None:
    plant(kind, project / "screenshot.png", outside)
    shot = project / ".tier2/reports/final/01-menu.png"
    shot.parent.mkdir(parents=True)
    shot.write_bytes(b"\x89PNG real")
    _, record = write_delivery(
        project=project, run_id="r-2", project_id="p-hostile", status="delivered", stop_reason="ok", brief="b",
        pack="phaser@0.1.0", model={}, report=_report(project, shot), report_path=None, usage={}, timings={})
    assert outside.unchanged() and (project / "screenshot.png").read_bytes() == b"\x89PNG real"
    assert record["screenshot"] == str((project / "screenshot.png").resolve())


@pytest.mark.parametrize("where", [".tier2", ".tier2/reports", ".tier2/reports/final", "report.json",
                                   "report.html"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_validation_report_never_writes_outside(kind: str, where: str, project: Path, outside: Outside) -> None:
    final = project / ".tier2/reports/final"
    if where.startswith(".tier2"):
        plant(kind, project / where, outside)
    else:
        final.mkdir(parents=True)
        plant(kind, final / where, outside)
    shot = project / ".tier2/reports/check-1/01-menu.png"
    bounded(lambda: _report(project, shot).write(final / "report.json"))
    assert outside.unchanged()
    assert _regular(final / "report.json") and _regular(final / "report.html")
    assert json.loads((final / "report.json").read_text())["passed"] is True


@pytest.mark.parametrize("kind", ["link-file", "hardlink", "fifo"])
def test_the_report_page_never_inlines_a_planted_screenshot(kind: str, project: Path, outside: Outside) -> None:
    shot = project / ".tier2/reports/check-1/01-menu.png"
    shot.parent.mkdir(parents=True)
    plant(kind, shot, outside)
    page = bounded(lambda: _report(project, shot).to_html())
    assert base64.b64encode(VICTIM).decode() not in page and "data:image/png" not in page


@pytest.mark.parametrize("kind", KINDS)
def test_the_source_snapshot_and_the_project_record_never_read_outside(kind: str, project: Path,
                                                                      outside: Outside) -> None:
    plant(kind, project / "src" / "planted", outside)
    plant(kind, project / "notes.json", outside)
    snap = bounded(lambda: snapshot(project))
    paths = [f["path"] for f in snap["files"]]
    assert "src/planted" not in paths and "notes.json" not in paths and "src/main.js" in paths
    plant(kind, project / ".tier2/project.json", outside)
    with pytest.raises(Exception, match="not a tier2 project"):
        bounded(lambda: read_project(project))
    assert outside.unchanged()


@pytest.mark.redis
@pytest.mark.parametrize("kind", KINDS)
async def test_the_design_phase_writes_its_files_inside_the_project(kind: str, runtime, tmp_path: Path,
                                                                    outside: Outside) -> None:
    """The names a writer's sandbox could have changed before a follow-up run designs again: the design docs, the
    spec, the data tables (design answers write into them) and tier2's design state."""
    from tests.integration.design_helpers import run_design

    project = tmp_path / "game"
    new_project(runtime.pack, project, "p-design-hostile")
    for name in ("docs/design", "design", ".tier2/design"):
        plant(kind, project / name, outside)
    tables = sorted(p.name for p in (project / "data").glob("*.json"))
    plant(kind, project / "data" / tables[0], outside)
    design, _ = await run_design(runtime, tmp_path, existing=project)
    assert outside.unchanged() and not list(outside.dir.glob("*.md")) and not (outside.dir / "spec.json").exists()
    assert design.spec["genre"] and _regular(project / "design/spec.json")
    assert _regular(project / "docs/design/GDD.md") and _regular(project / ".tier2/design/state.json")
    assert not (project / "docs/design").is_symlink() and not (project / "design").is_symlink()
    table = project / "data" / tables[0]
    assert not _regular(table) or VICTIM not in table.read_bytes()  # tier2's table, or the plant left alone
