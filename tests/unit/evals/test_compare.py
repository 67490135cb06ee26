"""``tier2 eval compare A B``: brief by brief, the regression rules (docs/eval.md "Comparing two evals") and the
exit codes (0 none, 1 regression, 2 bad input)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.eval_results import SUITE, results, row, suite_rows
from tier2.cli import main
from tier2.evals.compare import CompareError, Rules, compare, read_results
from tier2.evals.results import EvalResults, SuiteRef


def _write(tmp_path: Path, name: str, res: EvalResults) -> Path:
    out = tmp_path / name
    out.mkdir()
    (out / "results.json").write_text(res.dump_json(), encoding="utf-8")
    return out


def _cli(a: Path | str, b: Path | str, *flags: str) -> int:
    return main(["eval", "compare", str(a), str(b), *flags])


def test_same_results_are_no_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path, "a", results(suite_rows()))
    b = _write(tmp_path, "b", results(suite_rows()))
    assert _cli(a, b) == 0
    assert "no regression beyond noise" in capsys.readouterr().out


def test_a_broken_genre_on_the_deterministic_route_is_named_with_its_briefs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path, "a", results(suite_rows()))
    b = _write(tmp_path, "b", results(suite_rows(broken="shop")))
    assert _cli(a / "results.json", b) == 1
    out = capsys.readouterr().out
    assert "REGRESSION offline: brief shop-1 (shop) regressed: 1/1 -> 0/1" in out
    assert "REGRESSION offline: brief shop-2 (shop) regressed" in out
    assert "genre shop regressed" in out and "briefs: shop-1, shop-2" in out
    assert "brief maze-1" not in out.split("REGRESSION", 1)[1]  # only the broken genre's briefs are named
    c = compare(read_results(a), read_results(b))
    pair = c.pairs[0]
    assert [g.name for g in pair.genres if g.regressed] == ["shop"]
    assert {d.brief: d.verdict for d in pair.briefs if d.verdict != "same"} == {"shop-1": "regressed",
                                                                                "shop-2": "regressed"}


def test_an_improvement_is_reported_and_exits_0(tmp_path: Path) -> None:
    c = compare(results(suite_rows(broken="maze")), results(suite_rows()))
    assert not c.regressions
    assert {d.brief for d in c.pairs[0].briefs if d.verdict == "improved"} == {"maze-1", "maze-2"}


def test_k1_flip_on_a_sampling_route_is_noise_but_listed() -> None:
    a = results(suite_rows(model="gpt"))
    b = results(suite_rows(model="gpt", broken="puzzle"))
    c = compare(a, b)
    assert not c.regressions  # K=1, 2 briefs 2/2 -> 0/2: Fisher p = 1/6 (x6 Holm) is within noise
    verdicts = {d.brief: d.verdict for d in c.pairs[0].briefs}
    assert verdicts["puzzle-1"] == verdicts["puzzle-2"] == "worse"
    assert compare(a, b, Rules(deterministic=frozenset({"gpt"}))).regressions  # declared deterministic: real


def test_repeats_make_a_genre_regression_significant_on_a_sampling_route() -> None:
    a = results(suite_rows(model="gpt", repeats=3), repeat=3)
    b = results(suite_rows(model="gpt", repeats=3, broken="clicker"), repeat=3)
    c = compare(a, b)
    pair = c.pairs[0]
    clicker = next(g for g in pair.genres if g.name == "clicker")
    assert (clicker.a_passed, clicker.a_n, clicker.b_passed, clicker.b_n) == (6, 6, 0, 6)
    assert clicker.regressed and clicker.p < 0.05  # 6/6 -> 0/6: p = 1/924, x6 genres
    assert [g.name for g in pair.genres if g.regressed] == ["clicker"]
    # per brief 3/3 -> 0/3 is p = 0.05 before Holm over 12 briefs: not significant alone
    assert {d.verdict for d in pair.briefs if d.genre == "clicker"} == {"worse"}


def test_one_brief_of_many_failing_once_in_three_is_noise() -> None:
    a = results(suite_rows(model="gpt", repeats=3), repeat=3)
    rows = suite_rows(model="gpt", repeats=3)
    rows[0] = row("shop-1", "shop", False, model="gpt", repeat=0)
    assert not compare(a, results(rows, repeat=3)).regressions


def test_cost_and_time_regressions_beyond_their_ratio() -> None:
    a = results(suite_rows(model="gpt", cost=0.02, wall=20.0))
    assert not compare(a, results(suite_rows(model="gpt", cost=0.024, wall=28.0))).regressions  # x1.2, x1.4
    found = compare(a, results(suite_rows(model="gpt", cost=0.03, wall=20.0))).regressions
    assert found == ["gpt: cost per delivered game p50 (USD) regressed: 0.02 -> 0.03 (limit 1.25x)"]
    found = compare(a, results(suite_rows(model="gpt", cost=0.02, wall=31.0))).regressions
    assert found == ["gpt: time per run p50 (s) regressed: 20 -> 31 (limit 1.5x)"]
    # offline costs nothing: a ratio of zeros is no regression; a small time change under min_time_s neither
    z = results(suite_rows(wall=2.0))
    assert not compare(z, results(suite_rows(wall=5.0))).regressions


def test_two_models_pair_each_with_its_own_and_different_single_models_pair_together() -> None:
    a = results(suite_rows(model="m1") + suite_rows(model="m2"))
    b = results(suite_rows(model="m1") + suite_rows(model="m2", broken="shooter"))
    c = compare(a, b, Rules(deterministic=frozenset({"m1", "m2"})))
    assert [(p.model_a, p.model_b) for p in c.pairs] == [("m1", "m1"), ("m2", "m2")]
    assert all(r.startswith("m2: ") for r in c.regressions) and c.regressions
    cross = compare(results(suite_rows(model="m1")), results(suite_rows(model="m2")))
    assert [(p.model_a, p.model_b) for p in cross.pairs] == [("m1", "m2")]


def test_briefs_only_on_one_side_are_listed_not_tested() -> None:
    a = results(suite_rows())
    b = results([r for r in suite_rows() if r.brief_id != "maze-2"])
    c = compare(a, b)
    assert not c.regressions
    assert {d.brief: d.verdict for d in c.pairs[0].briefs}["maze-2"] == "only_a"


def test_json_output_holds_the_regressions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path, "a", results(suite_rows()))
    b = _write(tmp_path, "b", results(suite_rows(broken="maze")))
    assert _cli(a, b, "--json") == 1
    data = json.loads(capsys.readouterr().out)
    assert len(data["regressions"]) == 3 and data["rules"]["deterministic"] == ["offline"]


@pytest.mark.parametrize("case", ["missing", "not_json", "schema", "invalid", "other_suite", "changed_suite",
                                  "no_common_model"])
def test_bad_input_exits_2_with_a_clear_error(case: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path, "a", results(suite_rows()))
    b = tmp_path / "b.json"
    expected = {"missing": "cannot read", "not_json": "not JSON", "schema": "schema 'tier2.eval.results/0'",
                "invalid": "not a valid tier2.eval.results/1: runs.0.status",
                "other_suite": "different suites: A ran 'mixed', B ran 'hostile'",
                "changed_suite": "suite 'mixed' changed between the evals",
                "no_common_model": "no model in common"}[case]
    good = json.loads(results(suite_rows()).dump_json())
    if case == "not_json":
        b.write_text("{not json", encoding="utf-8")
    elif case == "schema":
        b.write_text(json.dumps({**good, "schema": "tier2.eval.results/0"}), encoding="utf-8")
    elif case == "invalid":
        good["runs"][0]["status"] = 3
        b.write_text(json.dumps(good), encoding="utf-8")
    elif case == "other_suite":
        b.write_text(results(suite_rows(), suite=SuiteRef(id="hostile", version="1", hash="cd" * 32)).dump_json())
    elif case == "changed_suite":
        b.write_text(results(suite_rows(), suite=SUITE.model_copy(update={"version": "2", "hash": "ef" * 32}))
                     .dump_json())
    elif case == "no_common_model":
        b.write_text(results(suite_rows(model="x") + suite_rows(model="y")).dump_json())
    assert _cli(a, b) == 2
    assert expected in capsys.readouterr().err


def test_read_results_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(CompareError, match=str(tmp_path / "nothing" / "results.json").replace(".", r"\.")):
        (tmp_path / "nothing").mkdir()
        read_results(tmp_path / "nothing")


def test_bad_thresholds_exit_2(tmp_path: Path) -> None:
    a = _write(tmp_path, "a", results(suite_rows()))
    assert _cli(a, a, "--alpha", "0") == 2
    assert _cli(a, a, "--cost-ratio", "0.5") == 2


def test_runs_shared_by_both_evals_are_noted() -> None:
    a = results(suite_rows())
    assert any("of B's runs are A's own" in n for n in compare(a, a).notes)
    other = results([r.model_copy(update={"run_id": f"{r.run_id}-b"}) for r in suite_rows()])
    assert not any("of B's runs are A's own" in n for n in compare(a, other).notes)
