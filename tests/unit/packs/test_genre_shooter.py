"""The shooter genre's tables: builder determinism and variety, schemas, checks.py (and its planted failures), the
genre manifest as core loads it."""

from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tier2.design import classify_brief
from tier2.packs import load_pack
from tier2.packs.offline import contrast

ROOT = Path(__file__).resolve().parents[3]
PACK = load_pack(ROOT / "capability_packs", "phaser")
GENRE = PACK.genre("shooter")
CHECKS: Any = GENRE.module("checks")
BUILDER: Any = GENRE.module("builder")
assert CHECKS is not None and BUILDER is not None

BRIEFS = [
    "an arcade space shooter: blast waves of alien invaders before they reach your base",
    "a hard asteroid shooter with meteors and comets",
    "an easy shooter for kids with cute bugs in a garden",
    "a submarine torpedo game in the deep ocean, sharks and jellyfish",
    "a spooky halloween shooter where you blast ghosts and bats",
    "robot drones attack the factory, defend it with your laser turret",
    "ww2 biplane dogfight shmup over the clouds",
    "frantic bullet hell with lasers, tough and fast",
    "a relaxing shooter in a candy world",
    "shoot the falling fruit before it hits the ground",
    "retro galaga style space invaders",
    "a neon cyber shooter against machines",
    "desert ruins guarded by scarab beetles, shoot them all",
    "pirate cannon defends the bay from sea monsters",
    "a wizard tower shoots fireballs at dragons",
    "shooter",
    "blast the zombies with a gun before they break in, hard",
    "cozy snowball fight against snowmen",
    "defend the moon base from martian saucers with your blaster",
    "an asteroid mining ship clears the belt",
]
EDGE_BRIEFS = ["x", "🚀🚀🚀", "宇宙のシューティングゲーム", "a" * 5000, "space " * 300, "Ünïcödé shooter ☄ über alles"]


