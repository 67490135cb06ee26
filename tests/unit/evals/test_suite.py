"""The eval suite loader: strict schema, duplicate ids, unknown genres, the canonical hash; the shipped suites load
and meet the issue's sizes (≥ 8 briefs per pack genre in mixed, ≥ 30 tycoon briefs, follow-ups, hostile, smoke)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tier2.errors import BadInput
from tier2.evals.command import add_eval_command, loaded
from tier2.evals.suite import load_suite, suite_hash
from tier2.settings.loader import REPO_ROOT

GENRES = {"shop", "shooter", "platformer", "puzzle", "clicker", "maze", "racing", "rpg", "tower_defense"}
GOOD = """schema: tier2.eval.suite/1
id: t
version: 1
briefs:
  - {id: a, brief: "a platformer with a fox", expect: {genre: platformer, content: [fox]}}
  - id: b
    brief: "a bakery tycoon"
    follow_ups: [{text: "make the day longer", expect: {outcome: delivered, genre: shop}}]
"""


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "suite.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def test_a_good_suite_loads_from_its_directory_or_file(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path, GOOD), GENRES)
    assert suite.version == "1" and [b.id for b in suite.briefs] == ["a", "b"]
    assert suite.briefs[0].expect.content == ("fox",) and suite.briefs[1].expect.outcome == "delivered"
    assert suite.briefs[1].follow_ups[0].expect.genre == "shop"
    assert suite_hash(load_suite(tmp_path / "suite.yaml", GENRES)) == suite_hash(suite)


def test_the_hash_ignores_formatting_and_follows_content(tmp_path: Path) -> None:
    base = suite_hash(load_suite(_write(tmp_path, GOOD), GENRES))
    reformatted = GOOD.replace("id: t\n", "id:    t   # the same\n")
    assert suite_hash(load_suite(_write(tmp_path, reformatted), GENRES)) == base
    changed = GOOD.replace("with a fox", "with a wolf")
    assert suite_hash(load_suite(_write(tmp_path, changed), GENRES)) != base
    assert suite_hash(load_suite(_write(tmp_path, GOOD.replace("version: 1", "version: 2")), GENRES)) != base


@pytest.mark.parametrize(("text", "message"), [
    (GOOD.replace("tier2.eval.suite/1", "tier2.eval.suite/9"), "schema must be"),
    (GOOD.replace("id: b\n", "id: a\n"), "duplicate brief id 'a'"),
    (GOOD.replace("genre: platformer", "genre: platformr"), "unknown genre 'platformr'"),
    (GOOD.replace("genre: shop", "genre: kart"), "b follow-up 1: unknown genre 'kart'"),
    (GOOD.replace("content: [fox]", "content: [fox], colour: red"), "briefs.0.expect.colour"),
    (GOOD.replace("version: 1\n", "version: 1\nauthor: me\n"), "author"),
    (GOOD.replace("expect: {genre: platformer", "expect: {outcome: maybe, genre: platformer"), "outcome"),
    (GOOD.replace("id: a,", "id: 'a b',"), "briefs.0.id"),
    ("schema: tier2.eval.suite/1\nid: t\nversion: 1\nbriefs: []\n", "briefs"),
    ("- just a list\n", "a mapping"),
    ("schema: [unclosed\n", "not a readable YAML file"),
])
def test_a_bad_suite_is_refused_naming_the_problem(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(BadInput, match=message) as err:
        load_suite(_write(tmp_path, text), GENRES)
    assert err.value.exit_code == 2 and "suite.yaml" in str(err.value)


def test_no_suite_there_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no eval suite"):
        load_suite(tmp_path, GENRES)


def test_the_shipped_suites_load_and_have_the_issue_sizes() -> None:
    suites = {p.parent.name: loaded(str(p.parent)) for p in sorted((REPO_ROOT / "evals").glob("*/suite.yaml"))}
    assert set(suites) >= {"smoke", "mixed", "tycoon", "follow-ups", "hostile"}
    assert len(suites["smoke"].briefs) == 3
    per_genre = Counter(b.expect.genre for b in suites["mixed"].briefs)
    assert {g: n for g, n in per_genre.items() if n >= 8}.keys() == {
        "shop", "shooter", "platformer", "puzzle", "clicker", "maze"}
    assert {b.lang for b in suites["mixed"].briefs} >= {"en", "zh"}
    assert len(suites["tycoon"].briefs) >= 30
    assert sum(len(b.follow_ups) for b in suites["follow-ups"].briefs) >= 10
    hostile = suites["hostile"].briefs
    assert {b.expect.outcome for b in hostile} == {"refused", "partial", "delivered"}
    assert {"injection", "language", "short", "long", "unbuildable"} <= {t for b in hostile for t in b.tags}
    assert max(len(b.brief) for b in hostile) > 4000 and min(len(b.brief) for b in hostile) < 8
    for s in suites.values():
        assert s.id == next(n for n, x in suites.items() if x is s)


def test_the_command_line_takes_the_issue_flags() -> None:
    import argparse

    p = argparse.ArgumentParser()
    add_eval_command(p.add_subparsers(dest="command"))
    args = p.parse_args(["eval", "evals/mixed", "--model", "offline", "--model", "offline-faulty", "--concurrency",
                         "2", "--budget-usd", "0.5", "--repeat", "3", "--out", "o", "--url", "http://127.0.0.1:1"])
    assert (args.suite, args.model, args.concurrency, args.budget_usd, args.repeat, args.out, args.url) == (
        "evals/mixed", ["offline", "offline-faulty"], 2, 0.5, 3, "o", "http://127.0.0.1:1")
    with pytest.raises(SystemExit):
        p.parse_args(["eval", "evals/mixed", "--repeat", "0"])
