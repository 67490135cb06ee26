"""Which pack suits a brief (`tier2.runs.loop.phases.pack_fit`), read against the real installed packs."""

from __future__ import annotations

import pytest

from tier2.packs import Pack
from tier2.packs.registry import allowed_packs
from tier2.runs.loop.phases.pack_fit import pack_advice, pack_fits
from tier2.settings.loader import Settings


@pytest.fixture(scope="module")
def packs() -> dict[str, Pack]:
    found = {p.id: p for p in allowed_packs(Settings())}
    assert {"phaser", "pixi"} <= set(found)
    return found


@pytest.mark.parametrize(("brief", "run", "asked"), [
    ("a PixiJS clicker game about cookies", "phaser", "PixiJS"),
    ("an idle clicker made with pixi.js", "phaser", "PixiJS"),
    ("用 Phaser 做一个迷宫游戏", "pixi", "Phaser"),
])
def test_a_brief_naming_another_engine_is_refused_with_the_pack_that_builds_it(brief: str, run: str, asked: str,
                                                                              packs: dict[str, Pack]) -> None:
    advice = pack_advice(brief, packs[run], list(packs.values()))
    assert advice.refuse is not None and advice.refuse.startswith(f"the brief asks for {asked}")
    other = next(p for p in packs if p != run)
    assert f"submit the brief with pack {other}" in advice.refuse and advice.suited[0] == other


@pytest.mark.parametrize(("brief", "run"), [
    ("an idle clicker about cookies", "phaser"),       # no engine named: the run's pack builds it
    ("a maze game made with pixi.js", "pixi"),         # its own engine
    ("a pixie fairy in a maze", "phaser"),             # a word that merely starts like an engine's name
    ("a Phaser platformer made with PixiJS", "phaser"),  # both named: this run's engine is among them
])
def test_no_refusal_when_the_run_s_pack_is_asked_for_or_none_is(brief: str, run: str, packs: dict[str, Pack]) -> None:
    assert pack_advice(brief, packs[run], list(packs.values())).refuse is None


def test_a_genre_only_another_pack_builds_is_named_in_the_note(packs: dict[str, Pack]) -> None:
    advice = pack_advice("a platformer with jumping frogs and coins", packs["pixi"], list(packs.values()))
    assert advice.refuse is None and advice.suited == ["phaser"] and "phaser (platformer)" in advice.note
    fits = {f.pack: f for f in pack_fits("a platformer with jumping frogs and coins", list(packs.values()))}
    assert fits["phaser"].genre == "platformer" and fits["pixi"].genre is None
