"""l1.magic_numbers (observe): gameplay numbers in src/ are reported, layout-like numbers are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.validators.static.helpers import inject, injected_line
from tier2.settings.loader import Policy
from tier2.validators.runner import apply_policy
from tier2.validators.static import check_magic_numbers, read_sources, scan_sources

PLAY = "src/scenes/Play.js"


def magic(node_modules: Path, src: dict[str, str]) -> list[str]:
    result = check_magic_numbers(src, scan=scan_sources(src, node_modules))
    assert result.mode == "observe" and result.layer == "L2"
    assert result.passed == (result.evidence["count"] == 0)
    assert result.evidence["count"] == len(result.findings) or len(result.findings) == 20
    return [f.message for f in result.findings]


def test_template_reports_few(node_modules: Path, template_src: dict[str, str]) -> None:
    result = check_magic_numbers(template_src, scan=scan_sources(template_src, node_modules))
    assert result.id == "l1.magic_numbers" and result.layer == "L2"
    assert result.evidence["scanned"] > 100
    assert result.evidence["count"] <= 3, [f.message for f in result.findings]


def test_money_literal_in_play_is_reported(node_modules: Path, template_src: dict[str, str]) -> None:
    code = "this.registry.get('state').money += 250;"
    src = inject(template_src, PLAY, code)
    line = injected_line(src, PLAY, code)
    before = check_magic_numbers(template_src, scan=scan_sources(template_src, node_modules)).evidence["count"]
    result = check_magic_numbers(src, scan=scan_sources(src, node_modules))
    assert not result.passed and not apply_policy(result, Policy()).blocking  # observe: reported, never blocking
    assert result.evidence["count"] == before + 1
    assert any(f.message.startswith(f"{PLAY}:{line}: 250 — money += 250") for f in result.findings), \
        [f.message for f in result.findings]
    assert all(f.severity == "warning" for f in result.findings)


@pytest.mark.parametrize("code", [
    "const REWARD = 250;",
    "const cfg = { price: 12, reward: 40 };",
    "if (score > 500) win();",
    "player.setVelocityX(160);",
    "this.time.delayedCall(2000, next);",
    "this.time.addEvent({ delay: 1500, callback: spawn, loop: true });",
    "lives -= 3;",
])
def test_gameplay_numbers_are_reported(node_modules: Path, code: str) -> None:
    assert magic(node_modules, {"src/a.js": code + "\n"}), code


@pytest.mark.parametrize("code", [
    "const LAYOUT = { cx: 400, card: { w: 640, h: 360 }, coinMs: 650, reward: 30 };",
    "this.add.rectangle(400, 300, 640, 360, 0x223344, 0.95);",
    "const box = { x: 16, y: 68, w: 372, h: 236 };",
    "const c = 0xff8800;",
    "const first = list[3];",
    "this.tweens.add({ targets: t, y: 20, duration: 650, delay: 120 });",
    "this.add.particles(0, 0, 'spark', { speed: { min: 60, max: 180 }, lifespan: 550 });",
    "const secs = Math.ceil(left / 1000); const m = secs % 60;",
    "x = 0; y = 1; z = -1; k = 2; h = 0.5; pct = value * 100;",
    "this.moneyText = this.add.text(330, 10, '', { fontSize: '18px' });",
])
def test_layout_numbers_are_not_reported(node_modules: Path, code: str) -> None:
    assert magic(node_modules, {"src/a.js": code + "\n"}) == [], code


def test_hook_js_is_ignored(node_modules: Path) -> None:
    src = {"src/hook.js": "const money = 999;\n", "src/other.js": "const money = 999;\n"}
    msgs = magic(node_modules, src)
    assert len(msgs) == 1 and msgs[0].startswith("src/other.js:1:")


def test_runs_without_a_precomputed_scan(template_src: dict[str, str], node_modules: Path) -> None:
    # the scanner is located via the built-in pack's node_modules when no scan is passed
    assert check_magic_numbers(template_src).evidence["scanned"] > 100


def test_read_sources_of_an_empty_project(tmp_path: Path) -> None:
    assert read_sources(tmp_path) == {}
    assert check_magic_numbers({}).evidence["count"] == 0
