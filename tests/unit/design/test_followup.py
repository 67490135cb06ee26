"""Reading a follow-up (tier2.design.reader.read_follow_up): a labelled table of follow-ups in English and Chinese on
shop, platformer and maze games — the changes (theme / knob / genre), the unbuildable asks with the genre's options,
the contradictions and the uninterpreted clauses each one must give — then spans, roles and tables, determinism,
and a reading applied to built tables."""

from __future__ import annotations

from typing import Any

import pytest

from tier2.design.reader import FollowUp, read_follow_up
from tier2.design.reader.followup import THEME_ROLES, describe
from tier2.packs import Pack

#: (genre of the built game, follow-up, what it must read as). ``changes``: ``kind:target`` for a theme or genre,
#: ``knob:<id>:<direction>[:<value>]`` for a knob (value in the table's unit); ``unbuildable`` / ``uninterpreted``:
#: the clauses; ``contradictions``: ``<a target>/<b target or ->``. A key left out must be empty.
CASES: list[tuple[str, str, dict[str, list[str]]]] = [
    # the and the brief's own examples
    ("shop", "same game, snowy theme", {"changes": ["theme:snowy"]}),
    # what a clause keeps as it is asks for no change (it is neither a change nor "not understood")
    ("shop", "keep the gameplay, make it a snowy frozen tavern", {"changes": ["theme:snowy frozen"]}),
    ("maze", "保持玩法不变，换成冬天的主题", {"changes": ["theme:冬天"]}),
    ("platformer", "don't change the levels, give me 4 lives", {"changes": ["knob:lives:set:4"]}),
    ("shop", "make the customers more patient and let me hire an assistant",
     {"unbuildable": ["make the customers more patient", "let me hire an assistant"]}),
    ("platformer", "give me 5 lives", {"changes": ["knob:lives:set:5"]}),
    ("maze", "give me 5 lives", {"changes": ["knob:lives:set:5"]}),
    ("shop", "give me 5 lives", {"unbuildable": ["give me 5 lives"]}),
    ("platformer", "add a second level", {"changes": ["knob:levels:set:2"]}),
    ("maze", "add a second level", {"changes": ["knob:mazes:set:2"]}),
    ("shop", "remove the timer", {"unbuildable": ["remove the timer"]}),
    ("platformer", "remove the timer", {"unbuildable": ["remove the timer"]}),
    ("shop", "make it set in space", {"changes": ["theme:space"]}),
    ("shop", "make the day longer", {"changes": ["knob:day_length:up"]}),
    ("maze", "more time", {"changes": ["knob:time_limit:up"]}),
    ("maze", "faster enemies", {"changes": ["knob:enemy_speed:down"]}),
    ("platformer", "three levels", {"changes": ["knob:levels:set:3"]}),
    ("shop", "make it a platformer instead", {"changes": ["genre:platformer"]}),
    ("shop", "add online multiplayer", {"unbuildable": ["add online multiplayer"]}),
    ("platformer", "more lives but fewer lives", {"contradictions": ["lives/lives"]}),
    ("maze", "make it easier and harder", {"contradictions": ["lives/lives"]}),
    ("maze", "set lives 0", {"contradictions": ["lives/-"]}),
    ("maze", "continue", {}),
    ("shop", "继续", {}),
    # more English
    ("platformer", "make it more fun", {"uninterpreted": ["make it more fun"]}),
    ("platformer", "jump higher and lower the gravity", {"changes": ["knob:jump:up", "knob:gravity:down"]}),
    ("platformer", "add a double jump", {"changes": ["knob:air_jumps:up:1"]}),
    ("platformer", "remove the double jump", {"changes": ["knob:air_jumps:off"]}),
    ("maze", "slower enemies, 2 more lives", {"changes": ["knob:enemy_speed:up", "knob:lives:up:2"]}),
    ("shop", "give me 500 starting money", {"changes": ["knob:start_money:set:500"]}),
    ("platformer", "90 seconds per level", {"changes": ["knob:time_limit:set:90000"]}),
    ("platformer", "make it harder", {"changes": ["knob:lives:down", "knob:time_limit:down", "knob:jump:down",
                                                  "knob:gravity:up", "knob:air_jumps:down"]}),
    ("shop", "easier please", {"changes": ["knob:start_money:up", "knob:goal_money:down", "knob:day_length:up"]}),
    ("maze", "add a level with more time", {"changes": ["knob:mazes:up:1", "knob:time_limit:up"]}),
    ("platformer", "let me shoot the enemies", {"unbuildable": ["let me shoot the enemies"]}),
    ("shop", "a spooky halloween look", {"changes": ["theme:spooky halloween"]}),
    ("shop", "lower the money goal and a longer day", {"changes": ["knob:goal_money:down", "knob:day_length:up"]}),
    ("maze", "same game but at night, and two more lives please", {"changes": ["theme:night", "knob:lives:up:2"]}),
    ("platformer", "make it a racing game instead", {"unbuildable": ["make it a racing game instead"]}),
    ("maze", "2 minutes per maze, and something about the vibes of it all",
     {"changes": ["knob:time_limit:set:120000"], "uninterpreted": ["something about the vibes of it all"]}),
    ("shop", "please make it harder but also easier", {"contradictions": ["start_money/start_money"]}),
    ("maze", "make the maze bigger", {"unbuildable": ["make the maze bigger"]}),  # a size, not a count of mazes
    ("maze", "more enemies", {"unbuildable": ["more enemies"]}),  # its enemy knob is their speed
    ("platformer", "longer levels", {"unbuildable": ["longer levels"]}),  # a count is not made longer
    ("platformer", "remove the spikes", {"unbuildable": ["remove the spikes"]}),
    ("maze", "lives: 4", {"changes": ["knob:lives:set:4"]}),
    # Chinese
    ("shop", "霓虹夜景", {"changes": ["theme:霓虹夜景"]}),
    ("maze", "三条命", {"changes": ["knob:lives:set:3"]}),
    ("platformer", "给我五条命", {"changes": ["knob:lives:set:5"]}),
    ("maze", "再加一关", {"changes": ["knob:mazes:up:1"]}),
    ("maze", "去掉计时器", {"unbuildable": ["去掉计时器"]}),
    ("platformer", "跳得更高一点", {"changes": ["knob:jump:up"]}),
    ("shop", "让顾客更有耐心，让我雇一个助手", {"unbuildable": ["让顾客更有耐心", "让我雇一个助手"]}),
    ("platformer", "改成迷宫游戏", {"changes": ["genre:maze"]}),
    ("maze", "敌人更快", {"changes": ["knob:enemy_speed:down"]}),
    ("maze", "同样的游戏，换成冬天的雪景", {"changes": ["theme:冬天的雪景"]}),
    ("platformer", "时间长一点，但是少一条命", {"changes": ["knob:time_limit:up", "knob:lives:down:1"]}),
    ("platformer", "加一个二段跳", {"changes": ["knob:air_jumps:up:1"]}),
    ("shop", "营业时间长一点，目标金额低一点", {"changes": ["knob:day_length:up", "knob:goal_money:down"]}),
    ("maze", "更难一点", {"changes": ["knob:lives:down", "knob:time_limit:down", "knob:enemy_speed:down"]}),
    ("platformer", "三个关卡", {"changes": ["knob:levels:set:3"]}),
    ("shop", "加入联网多人模式", {"unbuildable": ["加入联网多人模式"]}),
    ("maze", "多一条命，少一条命", {"contradictions": ["lives/lives"]}),
    ("platformer", "让它更好玩", {"uninterpreted": ["让它更好玩"]}),
    ("maze", "生命改成0", {"contradictions": ["lives/-"]}),
    ("shop", "把主题换成太空", {"changes": ["theme:太空"]}),
    ("platformer", "去掉二段跳", {"changes": ["knob:air_jumps:off"]}),
    ("maze", "敌人慢一点，时间多30秒", {"changes": ["knob:enemy_speed:up", "knob:time_limit:up:30000"]}),
    ("shop", "请继续", {}),
    ("platformer", "简单一点，但是重力大一点", {"changes": ["knob:lives:up", "knob:time_limit:up", "knob:jump:up",
                                                           "knob:air_jumps:up", "knob:gravity:up"]}),
    ("shop", "起始资金500", {"changes": ["knob:start_money:set:500"]}),
    ("maze", "换成森林风格", {"changes": ["theme:森林"]}),
]


