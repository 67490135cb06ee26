"""``tier2 eval compare|report`` next to ``tier2 eval SUITE`` on one parser (`tier2.evals.subcommands`)."""

from __future__ import annotations

import pytest

from tier2.cli import build_parser
from tier2.evals.command import cmd_eval
from tier2.evals.compare import cmd_compare
from tier2.evals.report import cmd_report


def test_suite_compare_and_report_reach_their_handlers() -> None:
    parser = build_parser()
    suite = parser.parse_args(["eval", "evals/smoke", "--model", "offline", "--repeat", "2"])
    assert suite.fn is cmd_eval and suite.suite == "evals/smoke" and suite.repeat == 2
    cmp = parser.parse_args(["eval", "compare", "a", "b", "--alpha", "0.01", "--deterministic", "scripted"])
    assert cmp.fn is cmd_compare and (cmp.a, cmp.b, cmp.alpha, cmp.deterministic) == ("a", "b", 0.01, ["scripted"])
    rep = parser.parse_args(["eval", "report", "out"])
    assert rep.fn is cmd_report and rep.out == "out"
    assert parser.parse_args(["eval", "./compare"]).suite == "./compare"  # a suite dir of that name


def test_eval_help_names_compare_and_report(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["eval", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "SUITE" in out.upper() and "tier2 eval compare A B" in out and "tier2 eval report OUT" in out


def test_compare_without_its_arguments_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["eval", "compare", "only-a"])
    assert exc.value.code == 2 and "B" in capsys.readouterr().err
