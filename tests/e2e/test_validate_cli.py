"""`tier2 validate` through the CLI: exit codes, report files, generic mode on real games nobody here wrote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from capability_packs.phaser.corpus import fetch_create_game_demos
from tests.e2e.helpers import run_cli
from tier2.packs import load_pack
from tier2.settings.loader import REPO_ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.browser, pytest.mark.slow]
TEMPLATE = load_pack(REPO_ROOT / "capability_packs", "phaser").genre("shop").template_dir  # composed


def test_tier2_project_passes_with_json_and_html_reports(tmp_path: Path) -> None:
    game = tmp_path / "game"
    shutil.copytree(TEMPLATE, game)
    proc = run_cli("validate", str(game), "--json", "--out", str(tmp_path / "r"),
                   env={"TIER2_WORKSPACES": str(tmp_path / "ws")})
    assert proc.returncode == 0, proc.stderr + proc.stdout[-2000:]
    report = json.loads(proc.stdout)
    assert report["mode"] == "contract" and report["passed"]
    assert (tmp_path / "r/report.json").exists() and "<table>" in (tmp_path / "r/report.html").read_text()


def test_failing_game_exits_one_and_names_the_gate(tmp_path: Path) -> None:
    game = tmp_path / "game"
    shutil.copytree(TEMPLATE, game)
    (game / "src/main.js").write_text((game / "src/main.js").read_text() + "\nfunction broken( {\n")
    proc = run_cli("validate", str(game), env={"TIER2_WORKSPACES": str(tmp_path / "ws")})
    assert proc.returncode == 1
    assert "FAIL L1 l1.builds" in proc.stdout and "verdict: FAIL" in proc.stdout


def test_oversized_bundle_fails_the_build_gate(tmp_path: Path) -> None:
    game = tmp_path / "game"
    shutil.copytree(TEMPLATE, game)
    blob = "x" * (30 * 1024 * 1024)
    (game / "src/blob.js").write_text(f"export const BLOB = '{blob}';\n")
    (game / "src/main.js").write_text("import { BLOB } from './blob.js';\nwindow.__blob = BLOB.length;\n"
                                      + (game / "src/main.js").read_text())
    proc = run_cli("validate", str(game), env={"TIER2_WORKSPACES": str(tmp_path / "ws")})
    assert proc.returncode == 1 and "over the pack limit" in proc.stdout


@pytest.mark.parametrize(("target", "needle"), [("/definitely/not/here", "is not a directory"),
                                                ("http://203.0.113.7/game/", "only loopback URLs")])
def test_bad_targets_are_usage_errors(target: str, needle: str, tmp_path: Path) -> None:
    proc = run_cli("validate", target, env={"TIER2_WORKSPACES": str(tmp_path)})
    assert proc.returncode == 2 and needle in proc.stderr


@pytest.mark.parametrize(("demo", "expected_failures"), [
    ("coin-clicker", set()),
    ("phasers-revenge", set()),
    # a genuine upstream bug: moving the pointer between cards throws "go is not defined" (src/Play.js:240)
    ("memory-card-game", {"l1.no_errors"}),
])
def test_generic_mode_on_real_phaser_demos(demo: str, expected_failures: set[str], tmp_path: Path) -> None:
    # npm registry package, cached in the git-ignored workspaces/.cache: no npm or no registry is a failure here
    demos = fetch_create_game_demos(REPO_ROOT / "workspaces" / ".cache")
    proc = run_cli("validate", str(demos[demo]), "--json", "--out", str(tmp_path / "r"),
                   env={"TIER2_WORKSPACES": str(tmp_path / "ws")})
    report = json.loads(proc.stdout)
    failed = {g["id"] for g in report["gates"] if not g["passed"] and g["layer"] == "L1"}
    assert report["mode"] == "generic"
    assert failed == expected_failures, [(g["id"], g["summary"]) for g in report["gates"] if not g["passed"]]
    assert proc.returncode == (1 if expected_failures else 0)
    if demo == "memory-card-game":
        assert "go is not defined" in json.dumps(report)


def test_findings_are_listed_apart_from_verdicts(tmp_path: Path) -> None:
    # a working game with a faded credit line and a BitmapText line-height overlap: passes, with two findings
    from tests.fixtures.fixture_games import install_game
    game = install_game("faded-credits", tmp_path / "g")
    proc = run_cli("validate", str(game), "--mode", "generic", "--out", str(tmp_path / "r"),
                   env={"TIER2_WORKSPACES": str(tmp_path / "ws")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "findings (not verdicts): 2" in proc.stdout and "l1.legible: " in proc.stdout
    assert "verdict: PASS" in proc.stdout
