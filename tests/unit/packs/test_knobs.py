"""The genres' knobs (``adjust:`` in genre.yaml, `tier2.packs.knobs`): loaded and checked against the template's
tables; applied to built tables, every knob up and down stays schema-valid and passes the genre's checks and its
builder's hold (the latch split's win and lose plays on the mirror) — or is refused with the reason and nothing
applied; count knobs grow and shrink their list through the builder's hook; clamps are reported; deterministic."""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tier2.errors import PackError
from tier2.packs import Genre, Knob, load_pack
from tier2.packs.genres import load_genres
from tier2.packs.knobs import knob_values
from tier2.validators.data.pack_checks import genre_data_gates

ROOT = Path(__file__).resolve().parents[3]
PACK = load_pack(ROOT / "capability_packs", "phaser")
BRIEFS = {"shop": "a cozy bakery tycoon: bake bread and cakes, don't go broke",
          "platformer": "a fox hops across platforms in a forest to reach the flag",
          "maze": "a mouse walks a maze collecting cheese while dodging cats",
          "shooter": "a spaceship shoots waves of alien invaders"}


@dataclass(frozen=True)
class Ch:
    """A change as the follow-up reader makes one (only what `apply_changes` reads)."""

    target: str
    direction: str
    value: float | None = None
    kind: str = "knob"


@pytest.fixture(scope="module")
def built() -> dict[str, dict[str, Any]]:
    """One held table set per genre; the platformer's cut to its first level (holding one level costs half)."""
    out = {g: PACK.genres[g].build_tables(b) for g, b in BRIEFS.items()}
    one = PACK.genres["platformer"].apply_changes(out["platformer"], [Ch("levels", "set", 1)], BRIEFS["platformer"])
    assert one.ok and len(one.tables["levels.json"]["levels"]) == 1, one.refused
    out["platformer"] = one.tables
    return out


def _passes(genre: Genre, tables: dict[str, Any], plays: bool = True) -> None:
    """The data gates (schema, the genre's checks) pass on ``tables``; with ``plays``, the builder's hold too (the
    latch split's win and lose plays on the mirror: winnable and losable). Without: `apply_changes` held them."""
    gates = genre_data_gates(genre, tables)
    assert all(g.passed for g in gates), [f"{g.id}: {g.summary}" for g in gates if not g.passed]
    if plays:
        builder: Any = genre.module("builder")
        builder.hold_tables(copy.deepcopy(tables))


def test_every_genre_has_knobs_on_numbers_its_template_reads() -> None:
    for genre in PACK.genres.values():
        assert genre.adjust, f"{genre.id} has no adjust:"
        template = {t: json.loads((genre.template_dir / "data" / t).read_text()) for t in genre.spec.data_tables}
        for knob in genre.adjust:
            values = knob_values(knob, template)
            assert values and all(isinstance(v, int | float) for _at, v in values), (genre.id, knob.id)
            assert knob.role in ("gameplay", "level", "economy", "ui", "audio", "vfx", "assets")
            assert knob.nouns and knob.nouns_zh and knob.what and knob.what_zh
    platformer = {k.id: k for k in PACK.genres["platformer"].adjust}
    assert platformer["air_jumps"].off == 0 and platformer["time_limit"].off is None  # a bare YAML `off:` key
    assert platformer["levels"].count_of == "levels" and PACK.genres["maze"].knob("enemy_speed").inverse  # type: ignore[union-attr]
    assert not any(k.off is not None and "time" in k.id for g in PACK.genres.values() for k in g.adjust), \
        "no template runs without its clock: no time knob may be removable"


def test_a_knob_on_a_path_or_table_the_template_lacks_is_refused_at_load(tmp_path: Path) -> None:
    src = ROOT / "capability_packs" / "phaser" / "genres" / "shop"
    for bad, says in (({"path": "no_such_key"}, "has no no_such_key"), ({"table": "orders.json", "path": "orders"},
                                                                        "is not a number"),
                      ({"table": "levels.json"}, "not one of its data tables")):
        root = tmp_path / f"case{len(says)}" / "shop"
        shutil.copytree(src, root, ignore=shutil.ignore_patterns("__pycache__", "tests"))
        manifest = yaml.safe_load((root / "genre.yaml").read_text())
        manifest["adjust"][0] |= bad
        (root / "genre.yaml").write_text(yaml.safe_dump(manifest, allow_unicode=True))
        with pytest.raises(PackError, match=says):
            load_genres(root.parent, "copy")
    with pytest.raises(ValueError, match="min"):
        Knob(id="x", what="x", what_zh="x", role="level", table="a.json", path="a", type="int", nouns=["x"], min=5,
             max=1)


# the platformer's twelve holds take ~5 s (its mirror plays each one): kept out of the fast tier
@pytest.mark.parametrize("gid", ["shop", "maze", pytest.param("platformer", marks=pytest.mark.slow)])
def test_every_knob_up_and_down_holds_or_is_refused_with_the_reason(gid: str, built: dict[str, Any]) -> None:
    genre, tables = PACK.genres[gid], built[gid]
    before = json.dumps(tables, sort_keys=True)
    applied_any = 0
    for knob in genre.adjust:
        old = dict(knob_values(knob, tables))
        for direction in ("up", "down"):
            got = genre.apply_changes(tables, [Ch(knob.id, direction)], BRIEFS[gid])
            assert json.dumps(tables, sort_keys=True) == before, "the input tables are never changed"
            if not got.ok:
                assert got.refused and got.failures and got.tables is tables, (knob.id, direction)
                continue
            if not got.edits:  # already at a bound: the clamp says so
                assert got.clamps, (knob.id, direction)
                continue
            applied_any += 1
            _passes(genre, got.tables, plays=False)  # holding them was apply_changes' own last step
            for edit in got.edits:
                assert (edit.knob, edit.table) == (knob.id, knob.table)
                assert edit.old == old[edit.path]
                assert (edit.new > edit.old) == (direction == "up"), (knob.id, direction, edit)
                assert knob.min <= edit.new <= knob.max
            now = dict(knob_values(knob, got.tables))
            assert {e.path: e.new for e in got.edits}.items() <= now.items()
    assert applied_any >= len(genre.adjust), f"{gid}: most knob changes must hold"


