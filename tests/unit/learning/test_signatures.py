"""Failure signatures: the same defect in two projects compares equal, different defects do not; what the validators
report is signed from its first layer (build, else page errors, else gates); the fixers plan from real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tier2.learning import FixContext, History, fixer_named, read_files, shape, sign
from tier2.learning.fixers import first_plan
from tier2.learning.signature import Failure, failures_of_report, project_vocabulary
from tier2.learning.taxonomy import entries, rule_for
from tier2.packs import Pack
from tier2.validators import ValidationReport
from tier2.validators.base import Finding, ValidationResult
from tier2.workspace import new_project

ENGINE = "phaser@3.90.0"

SAME = [  # the same defect, as two different projects word it
    ("tier2 data error: economy.json start_money: missing or not a number",
     "[default] pageerror: tier2 data error: data/level.json target_points: missing or not a number"),
    ("spawnBossThatDoesNotExist is not defined", "pageerror: go is not defined"),
    ("this.add.superSprite is not a function", "scene.tweens.timelineOfDoom is not a function"),
    ("Cannot read properties of undefined (reading 'setText')",
     "Cannot read properties of undefined (reading \"x\")"),
    ("src/scenes/Play.js:25:22: Expected identifier but found end of file",
     "src/scenes/Board.js:301:7: Expected identifier but found end of file"),
    ("Failed to load resource: http://localhost:4173/assets/hero.png 404",
     "Failed to load resource: http://localhost:4173/img/coin-sprite.webp 404"),
    ("no profitable strategy: serving the 6 orders in turn from 0 nets 135 per cycle",
     "no profitable strategy: serving the 11 orders in turn from 20 nets -3 per cycle"),
]
DIFFERENT = [
    ("foo is not defined", "foo is not a function"),
    ("Expected identifier but found end of file", "Unexpected end of file"),
    ("tier2 data error: economy.json start_money: missing or not a number",
     "tier2 data error: economy.json start_money: must be positive"),
    ("Maximum call stack size exceeded", "Cannot read properties of undefined (reading 'x')"),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_the_same_defect_in_two_projects_has_one_signature(a: str, b: str) -> None:
    sa, sb = sign(Failure("page", "l1.no_errors", a), ENGINE), sign(Failure("page", "l1.no_errors", b), ENGINE)
    assert sa.shape == sb.shape and sa.key == sb.key


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_defects_have_different_signatures(a: str, b: str) -> None:
    assert sign(Failure("page", "l1.no_errors", a), ENGINE).key != sign(Failure("page", "l1.no_errors", b), ENGINE).key


def test_gate_stage_and_engine_version_are_part_of_the_signature() -> None:
    f = Failure("page", "l1.no_errors", "x is not defined")
    keys = {sign(f, ENGINE).key, sign(Failure("page", "l1.boots", f.message), ENGINE).key,
            sign(Failure("gate", "l1.no_errors", f.message), ENGINE).key, sign(f, "phaser@4.2.1").key}
    assert len(keys) == 4


def test_masking_removes_names_paths_numbers_strings_and_ids() -> None:
    masked = shape("[default] pageerror: r-0a1b2c3d4e5f6a7b: hero_sprite.update at /tmp/x/src/a.js:12:3 "
                   "'Nightshade Elixir' 3.5 times")
    for leaked in ("r-0a1b2c3d", "hero_sprite", "/tmp/x", "12", "Nightshade", "3.5", "pageerror"):
        assert leaked not in masked
    assert shape(masked) == masked  # idempotent


def test_a_shape_that_still_names_the_games_content_is_flagged(tmp_path: Path, pack: Pack) -> None:
    project = tmp_path / "g"
    new_project(pack, project)
    table = next(iter(sorted((project / "data").glob("*.json"))))
    data = json.loads(table.read_text())
    data["tier2_test_label"] = "Moonleaf Tonic Emporium"
    table.write_text(json.dumps(data))
    brief = "a potion shop where I brew moonleaf tonics"
    vocab = project_vocabulary(project, brief, pack.genre_of(project).template_dir)
    assert {"moonleaf", "emporium"} <= vocab and "scene" not in vocab  # template words are not the tenant's
    assert sign(Failure("gate", "l1.economy", "nobody buys Moonleaf Tonic Emporium stock"), ENGINE, vocab).names_content
    assert not sign(Failure("page", "l1.no_errors", "x is not defined"), ENGINE, vocab).names_content


def _gate(gid: str, passed: bool, *messages: str) -> ValidationResult:
    return ValidationResult(id=gid, layer="L1", passed=passed, summary=messages[0] if messages else "ok",
                            findings=[Finding(message=m) for m in messages])


def test_a_report_is_signed_from_its_first_failing_layer() -> None:
    crash = "pageerror: tier2 data error: economy.json start_money: missing or not a number"
    report = ValidationReport(target="t", passed=False, gates=[
        _gate("l1.builds", True), _gate("l1.boots", False, "[default] " + crash, crash),
        _gate("l1.no_errors", False, crash), _gate("l1.frames_advance", False, "frame counter not sampled (game "
                                                                               "did not boot)"),
        _gate("l1.economy", False, "no profitable strategy")])
    failures = failures_of_report(report)
    assert [(f.stage, f.gate) for f in failures] == [("page", "l1.boots")]  # one page error, consequences dropped
    gates_only = ValidationReport(target="t", passed=False, gates=[
        _gate("l1.builds", True), _gate("l1.economy", False, "no profitable strategy"),
        _gate("l1.latch_split", False, "scripted plays did not run (game did not boot or stopped answering)")])
    assert [(f.stage, f.gate) for f in failures_of_report(gates_only)] == [("gate", "l1.economy")]
    build = ValidationReport(target="t", passed=False, build={"errors": ["src/main.js:3:1: Unexpected \"}\""]},
                             gates=[_gate("l1.builds", False, "build failed"), _gate("l1.boots", False, "x")])
    assert [(f.stage, f.file, f.message) for f in failures_of_report(build)] == [
        ("build", "src/main.js", 'Unexpected "}"')]


def test_fixers_restore_from_the_template_and_the_last_pass(tmp_path: Path, pack: Pack) -> None:
    project = tmp_path / "g"
    new_project(pack, project)
    template = pack.genre_of(project).template_dir
    table = next(p for p in sorted((project / "data").glob("*.json"))
                 if any(isinstance(v, int) for v in json.loads(p.read_text()).values()))
    data = json.loads(table.read_text())
    key = next(k for k, v in data.items() if isinstance(v, int))
    data[key] += 7  # this game's own value (the design phase wrote it), not the template's
    table.write_text(json.dumps(data))
    good = read_files(project)
    history = History()
    history.observe([], {"l1.builds", "l1.boots"}, good)
    # the key goes missing: restored with the value the table had earlier in the run, else the template's
    del data[key]
    table.write_text(json.dumps(data))
    failure = Failure("page", "l1.boots", f"tier2 data error: {table.name} {key}: missing or not a number")
    plan = first_plan(FixContext(project, read_files(project), history, template), failure)
    assert plan is not None and plan.fixer == "restore_data_key"
    templated = json.loads((template / "data" / table.name).read_text())[key]
    assert json.loads(plan.files[f"data/{table.name}"])[key] == templated + 7
    plan = first_plan(FixContext(project, read_files(project), History(), template), failure)
    assert plan is not None and json.loads(plan.files[f"data/{table.name}"])[key] == templated
    # a build error: the file's content at the last build that passed
    (project / "src/main.js").write_text(good["src/main.js"] + "\nfunction broken( {\n")
    build_fail = Failure("build", "l1.builds", "Expected identifier but found end of file", "src/main.js")
    plan = first_plan(FixContext(project, read_files(project), history, template), build_fail)
    assert plan is not None and plan.fixer == "restore_last_built"
    assert plan.files == {"src/main.js": good["src/main.js"]}
    # a page error after a change: revert what changed since the gate passed; nothing to revert without a pass
    crash = Failure("page", "l1.boots", "spawnBoss is not defined")
    plan = first_plan(FixContext(project, read_files(project), history, template), crash)
    assert plan is not None and plan.fixer == "revert_to_last_pass" and set(plan.files) == {
        "src/main.js", f"data/{table.name}"}
    assert fixer_named("revert_to_last_pass").plan(FixContext(project, read_files(project), History(), template),
                                                    crash) is None


def test_the_taxonomy_names_the_rule_of_a_matching_failure() -> None:
    assert len(entries()) == 14
    entry = rule_for("RangeError: Maximum call stack size exceeded")
    assert entry is not None and entry.id == "seed-reactive-007" and "recursion" in entry.rule().lower()
    assert rule_for("everything is fine") is None


def test_a_run_matches_its_failures_against_its_own_packs_taxonomy() -> None:
    from tier2.packs import load_pack
    from tier2.settings.loader import REPO_ROOT

    phaser, pixi = (load_pack(REPO_ROOT / "capability_packs", p) for p in ("phaser", "pixi"))
    assert not pixi.manifest.taxonomy and entries(pixi) == ()  # the PixiJS pack ships none
    message = "RangeError: Maximum call stack size exceeded"
    assert rule_for(message, pixi) is None                     # never the default pack's advice for another engine
    entry = rule_for(message, phaser)
    assert entry is not None and entry.id == "seed-reactive-007"
