"""The default-renderer smoke on real builds in real Chromium: skipped when a passing one of the very same served
files is on record, run again as soon as any of them changes — with the same verdict for every gate either way.

A validation opens one page for the Canvas-renderer play and one for the smoke; the pool counts the pages it hands
out, so "skipped" means no second page was opened, not that something was faster."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.fixture_games import install_game
from tier2.settings.loader import Policy
from tier2.validators import ValidationRunner
from tier2.validators.report import ValidationReport
from tier2.validators.smoke import SCREENSHOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REUSED = "default-renderer smoke reused"


def _runner(pool, pack, cache: Path) -> ValidationRunner:
    return ValidationRunner(pool, pack, Policy(timeouts={"validation_s": 30, "boot_s": 10}), cache_dir=cache)


async def _validate(runner: ValidationRunner, target: Path, out: Path, generic: bool = False,
                    ) -> tuple[ValidationReport, int]:
    """The report and how many pages the validation opened."""
    before = runner.pool.pages_opened
    if generic:
        report = await runner.validate_target(str(target), out, mode="generic")
    else:
        report = await runner.validate_project(target, out)
    return report, runner.pool.pages_opened - before


def _verdicts(report: ValidationReport) -> dict[str, bool]:
    return {g.id: g.passed for g in report.gates}


def _reused(report: ValidationReport) -> bool:
    return any(n.startswith(REUSED) for n in report.notes)


async def test_unchanged_bundle_skips_the_smoke_and_a_changed_one_runs_it(pool, pack, template_copy: Path,
                                                                           tmp_path: Path) -> None:
    runner = _runner(pool, pack, tmp_path / "cache")
    first, pages = await _validate(runner, template_copy, tmp_path / "r1")
    assert first.passed, first.feedback()
    assert pages == 2 and not _reused(first)
    assert list((tmp_path / "cache" / "smoke").glob("*.json"))

    again, pages = await _validate(runner, template_copy, tmp_path / "r2")  # rebuilt: the same bundle bytes
    assert again.build["bundle_sha256"] == first.build["bundle_sha256"]
    assert pages == 1 and _reused(again)
    assert _verdicts(again) == _verdicts(first) and again.passed
    boots = lambda r: next(g for g in r.gates if g.id == "l1.boots").evidence["default_renderer"]  # noqa: E731
    assert boots(again) == boots(first) and boots(again)["renderer"] == "webgl"
    assert again.screenshots[0] == str(tmp_path / "r2" / SCREENSHOT) and Path(again.screenshots[0]).is_file()

    main = template_copy / "src" / "main.js"
    main.write_text(main.read_text() + "\nwindow.__changedForTest = 1;\n")
    changed, pages = await _validate(runner, template_copy, tmp_path / "r3")
    assert changed.build["bundle_sha256"] != first.build["bundle_sha256"]
    assert pages == 2 and not _reused(changed)
    assert _verdicts(changed) == _verdicts(first)

    other = _runner(pool, pack, tmp_path / "other-cache")  # no record there: the smoke runs
    _, pages = await _validate(other, template_copy, tmp_path / "r4")
    assert pages == 2


async def test_a_changed_script_beside_an_unchanged_page_runs_the_smoke(pool, pack, tmp_path: Path) -> None:
    """A built site (no bundle of ours): its index.html is unchanged, the script it loads is not."""
    game = install_game("snake", tmp_path / "snake")
    runner = _runner(pool, pack, tmp_path / "cache")
    first, pages = await _validate(runner, game, tmp_path / "r1", generic=True)
    assert first.passed, first.feedback()
    assert pages >= 2 and not _reused(first)
    again, pages_again = await _validate(runner, game, tmp_path / "r2", generic=True)
    assert _reused(again) and pages_again == pages - 1
    assert _verdicts(again) == _verdicts(first)
    script = game / "game.js"
    script.write_text(script.read_text() + "\nwindow.__changedForTest = 1;\n")
    changed, pages_changed = await _validate(runner, game, tmp_path / "r3", generic=True)
    assert not _reused(changed) and pages_changed == pages
    assert _verdicts(changed) == _verdicts(first)


async def test_a_failing_smoke_is_never_reused(pool, pack, tmp_path: Path) -> None:
    """outside-fetch asks for outside URLs: blocked requests are warnings for it, but its smoke is not clean."""
    game = install_game("outside-fetch", tmp_path / "out")
    runner = _runner(pool, pack, tmp_path / "cache")
    first, pages = await _validate(runner, game, tmp_path / "r1", generic=True)
    assert first.passed and any(f.severity == "warning" for g in first.gates for f in g.findings)
    again, pages_again = await _validate(runner, game, tmp_path / "r2", generic=True)
    assert not _reused(again) and pages_again == pages
    assert _verdicts(again) == _verdicts(first)
