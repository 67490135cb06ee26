"""The shooter genre probe: its decisions on hand-made states, and whole win/lose plays against the template's real
rules (src/state.js run by node through tests/drive.mjs, the validator's action loop without a browser)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tier2.packs import load_pack

ROOT = Path(__file__).resolve().parents[3]
GENRE = load_pack(ROOT / "capability_packs", "phaser").genre("shooter")
WIN, LOSE = GENRE.probe_fns()
PROBE: Any = GENRE.module("probe")
assert PROBE is not None
ACTIONS = {n: {"keys": [k]} for n, k in (("start", "Enter"), ("left", "ArrowLeft"), ("right", "ArrowRight"),
                                        ("fire", "Space"), ("abandon", "Escape"))}
TABLES = {"player.json": {"speed": 300, "radius": 16, "shot_speed": 600}}


def state(x: float = 400, enemies: list[dict[str, Any]] | None = None, shots: list[dict[str, Any]] | None = None,
          **player: Any) -> dict[str, Any]:
    return {"scene": "Play", "outcome": "running", "player": {"x": x, "y": 528, "invulnerable_ms": 0,
                                                             "cooldown_ms": 0, **player},
            "enemies": enemies or [], "enemy_shots": shots or [], "projectiles": 0, "lives": 3}


def enemy(x: float, y: float, vx: float = 0, r: float = 16) -> dict[str, Any]:
    return {"id": 1, "type": "grunt", "x": x, "y": y, "r": r, "hp": 1, "vx": vx, "vy": 80}


def test_fires_when_lined_up_under_the_lowest_enemy() -> None:
    act = WIN(state(400, [enemy(402, 200), enemy(100, 120)]), ACTIONS, TABLES)
    assert isinstance(act, tuple) and act[0] == "fire" and act[1] >= 1


def test_holds_fire_until_the_gun_is_ready() -> None:
    act = WIN(state(400, [enemy(400, 200)], cooldown_ms=150), ACTIONS, TABLES)
    assert act == ("fire", 10)


def test_moves_toward_the_lowest_enemy_with_a_bounded_hold() -> None:
    act = WIN(state(400, [enemy(100, 100), enemy(700, 300)]), ACTIONS, TABLES)
    assert isinstance(act, tuple) and act[0] == "right" and 1 <= act[1] <= 8
    near = WIN(state(400, [enemy(390, 300)]), ACTIONS, TABLES)
    assert near == ("left", 2), "10 px at 5 px a frame"


def test_leads_a_moving_target() -> None:
    assert WIN(state(400, [enemy(400, 100, vx=150)]), ACTIONS, TABLES)[0] == "right"
    assert WIN(state(400, [enemy(400, 100, vx=-150)]), ACTIONS, TABLES)[0] == "left"


def test_sidesteps_an_enemy_shot_falling_on_the_ship() -> None:
    shot = {"x": 404, "y": 470, "r": 5, "vy": 220}
    act = WIN(state(400, [enemy(400, 200)], [shot]), ACTIONS, TABLES)
    assert isinstance(act, tuple) and act[0] in ("left", "right")
    dest = 400 + (300 / 60) * act[1] * (1 if act[0] == "right" else -1)
    assert PROBE.danger(state(dest, [], [shot]), dest, TABLES) is None
    # a shot still far above, or one the shield covers, is no reason to dodge
    assert WIN(state(400, [enemy(400, 200)], [{"x": 400, "y": 100, "r": 5, "vy": 220}]), ACTIONS, TABLES)[0] == "fire"
    assert WIN(state(400, [enemy(400, 200)], [shot], invulnerable_ms=1500), ACTIONS, TABLES)[0] == "fire"


def test_does_not_walk_into_a_falling_shot() -> None:
    blocking = {"x": 440, "y": 470, "r": 5, "vy": 220}
    act = WIN(state(400, [enemy(520, 200)], [blocking]), ACTIONS, TABLES)
    assert act is not None
    if act[0] == "right":
        assert 400 + 5 * act[1] < 440 - 16 * 0.7 - 5 - 6


def test_ignores_enemies_already_level_with_the_ship() -> None:
    assert WIN(state(400, [enemy(600, 520)]), ACTIONS, TABLES) == ("wait", 12)
    assert WIN(state(150, []), ACTIONS, TABLES)[0] == "right", "back toward the middle between waves"


def test_gives_up_without_the_vocabulary_and_survives_junk() -> None:
    assert WIN(state(), {"start": {"keys": ["Enter"]}}, TABLES) is None
    assert WIN({"scene": "Play"}, ACTIONS, TABLES) is None
    junk = state(400, [{"x": "?", "y": None}, {}, 7, None], [{"y": "far"}, "shot"])
    junk["shots"] = {"not": "a list"}
    assert WIN(junk, ACTIONS, {}) is not None


def test_the_lose_probe_only_waits() -> None:
    assert LOSE(state(400, [enemy(400, 400)]), ACTIONS, TABLES) == ("wait", 30)


def _play(tables: dict[str, Any], policy: Any, limit: int, tmp: Path) -> tuple[dict[str, Any], int]:
    tmp.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        (tmp / name).write_text(json.dumps(table))
    node = shutil.which("node")
    assert node is not None
    drive = GENRE.root / "tests" / "drive.mjs"
    with subprocess.Popen([node, "--no-warnings", str(drive), str(tmp)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        snap, n = json.loads(proc.stdout.readline()), 0
        frames = GENRE.spec.probe.action_frames
        while snap["outcome"] == "running" and n < limit:
            act = policy(snap, ACTIONS, tables)
            assert act is not None, f"the probe gave up at {snap}"
            name, held = (act, frames) if isinstance(act, str) else act
            proc.stdin.write(json.dumps({"action": name, "frames": held}) + "\n")
            proc.stdin.flush()
            snap, n = json.loads(proc.stdout.readline()), n + 1
        proc.stdin.close()
    return snap, n


@pytest.mark.parametrize("brief", [
    "an arcade space shooter: blast waves of alien invaders",
    "a hard asteroid shooter, brutal and fast",
    "an easy relaxing bug zapper for kids",
    "frantic hard spooky ghost shooter",
    "a submarine torpedo game",
    "shooter",
])
def test_the_probe_wins_and_loses_what_the_builder_makes(brief: str, tmp_path: Path) -> None:
    tables = GENRE.build_tables(brief)
    bounds = GENRE.spec.probe
    won, n_win = _play(tables, WIN, bounds.max_win_actions, tmp_path / "win")
    assert won["outcome"] == "won", (n_win, won["lives"], won["wave"])
    total = sum(s["count"] for w in tables["waves.json"]["waves"] for s in w["spawns"])
    assert won["kills"] <= total <= won["kills"] + won["breaches"] + won["hits"]
    assert won["lives"] >= 1 and won["score"] > 0
    lost, n_lose = _play(tables, LOSE, bounds.max_lose_actions, tmp_path / "lose")
    assert lost["outcome"] == "lost", n_lose
    assert lost["kills"] == 0 and lost["lives"] == 0
    assert n_lose > 2000 / (1000 / 60) / 30, "not lost in the first 2 s"
