"""The validation runner on real builds in real Chromium: the template passes; each defect fails its gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from tier2.settings.loader import Policy
from tier2.validators import ValidationRunner
from tier2.validators.mutants import CONTRACT_MUTANTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"mutation anchor {old!r} not found in {path}"
    path.write_text(text.replace(old, new, 1))


def _append(path: Path, code: str) -> None:
    path.write_text(path.read_text() + "\n" + code + "\n")


async def _validate(pool, pack, project: Path, tmp_path: Path, **timeouts):
    policy = Policy(timeouts={"validation_s": 20, "boot_s": 10, **timeouts})
    return await ValidationRunner(pool, pack, policy).validate_project(project, tmp_path / "report")


def _failed(report) -> set[str]:
    return {g.id for g in report.failures}


async def test_template_game_passes_every_l1_gate(pool, pack, template_copy: Path, tmp_path: Path) -> None:
    report = await _validate(pool, pack, template_copy, tmp_path)
    assert report.passed, report.feedback()
    assert {g.id for g in report.gates} == {
        "l1.builds", "l1.data_schema", "l1.data_linkage", "l1.economy", "l1.boots", "l1.no_errors", "l1.frames_advance",
        "l1.canvas_not_blank", "l1.activity", "l1.input_changes_state", "l1.control_responsiveness",
        "l1.latch_split", "l1.legible", "l1.engine_calls", "l1.magic_numbers"}
    latch = next(g for g in report.gates if g.id == "l1.latch_split").evidence["outcomes"]
    assert latch == {"idle": "running", "abandon": "abandoned", "win": "won", "lose": "lost"}
    assert (tmp_path / "report" / "report.html").read_text().count("<tr>") == len(report.gates) + 1
    assert (tmp_path / "report" / "report.json").exists()
    assert all(Path(p).exists() for p in report.screenshots)


async def test_a_contract_1_game_still_validates_played_as_the_default_genre(pool, pack, template_copy: Path,
                                                                           tmp_path: Path) -> None:
    hook = template_copy / "src/hook.js"
    _edit(hook, "    contract: 2,", "    contract: 1,")
    _edit(hook, "    genre: GENRE,\n    template: GENRE,\n", "")
    _edit(hook, "    actions: () => JSON.parse(JSON.stringify(actions)),\n", "")
    report = await _validate(pool, pack, template_copy, tmp_path)
    assert report.passed, report.feedback()
    latch = next(g for g in report.gates if g.id == "l1.latch_split").evidence
    assert latch["outcomes"] == {"idle": "running", "abandon": "abandoned", "win": "won", "lose": "lost"}
    probed = next(g for g in report.gates if g.id == "l1.input_changes_state").evidence["inputs"]
    assert [p["label"] for p in probed][:2] == ["start", next(p["label"] for p in probed if p["label"] != "start")]
    assert any(p["label"].startswith("buy_") for p in probed)  # the v1 controls became actions


# Defects beyond the shared operator catalogue (tier2.validators.mutants): blocking dialogs and network calls.
EXTRA_MUTANTS = {
    "alert_dialog": (lambda p: _append(p / "src/main.js", "window.alert('hello from the game');"), {"l1.no_errors"}),
    "network_fetch": (lambda p: _append(p / "src/main.js", "fetch('https://example.invalid/track.gif');"),
                      {"l1.no_errors"}),
}
MUTANTS = {m.defect: (m.apply, set(m.intended_gates)) for m in CONTRACT_MUTANTS if m.defect != "infinite_loop"}
MUTANTS.update(EXTRA_MUTANTS)


@pytest.mark.parametrize("name", sorted(MUTANTS))
async def test_each_defect_is_caught_by_its_gate(name: str, pool, pack, template_copy: Path, tmp_path: Path) -> None:
    mutate, expected = MUTANTS[name]
    mutate(template_copy)
    report = await _validate(pool, pack, template_copy, tmp_path)
    assert not report.passed
    assert expected & _failed(report), (name, _failed(report), report.feedback())


async def test_infinite_loop_fails_in_bounded_time_and_browser_survives(pool, pack, template_copy: Path,
                                                                        tmp_path: Path) -> None:
    play = template_copy / "src/scenes/Play.js"
    _edit(play, "  update(time, delta) {\n", "  update(time, delta) {\n    for (;;) {}\n")
    report = await _validate(pool, pack, template_copy, tmp_path, validation_s=8)
    assert not report.passed and "l1.no_errors" in _failed(report)
    errors = " ".join(next(g for g in report.gates if g.id == "l1.no_errors").evidence["errors"])
    assert "(infinite loop or hang?)" in errors, errors  # bounded: the watchdog cut the page as hung
    # the shared browser still validates the next game
    fresh = tmp_path / "fresh"
    import shutil

    shutil.copytree(pack.template_dir, fresh)
    assert (await _validate(pool, pack, fresh, tmp_path / "again")).passed


async def test_browser_death_is_survived(pool, pack, template_copy: Path, tmp_path: Path) -> None:
    await (await pool.browser()).close()
    report = await _validate(pool, pack, template_copy, tmp_path)
    assert report.passed, report.feedback()