def test_a_count_knob_grows_and_shrinks_its_list_through_the_builder(built: dict[str, Any]) -> None:
    for gid, knob, n in (("platformer", "levels", 2), ("maze", "mazes", 3), ("shooter", "waves", 6)):
        genre, tables = PACK.genres[gid], built[gid]
        table, path = genre.knob(knob).table, genre.knob(knob).path  # type: ignore[union-attr]
        had = len(tables[table][path])
        grown = genre.apply_changes(tables, [Ch(knob, "set", n)], BRIEFS[gid])
        assert grown.ok, grown.refused
        assert len(grown.tables[table][path]) == n > had and grown.edits[0].as_dict() == {
            "knob": knob, "table": table, "path": path, "old": had, "new": n}
        assert grown.tables[table][path][:had - 1] == tables[table][path][:had - 1]
        _passes(genre, grown.tables, plays=gid == "maze")
        again = genre.apply_changes(tables, [Ch(knob, "set", n)], BRIEFS[gid])
        assert json.dumps(again.tables, sort_keys=True) == json.dumps(grown.tables, sort_keys=True), "deterministic"
        fewer = genre.apply_changes(grown.tables, [Ch(knob, "down", 1)], BRIEFS[gid])
        assert fewer.ok and len(fewer.tables[table][path]) == n - 1
    levels = built["platformer"]["levels.json"]["levels"]
    grown = PACK.genres["platformer"].apply_changes(built["platformer"], [Ch("levels", "up", 1)], BRIEFS["platformer"])
    assert [lv["id"] for lv in grown.tables["levels.json"]["levels"]] == [levels[0]["id"], "level_2"]


def test_a_value_beyond_the_bounds_is_clamped_and_the_clamp_reported(built: dict[str, Any]) -> None:
    maze = PACK.genres["maze"]
    got = maze.apply_changes(built["maze"], [Ch("lives", "set", 20)])
    assert got.ok and got.tables["rules.json"]["lives"] == 5
    assert got.clamps == ["lives lives: 20 asked, 5 is the most"]
    low = maze.apply_changes(built["maze"], [Ch("enemy_speed", "set", 10)])
    assert low.ok and low.tables["rules.json"]["enemy_step_ms"] == 150 and "150 is the least" in low.clamps[0]


def test_what_a_genre_cannot_take_is_refused_and_nothing_applied(built: dict[str, Any]) -> None:
    shop, platformer = PACK.genres["shop"], PACK.genres["platformer"]
    timer = shop.apply_changes(built["shop"], [Ch("day_length", "off")])
    assert not timer.ok and "cannot be removed" in (timer.refused or "") and timer.tables is built["shop"]
    unknown = shop.apply_changes(built["shop"], [Ch("patience", "up")])
    assert not unknown.ok and "no adjustable number 'patience'" in (unknown.refused or "")
    # the lowest jump cannot clear the level's gaps: holding fails, the reason names the gate, nothing is applied
    low = platformer.apply_changes(built["platformer"], [Ch("jump", "set", 300), Ch("lives", "up")])
    assert not low.ok and any("solvable" in f for f in low.failures) and low.tables is built["platformer"]
    # a theme or genre change is no number: apply_changes leaves it to its caller
    assert shop.apply_changes(built["shop"], [Ch("snowy", "set", kind="theme")]).edits == []


def test_a_removable_knob_goes_off_and_comes_back(built: dict[str, Any]) -> None:
    platformer = PACK.genres["platformer"]
    double = platformer.apply_changes(built["platformer"], [Ch("air_jumps", "up")])
    assert double.ok and double.tables["physics.json"]["air_jumps"] == 1
    off = platformer.apply_changes(double.tables, [Ch("air_jumps", "off")])
    assert off.ok and off.tables["physics.json"]["air_jumps"] == 0 and off.edits[0].old == 1
    shooter = PACK.genres["shooter"]
    quiet = shooter.apply_changes(built["shooter"], [Ch("enemy_fire", "off")])
    assert quiet.ok and all(e["fire_ms"] == 0 for e in quiet.tables["enemies.json"]["enemies"])
    assert shooter.apply_changes(quiet.tables, [Ch("enemy_fire", "down")]).edits == [], \
        "enemies that never fire stay so when the others fire faster"


def test_steps_and_durations_round_as_the_tables_count(built: dict[str, Any]) -> None:
    maze = PACK.genres["maze"]
    times = [m["time_ms"] for m in built["maze"]["mazes.json"]["mazes"]]
    more = maze.apply_changes(built["maze"], [Ch("time_limit", "up", 30_000)])
    assert [m["time_ms"] for m in more.tables["mazes.json"]["mazes"]] == [t + 30_000 for t in times]
    shorter = maze.apply_changes(built["maze"], [Ch("time_limit", "down")])
    assert all(m["time_ms"] % 1000 == 0 for m in shorter.tables["mazes.json"]["mazes"])
    two = maze.apply_changes(built["maze"], [Ch("lives", "up", 2)])
    assert two.tables["rules.json"]["lives"] == built["maze"]["rules.json"]["lives"] + 2