def _summary(f: FollowUp) -> dict[str, list[str]]:
    def change(c: Any) -> str:
        if c.kind != "knob":
            return f"{c.kind}:{c.target}"
        return f"knob:{c.target}:{c.direction}" + (f":{c.value:g}" if c.value is not None else "")

    out = {"changes": [change(c) for c in f.changes], "unbuildable": [u.text for u in f.unbuildable],
           "contradictions": [f"{x.a.target}/{x.b.target if x.b else '-'}" for x in f.contradictions],
           "uninterpreted": [s.text for s in f.uninterpreted]}
    return {k: v for k, v in out.items() if v}


def test_the_table_is_as_large_and_as_chinese_as_promised() -> None:
    assert len(CASES) >= 40
    zh = [t for _g, t, _e in CASES if any("\u4e00" <= ch <= "\u9fff" for ch in t)]
    assert len(zh) * 3 >= len(CASES)
    assert {g for g, _t, _e in CASES} == {"shop", "platformer", "maze"}
    assert len({(g, t) for g, t, _e in CASES}) == len(CASES)


@pytest.mark.parametrize(("gid", "text", "want"), CASES, ids=[f"{g}-{t[:30]}" for g, t, _w in CASES])
def test_a_follow_up_reads_as_labelled(pack: Pack, gid: str, text: str, want: dict[str, list[str]]) -> None:
    got = read_follow_up(text, pack.genres[gid], pack)
    assert _summary(got) == want
    assert got.empty == (not want)


