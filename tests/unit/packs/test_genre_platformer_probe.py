"""The platformer genre probe: decisions on hand-made states, and whole plays against the template's real rules.

The plays run src/state.js in node (tests/harness.mjs) and press keys the way the validator's latch play does: an
action's key held for its frames, released, one more frame, then the next snapshot. The probe must win every
built level without losing a life and lose by walking into a pit or a hazard, within genre.yaml's bounds.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tier2.packs import load_pack

ROOT = Path(__file__).resolve().parents[3]
GENRE = load_pack(ROOT / "capability_packs", "phaser").genre("platformer")
PROBE = GENRE.module("probe")
SIM = PROBE.routes.sim if PROBE is not None else None
ACTIONS = {name: {"keys": ["x"]} for name in ("left", "right", "jump", "start", "abandon")}
PHYS = {"steps_per_second": 60, "gravity": 1800, "run_speed": 240, "jump_velocity": 660, "max_fall_speed": 900,
        "coyote_ms": 90, "jump_buffer_ms": 110, "respawn_ms": 600, "air_jumps": 0, "player": {"w": 24, "h": 36}}


def tiny(gap: int = 110, mirror: bool = False, pit: bool = True) -> dict[str, Any]:
    """Two ground runs with a pit between them and the flag on the second (mirrored: the pit on the left)."""
    plats = [{"x": 0, "y": 480, "w": 400, "h": 120}, {"x": 400 + gap, "y": 480, "w": 800 - gap, "h": 120}]
    if not pit:
        plats = [{"x": 0, "y": 480, "w": 1200, "h": 120}]
    lv = {"id": "t", "name": "Tiny", "width": 1200, "height": 600, "time_limit_ms": 60_000,
          "start": {"x": 40, "y": 480}, "exit": {"x": 1100, "y": 416, "w": 32, "h": 64}, "platforms": plats,
          "hazards": [], "coins": []}
    if mirror:
        for p in lv["platforms"]:
            p["x"] = 1200 - p["x"] - p["w"]
        lv["start"]["x"], lv["exit"]["x"] = 1200 - 40 - 24, 1200 - 1100 - 32
    levels = {"lives": 3, "coin_score": 10, "exit_score": 100, "time_bonus_per_s": 1, "coin_radius": 10,
              "levels": [lv]}
    return {"levels.json": levels, "physics.json": copy.deepcopy(PHYS)}


def state_at(x: float, y: float, on_ground: bool = True, vy: float = 0.0, **extra: Any) -> dict[str, Any]:
    player = {"x": x, "y": y, "vx": 0, "vy": vy, "on_ground": on_ground, "w": 24, "h": 36, "coyote_ms": 90,
              "buffer_ms": 0, "jump_held": False, "air_jumps": 0}
    return {"scene": "Play", "outcome": "running", "level": 1, "levels": 1, "lives": 3, "respawn_ms": 0,
            "player": player, "player_y": y, **extra}


def test_the_probe_stops_on_finished_games_and_foreign_vocabularies() -> None:
    t = tiny()
    assert PROBE.win_action(state_at(40, 444, outcome="won"), ACTIONS, t) is None
    assert PROBE.lose_action(state_at(40, 444, outcome="lost"), ACTIONS, t) is None
    assert PROBE.win_action(state_at(40, 444), {"jump": {}, "start": {}}, t) is None
    assert PROBE.win_action({"outcome": "running", "level": 1}, ACTIONS, t) is None  # no player: gives up


def test_it_waits_out_a_respawn() -> None:
    for fn in (PROBE.win_action, PROBE.lose_action):
        action, frames = fn(state_at(300, 700, on_ground=False, respawn_ms=500), ACTIONS, tiny())
        assert action == "wait" and frames >= 500 / (1000 / 60)


def _walk(x: float, action: tuple[str, int]) -> float:
    d = {"right": 1, "left": -1}[action[0]]
    return x + d * action[1] * PHYS["run_speed"] / PHYS["steps_per_second"]


def test_on_the_ground_it_runs_to_a_take_off_point_before_the_pit_then_jumps() -> None:
    t = tiny()
    x, seen = 40.0, []
    for _ in range(10):
        action = PROBE.win_action(state_at(x, 444), ACTIONS, t)
        seen.append(action)
        if action == ("jump", 1):
            break
        assert action[0] == "right"
        x = _walk(x, action)
    assert seen[-1] == ("jump", 1), seen
    assert 250 < x < 400, "takes off on the first ground, near enough to clear the pit"


def test_in_the_air_it_steers_to_the_far_ground_and_then_to_the_flag() -> None:
    t = tiny()
    air = PROBE.win_action(state_at(370, 433.5, on_ground=False, vy=-630), ACTIONS, t)  # just took off
    assert air[0] == "right" and air[1] >= 1
    assert PROBE.win_action(state_at(600, 444), ACTIONS, t)[0] == "right"
    assert PROBE.win_action(state_at(1180 - 24, 444), ACTIONS, t)[0] == "left", "walks back to the flag"


def test_a_pit_too_wide_leaves_the_probe_to_lose_a_life_rather_than_loop() -> None:
    action = PROBE.win_action(state_at(40, 444), ACTIONS, tiny(gap=400))
    assert action[0] == "right", "stranded: it walks into the pit for a fresh start"


def test_the_lose_play_walks_into_the_nearest_pit_either_way() -> None:
    assert PROBE.lose_action(state_at(40, 444), ACTIONS, tiny())[0] == "right"
    mirrored = tiny(mirror=True)
    start = mirrored["levels.json"]["levels"][0]["start"]["x"]
    assert PROBE.lose_action(state_at(start, 444), ACTIONS, mirrored)[0] == "left"
    spikes = tiny(pit=False)
    spikes["levels.json"]["levels"][0]["hazards"] = [{"x": 300, "y": 464, "w": 48, "h": 16}]
    assert PROBE.lose_action(state_at(40, 444), ACTIONS, spikes)[0] == "right"
    assert PROBE.lose_action(state_at(40, 444), ACTIONS, tiny(pit=False)) == ("wait", PROBE.WALK_CHUNK), \
        "nothing deadly in reach: let the time run out"


# --- whole plays against the real rules -----------------------------------------------------------------------------

HARNESS = GENRE.root / "tests" / "harness.mjs"
PLAY_BRIEFS = [
    "a platformer where a fox jumps over spikes in the forest",
    "brutal hardcore platformer on neon rooftops",
    "easy candy jumping game",
    "a slime blob bouncing through a dungeon with double-jump",
]


def play(tables: dict[str, Any], fn: Any, limit: int, tmp: Path) -> tuple[dict[str, Any], int]:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH"
    data = tmp / "tables.json"
    data.write_text(json.dumps(tables))
    with subprocess.Popen([node, str(HARNESS), str(data)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        state, n = json.loads(proc.stdout.readline()), 0
        while state["outcome"] == "running" and n < limit:
            action = fn(state, ACTIONS, tables)
            if action is None:
                break
            name, frames = (action, GENRE.spec.probe.action_frames) if isinstance(action, str) else action
            proc.stdin.write(json.dumps({"action": name, "frames": frames, "gap": 1}) + "\n")
            proc.stdin.flush()
            state, n = json.loads(proc.stdout.readline()), n + 1
        proc.stdin.close()
    return state, n


@pytest.mark.parametrize("brief", PLAY_BRIEFS)
def test_the_probe_wins_and_loses_built_games_by_playing(brief: str, tmp_path: Path) -> None:
    tables = GENRE.build_tables(brief)
    won, n = play(tables, PROBE.win_action, GENRE.spec.probe.max_win_actions, tmp_path)
    assert won["outcome"] == "won", (won, n)
    assert won["deaths"] == 0 and won["levels_cleared"] == len(tables["levels.json"]["levels"])
    assert won["coins"] > 0, "the run picks up coins on the way"
    lost, m = play(tables, PROBE.lose_action, GENRE.spec.probe.max_lose_actions, tmp_path)
    assert lost["outcome"] == "lost" and lost["lost_reason"] in ("pit", "hazard"), (lost, m)
    assert lost["deaths"] == tables["levels.json"]["lives"]