def _validate(tables: dict[str, Any]) -> list[str]:
    problems = []
    for name in GENRE.spec.data_tables:
        validator = jsonschema.Draft202012Validator(GENRE.schemas[name])
        problems += [f"{name} {list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(tables[name])]
    return problems


def _failed(tables: dict[str, Any]) -> dict[str, list[str]]:
    return {r["id"]: r["findings"] for r in CHECKS.check_tables(tables) if not r["passed"]}


def _template_tables() -> dict[str, Any]:
    return {n: json.loads((GENRE.template_dir / "data" / n).read_text()) for n in GENRE.spec.data_tables}


def test_the_manifest_loads_with_the_witness_and_words_of_its_own() -> None:
    spec = GENRE.spec
    assert spec.data_tables == ["theme.json", "player.json", "enemies.json", "waves.json"]
    assert [(o.action, o.field, o.change) for o in spec.observe] == [("fire", "projectiles", "increase")]
    for field in ("player", "enemies", "projectiles", "lives", "score", "kills"):
        assert field in spec.state
    others = {w for gid, g in PACK.genres.items() if gid != "shooter" for w in g.spec.brief_words}
    assert not set(spec.brief_words) & others
    for brief in ("an arcade space shooter where I blast alien invaders", "a spaceship shoots asteroids"):
        assert classify_brief(brief, PACK.genre_vocab()).genre == "shooter"


@pytest.mark.parametrize("brief", BRIEFS + EDGE_BRIEFS)
def test_built_tables_are_deterministic_match_the_schemas_and_pass_the_checks(brief: str) -> None:
    tables = GENRE.build_tables(brief)
    assert json.dumps(tables, sort_keys=True) == json.dumps(GENRE.build_tables(brief), sort_keys=True)
    assert sorted(tables) == sorted(GENRE.spec.data_tables)
    assert _validate(tables) == []
    assert _failed(tables) == {}
    enemy_ids = {e["id"] for e in tables["enemies.json"]["enemies"]}
    assert {s["enemy"] for w in tables["waves.json"]["waves"] for s in w["spawns"]} <= enemy_ids
    assert len(tables["waves.json"]["waves"]) >= 3
    assert tables["player.json"]["lives"] >= 3
    pal = tables["theme.json"]["palette"]
    for key in ("text", "accent", "good", "bad"):  # drawn as text on the panel and on the background
        assert min(contrast(pal[key], pal["panel"]), contrast(pal[key], pal["background"])) >= 4.5


def test_different_briefs_make_different_games() -> None:
    built = [GENRE.build_tables(b) for b in BRIEFS]
    titles = {t["theme.json"]["title"] for t in built}
    backgrounds = {t["theme.json"]["palette"]["background"] for t in built}
    seeds = {t["waves.json"]["seed"] for t in built}
    players = {json.dumps(t["player.json"], sort_keys=True) for t in built}
    rosters = {tuple(e["name"] for e in t["enemies.json"]["enemies"]) for t in built}
    assert len(titles) >= 17, titles
    assert len(backgrounds) >= 17
    assert len(seeds) == len(BRIEFS)
    assert len(players) >= 15
    assert len(rosters) >= 6, "the brief's world picks the enemies"
    for title in titles:
        assert not re.search(r"\b(hard|easy|relaxing|shooter)\b", title, re.I), title


def test_the_brief_picks_the_world_and_the_difficulty() -> None:
    sea = GENRE.build_tables("a submarine torpedo game in the deep ocean")
    assert sea["theme.json"]["enemy_noun"] == "sea beasts"
    assert "Jellyfish" in [e["name"] for e in sea["enemies.json"]["enemies"]]
    ghosts = GENRE.build_tables("a spooky ghost shooter")
    assert ghosts["theme.json"]["enemy_noun"] == "spooks"
    easy, hard = GENRE.build_tables("an easy relaxing alien shooter"), GENRE.build_tables("a hard brutal alien shooter")
    assert easy["player.json"]["lives"] > hard["player.json"]["lives"] >= 3
    fastest = {k: max(e["speed"] for e in t["enemies.json"]["enemies"][:2]) for k, t in (("e", easy), ("h", hard))}
    assert fastest["h"] > fastest["e"]
    count = {k: sum(s["count"] for w in t["waves.json"]["waves"] for s in w["spawns"]) for k, t in (("e", easy),
                                                                                                     ("h", hard))}
    assert count["h"] > count["e"]


def test_the_template_data_matches_the_schemas_and_passes_the_checks() -> None:
    tables = _template_tables()
    assert _validate(tables) == []
    assert _failed(tables) == {}
    assert [r["id"] for r in CHECKS.check_tables(tables, {})] == ["solvable", "idle_safe", "losable"]


def test_the_checks_arena_is_the_games_arena() -> None:
    src = (GENRE.template_dir / "src" / "state.js").read_text()
    m = re.search(r"export const ARENA = \{([^}]*)\}", src)
    assert m is not None
    arena = {k: int(v) for k, v in re.findall(r"(\w+): (\d+)", m.group(1))}
    assert {k: arena[k] for k in CHECKS.ARENA} == CHECKS.ARENA


def test_a_planted_unbeatable_wave_fails_solvable() -> None:
    tables = _template_tables()
    tables["enemies.json"]["enemies"][0] |= {"speed": 380, "hp": 12}
    failed = _failed(tables)
    assert "solvable" in failed
    assert any("lone gunner" in f and "waves.json waves[0]" in f for f in failed["solvable"])
    crowded = _template_tables()
    crowded["waves.json"]["waves"][-1] |= {"spawn_ms": 100, "spawns": [{"enemy": crowded["enemies.json"]["enemies"][-1]
                                                                       ["id"], "count": 30}]}
    assert "solvable" in _failed(crowded)


def test_undodgeable_fire_and_runaway_homing_fail_solvable() -> None:
    tables = _template_tables()
    shooter = next(e for e in tables["enemies.json"]["enemies"] if e["fire_ms"] > 0)
    shooter["shot_speed"] = 800
    tables["player.json"]["speed"] = 80
    assert any(".shot_speed" in f for f in _failed(tables)["solvable"])
    homing = _template_tables()
    homing["enemies.json"]["enemies"][0]["homing"] = homing["player.json"]["speed"]
    assert any(".homing" in f for f in _failed(homing)["solvable"])


def test_an_early_threat_or_a_single_life_fails_idle_safe() -> None:
    early = _template_tables()
    early["waves.json"]["start_delay_ms"] = 0
    early["enemies.json"]["enemies"][0]["speed"] = 400
    early["waves.json"]["waves"][0]["spawns"] = [{"enemy": early["enemies.json"]["enemies"][0]["id"], "count": 3}]
    assert any("start_delay_ms" in f for f in _failed(early)["idle_safe"])
    one_life = _template_tables()
    one_life["player.json"]["lives"] = 1
    assert any("lives" in f for f in _failed(one_life)["idle_safe"])
    assert "idle_safe" not in _failed(_template_tables())


def test_too_few_enemies_for_the_lives_fails_losable() -> None:
    tables = _template_tables()
    first = tables["enemies.json"]["enemies"][0]["id"]
    tables["waves.json"]["waves"] = [{"name": "Lone", "spawn_ms": 800, "bonus": 0,
                                      "spawns": [{"enemy": first, "count": 2}]}]
    tables["player.json"]["lives"] = 5
    assert any("never" in f for f in _failed(tables)["losable"])


def test_malformed_tables_fail_every_check_instead_of_raising() -> None:
    for broken in ({}, {"player.json": None}, _template_tables() | {"waves.json": {"waves": "many"}}):
        results = CHECKS.check_tables(copy.deepcopy(broken))
        assert [r["passed"] for r in results] == [False, False, False]
        assert all("malformed" in r["findings"][0] for r in results)


_JS_VALIDATE = """
import { readFileSync } from 'node:fs';
import { validateTables } from %s;
const t = JSON.parse(readFileSync(0, 'utf8'));
try { validateTables({theme: t['theme.json'], player: t['player.json'], enemies: t['enemies.json'],
                      waves: t['waves.json']}); console.log('ok'); }
catch (e) { console.log(e.message); }
"""


@pytest.mark.parametrize(("where", "value"), [
    (("enemies.json", "enemies", 0, "fire_ms"), 100), (("enemies.json", "enemies", 0, "shape"), "blob"),
    (("player.json", "lives"), 0), (("waves.json", "seed"), -3), (("theme.json", "title"), "T" * 40),
    (("waves.json", "waves", 0, "spawns", 0, "count"), 0), (("enemies.json", "enemies", 0, "fire_ms"), 300),
])
def test_the_schemas_and_the_games_validation_agree(where: tuple[Any, ...], value: Any) -> None:
    tables = _template_tables()
    node: Any = tables
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    script = _JS_VALIDATE % json.dumps((GENRE.template_dir / "src" / "state.js").as_uri())
    run = subprocess.run(["node", "--no-warnings", "--input-type=module", "-e", script], input=json.dumps(tables),
                         capture_output=True, text=True, timeout=60)
    game_ok = run.stdout.strip() == "ok"
    assert game_ok or run.stdout.startswith("tier2 data error: "), run.stdout + run.stderr
    assert game_ok == (_validate(tables) == []), (run.stdout, _validate(tables))
