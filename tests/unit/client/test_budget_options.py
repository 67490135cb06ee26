"""A run's own budget: ``tier2 generate --budget-usd/--budget-tokens`` and ``"budget"`` on POST /v1/runs."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tier2.cli import build_parser, main
from tier2.client.args import budget_options as _budget_options
from tier2.runs.submit import RunSubmission
from tier2.service.schemas import RunCreate


def _options(body: RunCreate) -> dict:
    return RunSubmission(tenant="t", brief=body.brief, budget=body.budget).options()


def _args(*extra: str):
    return build_parser().parse_args(["generate", "a potion shop tycoon", *extra])


def test_cli_flags_become_the_run_budget_option() -> None:
    assert _budget_options(_args("--budget-usd", "0.41", "--budget-tokens", "200000")) == {
        "budget": {"usd": 0.41, "tokens": 200000}}
    assert _budget_options(_args()) == {"budget": {}}           # unset: the hot config default applies


@pytest.mark.parametrize("flag", [["--budget-usd", "0"], ["--budget-usd", "-1"], ["--budget-usd", "nan"],
                                  ["--budget-usd", "lots"], ["--budget-tokens", "0"], ["--budget-tokens", "1.5"]])
def test_cli_rejects_a_bad_budget_with_exit_2(flag: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["generate", "a potion shop tycoon", *flag])
    assert exc.value.code == 2
    assert flag[0] in capsys.readouterr().err                  # the message names the bad flag


def test_rest_budget_option_is_validated_and_passed_on() -> None:
    body = RunCreate(brief="a potion shop", budget={"usd": 0.5, "deadline_s": 600})
    assert _options(body) == {"budget": {"usd": 0.5, "deadline_s": 600}}
    assert _options(RunCreate(brief="a potion shop")) == {}
    for bad in ({"usd": 0}, {"tokens": 0}, {"tokens": 1.5}, {"deadline_s": -5}, {"usd": 1, "cents": 3}):
        with pytest.raises(ValidationError):
            RunCreate(brief="a potion shop", budget=bad)
