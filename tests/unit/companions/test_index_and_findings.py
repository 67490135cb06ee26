"""The companions' pure parts: the project index, the deterministic checks that need no node, the findings parser."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tier2.companions import ProjectIndex, parse_findings, render_findings
from tier2.companions.checks import index_checks
from tier2.companions.findings import Finding


def _game(tmp_path: Path, pack) -> Path:
    dest = tmp_path / "game"
    shutil.copytree(pack.template_dir, dest)
    return dest


def test_index_knows_data_reads_definitions_and_scenes(tmp_path: Path, pack) -> None:
    idx = ProjectIndex.build(_game(tmp_path, pack))
    assert "economy" in idx.data_keys and "start_money" in (idx.data_keys["economy"] or ())
    reads = idx.data_reads["economy.start_money"]
    assert any(h.path == "src/state.js" and "tables.economy.start_money" in h.text for h in reads)
    assert not any(d.endswith((".json", ".forEach", ".map")) for d in idx.data_reads)  # file names, methods
    assert idx.scene_keys["Play"].path == "src/scenes/Play.js"
    assert {k for k, _ in idx.scene_starts} <= set(idx.scene_keys)
    assert idx.missing_reads() == [] and idx.unimported() == []
    assert index_checks(idx) == []  # the pack's template is clean


def test_lookup_answers_data_keys_files_and_names(tmp_path: Path, pack) -> None:
    idx = ProjectIndex.build(_game(tmp_path, pack))
    found = idx.lookup("which files read data key economy.start_money")
    entry = found["data key economy.start_money"]
    assert entry["defined_in"] == "data/economy.json" and any(r.startswith("src/state.js:") for r in entry["read_at"])
    play = idx.lookup("which data keys does Play.js read")["file src/scenes/Play.js"]
    assert "economy.day_length_ms" in play["data_keys_read"] and "src/state.js" in play["imports"]
    drawn = idx.lookup("where is the order queue drawn")
    assert any("showOrder" in line for line in drawn["definitions named like order"])
    assert idx.lookup("zzz qqq") == {}


def test_index_checks_find_what_the_gates_report_late(tmp_path: Path, pack) -> None:
    project = _game(tmp_path, pack)
    economy = project / "data" / "economy.json"
    data = json.loads(economy.read_text())
    data.pop("start_money")
    economy.write_text(json.dumps(data))
    (project / "data" / "prices.json").write_text("{not json")
    (project / "src" / "orphan.js").write_text("export const x = 1;\n")
    menu = project / "src" / "scenes" / "Menu.js"
    menu.write_text(menu.read_text().replace("this.scene.start('Play')", "this.scene.start('Shop')"))
    rules = {(f.rule, f.file) for f in index_checks(ProjectIndex.build(project))}
    assert ("data.key_missing", "src/state.js") in rules
    assert ("data.parse", "data/prices.json") in rules
    assert ("module.unimported", "src/orphan.js") in rules
    assert ("scene.unregistered", "src/scenes/Menu.js") in rules


def test_findings_are_parsed_strictly_and_bounded() -> None:
    text = 'Sure! ```json\n{"findings": [{"file": "src/a.js", "line": 3, "rule": "r", "message": "m"}, ' \
           '{"rule": "", "message": "no rule"}, {"rule": "r2", "message": "m2", "severity": "fatal"}, ' \
           '{"rule": "r3", "message": "m3", "line": -1}, "junk"]}\n```'
    found, problem = parse_findings(text)
    assert [f.rule for f in found] == ["r"] and found[0].severity == "warning" and "4 finding(s) dropped" in problem
    assert parse_findings("no json here") == ([], "the reviewer's answer holds no JSON findings list")
    many = json.dumps([{"rule": f"r{i}", "message": "m"} for i in range(30)])
    found, problem = parse_findings(many, limit=5)
    assert len(found) == 5 and "10" not in problem and "25 finding(s) dropped" in problem
    text = render_findings([Finding(rule="r", message="x" * 500)] * 40, limit_chars=2000)
    assert len(text) < 2200 and "more finding(s) cut" in text


def test_a_pixi_view_s_scenes_are_indexed_and_a_typo_is_found(tmp_path: Path) -> None:
    """The PixiJS pack's views name scenes with ``static KEY`` and start them with ``this.game.start``."""
    from tier2.packs import load_pack
    from tier2.settings.loader import REPO_ROOT

    pixi = load_pack(REPO_ROOT / "capability_packs", "pixi")
    project = tmp_path / "game"
    shutil.copytree(pixi.genre("maze").template_dir, project)
    idx = ProjectIndex.build(project)
    assert {"Boot", "Preload", "Menu", "Play", "GameOver"} <= set(idx.scene_keys)
    assert {k for k, _ in idx.scene_starts} >= {"Preload", "Menu", "Play"}
    assert not [f for f in index_checks(idx) if f.rule == "scene.unregistered"]
    menu = project / "src" / "scenes" / "Menu.js"
    menu.write_text(menu.read_text().replace("this.game.start('Play')", "this.game.start('Playing')"))
    found = [f for f in index_checks(ProjectIndex.build(project)) if f.rule == "scene.unregistered"]
    assert [(f.file, "'Playing'" in f.message) for f in found] == [("src/scenes/Menu.js", True)]
