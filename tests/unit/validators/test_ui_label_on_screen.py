"""The ``ui_label`` requirement is verified on screen (the display-list snapshots), never by the sources alone."""

from __future__ import annotations

from pathlib import Path

from tier2.validators.l2.conformance import conformance_gates
from tier2.validators.trace import PlayTrace

SPEC = {"genre": "shop", "requirements": [
    {"id": "R1", "text": "the title is shown", "source": "brief",
     "predicate": {"kind": "ui_label", "text": "Coldsteel  Smithy"}}]}


def _trace(*texts: tuple[str, float]) -> PlayTrace:
    t = PlayTrace(booted=True, first_scene="Menu")
    t.legibility = [{"screen": "01-boot", "texts": [{"text": s, "alpha": a, "scene": "Menu"} for s, a in texts]}]
    return t


def _gate(trace: PlayTrace | None, project: Path, pack) -> tuple[bool, str]:  # type: ignore[no-untyped-def]
    gates = conformance_gates(SPEC, "a smithy", trace, {}, project, [], pack)
    g = next(g for g in gates if g.id == "l2.req.R1")
    return g.passed, g.summary


def _project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.js").write_text("// Coldsteel  Smithy — a game\nconst TITLE = 'Coldsteel  Smithy';\n")
    return tmp_path


def test_a_label_drawn_on_a_visited_screen_passes(tmp_path: Path, pack) -> None:  # type: ignore[no-untyped-def]
    ok, summary = _gate(_trace(("COLDSTEEL\nSMITHY", 1.0)), _project(tmp_path), pack)
    assert ok and "drawn on screen 01-boot (scene Menu)" in summary


def test_a_label_only_in_the_sources_is_not_shown(tmp_path: Path, pack) -> None:  # type: ignore[no-untyped-def]
    ok, summary = _gate(_trace(("Gold: 5", 1.0)), _project(tmp_path), pack)
    assert not ok and "drawn on none of the screens" in summary and "src/main.js" in summary


def test_an_invisible_label_is_not_shown(tmp_path: Path, pack) -> None:  # type: ignore[no-untyped-def]
    ok, _ = _gate(_trace(("Coldsteel Smithy", 0.0)), _project(tmp_path), pack)
    assert not ok


def test_without_a_boot_or_snapshots_the_label_is_unverified(tmp_path: Path, pack) -> None:  # type: ignore[no-untyped-def]
    project = _project(tmp_path)
    assert not _gate(PlayTrace(booted=False), project, pack)[0]
    assert "no screen's texts could be read" in _gate(PlayTrace(booted=True), project, pack)[1]