def test_every_item_carries_its_clause_span_and_text(pack: Pack) -> None:
    for gid, text, _want in CASES:
        f = read_follow_up(text, pack.genres[gid], pack)
        for item in [*f.changes, *f.unbuildable]:
            assert text[item.span[0]:item.span[1]] == item.text and item.text.strip(), (text, item)
        for x in f.contradictions:
            assert text[x.a.span[0]:x.a.span[1]] == x.a.text and x.why
        for s in f.uninterpreted:
            assert text[s.start:s.end] == s.text


def test_changes_name_their_designers_and_tables(pack: Pack) -> None:
    maze = pack.genres["maze"]
    f = read_follow_up("same game, snowy theme, faster enemies and three lives", maze, pack)
    by = {c.target: c for c in f.changes}
    assert (by["snowy"].roles, by["snowy"].tables) == (THEME_ROLES, ("theme.json",))
    assert (by["enemy_speed"].roles, by["enemy_speed"].tables) == (("level",), ("rules.json",))
    assert by["lives"].value == 3 and by["lives"].direction == "set"
    genre = read_follow_up("make it a platformer instead", pack.genres["shop"], pack).changes[0]
    assert set(genre.tables) == set(pack.genres["platformer"].spec.data_tables) and "gameplay" in genre.roles
    hard = read_follow_up("make it harder", maze, pack).changes
    assert {c.via for c in hard} == {"harder"} and {c.target for c in hard} == {
        k.id for k in maze.adjust if k.difficulty}


def test_an_unbuildable_ask_offers_what_the_genre_can_change(pack: Pack) -> None:
    shop = pack.genres["shop"]
    f = read_follow_up("let me hire an assistant", shop, pack)
    (u,) = f.unbuildable
    assert u.options == f.options == (*(k.what for k in shop.adjust), "a new theme")
    assert "shop" in u.reason and "hire" in u.reason
    timer = read_follow_up("remove the timer", shop, pack).unbuildable[0]
    assert "cannot remove timer: its template always uses the length of the day" in timer.reason
    zh = read_follow_up("去掉计时器", pack.genres["maze"], pack)
    assert zh.options[-1] == "新的主题" and "每关限时" in zh.unbuildable[0].reason


def test_reading_is_deterministic_and_reports_whole(pack: Pack) -> None:
    for gid, text, _want in CASES[:12]:
        a = read_follow_up(text, pack.genres[gid], pack).as_dict()
        assert a == read_follow_up(text, pack.genres[gid], pack).as_dict()
        assert set(a) == {"text", "language", "changes", "unbuildable", "contradictions", "uninterpreted", "options"}
    unreadable = read_follow_up("hazlo más rápido y con más vidas, por favor", pack.genres["maze"], pack)
    assert unreadable.language == "unreadable" and len(unreadable.uninterpreted) == 1 and not unreadable.changes


def test_a_reading_applies_to_the_built_tables(pack: Pack) -> None:
    maze = pack.genres["maze"]
    brief = "a mouse walks a maze collecting cheese while dodging cats"
    tables = maze.build_tables(brief)
    f = read_follow_up("give me 4 lives, slower enemies and a snowy theme", maze, pack)
    applied = maze.apply_changes(tables, f.changes, brief)
    assert applied.ok, applied.refused
    assert applied.tables["rules.json"]["lives"] == 4
    assert applied.tables["rules.json"]["enemy_step_ms"] > tables["rules.json"]["enemy_step_ms"]
    assert {e.knob for e in applied.edits} == {"lives", "enemy_speed"}


def test_a_change_reads_back_as_a_requirement_text(pack: Pack) -> None:
    maze = pack.genres["maze"]
    f = read_follow_up("faster enemies, give me 4 lives, 2 minutes per maze and a snowy theme", maze, pack)
    assert [describe(c, maze) for c in f.changes] == [
        "the enemies' speed: raised", "the number of lives: 4", "the time limit of each maze: 120 s", "a snowy theme"]
    zh = read_follow_up("敌人更快", maze, pack).changes[0]
    assert describe(zh, maze, "zh") == "敌人速度：提高"
