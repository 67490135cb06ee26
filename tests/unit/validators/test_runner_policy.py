"""Mechanism, not config: L1 always enforces, L3 never blocks, L2 follows hot policy."""

from __future__ import annotations

from tier2.settings.loader import Policy
from tier2.validators.base import ValidationResult
from tier2.validators.runner import apply_policy


def test_l1_cannot_be_disabled_by_config() -> None:
    policy = Policy(gates={"l1.boots": "observe"})
    result = apply_policy(ValidationResult(id="l1.boots", layer="L1", passed=False), policy)
    assert result.mode == "enforce" and result.blocking


def test_l3_never_blocks_even_if_config_says_enforce() -> None:
    policy = Policy(gates={"l3.visual_score": "enforce"})
    result = apply_policy(ValidationResult(id="l3.visual_score", layer="L3", passed=False), policy)
    assert result.mode == "observe" and not result.blocking


def test_l2_defaults_to_observe_and_follows_policy() -> None:
    failing = ValidationResult(id="l2.scene_count", layer="L2", passed=False)
    assert not apply_policy(failing, Policy()).blocking
    assert apply_policy(failing, Policy(gates={"l2.scene_count": "enforce"})).blocking


# --- hot policy `verdicts:` (rule -> mode -> verdict | finding) ------------------------------------------------------

import pytest  # noqa: E402

from tier2.settings.loader import REPO_ROOT, PolicyStore  # noqa: E402
from tier2.validators.l1.runtime_gates import no_errors  # noqa: E402
from tier2.validators.runner import apply_verdicts, report_findings  # noqa: E402
from tier2.validators.trace import InputProbe, PixelStats, PlayTrace  # noqa: E402


def _playing(**kw: object) -> PlayTrace:
    """A generic-mode trace of a game that boots, plays (an input reacted) and draws."""
    t = PlayTrace(mode="generic", loaded=True, booted=True,
                  inputs=[InputProbe("Space", "Space", {"a": 1}, {"a": 1}, {"a": 2}, 1)],
                  pixels=[PixelStats(800, 600, 40, 0.3, "02-play.png")])
    for k, v in kw.items():
        setattr(t, k, v)
    return t


NOISE = ["console.error: SW registration failed: SecurityError: Failed to register a ServiceWorker",
         "console.error: analytics TypeError: Failed to fetch",
         "request failed: HTTP 404 http://localhost:4173/assets/never-shown.png",
         "console.error: Failed to load resource: the server responded with a status of 404 (Not Found)"]


def test_the_policy_file_states_the_table_and_refuses_a_defect_as_a_rule() -> None:
    policy = PolicyStore(REPO_ROOT / "config").snapshot()
    assert policy.verdicts == Policy().verdicts  # the file states the defaults
    assert policy.verdicts.as_("l1.legible", "generic") == "finding"
    assert policy.verdicts.as_("l1.legible", "contract") == "verdict"
    assert policy.verdicts.as_("l1.boots", "generic") == "verdict"  # not a rule: always a verdict
    with pytest.raises(ValueError, match="always a verdict"):
        Policy(verdicts={"l1.canvas_not_blank": {"generic": "finding"}})


def test_noise_of_a_working_game_is_findings_in_generic_mode_and_verdicts_in_contract_mode() -> None:
    trace = _playing(errors=NOISE, blocked=["https://stats.example.com/hit [fetch]"])
    gate = no_errors(trace)
    assert not gate.passed
    rules = [f.rule for f in gate.findings]
    assert rules == ["l1.no_errors.blocked_request", "l1.no_errors.service_worker",
                     "l1.no_errors.blocked_request_error", "l1.no_errors.unshown_asset",
                     "l1.no_errors.unshown_asset"], rules
    generic = apply_verdicts(gate, "generic", Policy())
    assert generic.passed and all(f.severity == "warning" for f in generic.findings)
    assert {f["rule"] for f in report_findings([generic])} == set(rules)
    contract = apply_verdicts(no_errors(replace(trace, mode="contract")), "contract", Policy())
    assert not contract.passed and apply_policy(contract, Policy()).blocking


def test_a_real_error_still_fails_beside_the_noise_and_noise_of_a_dead_game_is_an_error() -> None:
    gate = apply_verdicts(no_errors(_playing(errors=[*NOISE, "pageerror: TypeError: x is undefined"],
                                             blocked=["https://stats.example.com/hit [fetch]"])), "generic", Policy())
    assert not gate.passed and [f.message for f in gate.findings if f.severity == "error"] == \
        ["pageerror: TypeError: x is undefined"]
    dead = _playing(errors=NOISE, inputs=[InputProbe("Space", "Space", {"a": 1}, {"a": 1}, {"a": 1}, None)])
    assert not apply_verdicts(no_errors(dead), "generic", Policy()).passed  # no input reacted: it may be why
    blank = _playing(errors=NOISE[2:3], pixels=[PixelStats(800, 600, 1, 0.0, "02-play.png")])
    assert not apply_verdicts(no_errors(blank), "generic", Policy()).passed  # a 404 and nothing drawn
    unblocked = no_errors(_playing(errors=NOISE[1:2]))  # "Failed to fetch" with nothing blocked: the game's own
    assert not apply_verdicts(unblocked, "generic", Policy()).passed
    hung = _playing(timed_out="the page stopped answering (infinite loop or hang?)")
    assert not apply_verdicts(no_errors(hung), "generic", Policy()).passed


from dataclasses import replace  # noqa: E402


def test_a_404_of_an_asset_the_game_shows_is_a_defect() -> None:
    shown = _playing(errors=NOISE[2:3], missing_textures=1)  # a sprite drawn with the missing-texture placeholder
    assert not apply_verdicts(no_errors(shown), "generic", Policy()).passed
    assert apply_verdicts(no_errors(_playing(errors=NOISE[2:3])), "generic", Policy()).passed


def test_every_finding_of_a_whole_gate_rule_is_reported_with_its_rule() -> None:
    from tier2.validators.base import Finding
    magic = ValidationResult(id="l1.magic_numbers", layer="L2", mode="observe", passed=False, summary="2 numbers",
                             findings=[Finding(message="src/a.js:3: 250 — speed", severity="warning")])
    generic = apply_verdicts(magic, "generic", Policy())
    assert generic.passed and report_findings([generic]) == [
        {"gate": "l1.magic_numbers", "rule": "l1.magic_numbers", "message": "src/a.js:3: 250 — speed"}]
    assert apply_verdicts(magic, "contract", Policy()) == magic  # contract mode: untouched (its L2 mode applies)


def test_an_http_clients_error_for_a_blocked_request_is_the_blocked_requests_noise() -> None:
    """axios says "Error: Network Error" when its XHR is refused (amcolash/farming-game asks GitHub's API for its
    commit list): with that request blocked it is the blocked request's error, a finding in generic mode."""
    axios = "[webgl] console.error: Error: Network Error\n    at t.exports (http://localhost:4173/dist/app.js:2:7)"
    trace = _playing(errors=[axios], blocked=["https://api.github.com/repos/x/y/commits?per_page=100 [xhr]"])
    gate = no_errors(trace)
    assert [f.rule for f in gate.findings] == ["l1.no_errors.blocked_request", "l1.no_errors.blocked_request_error"]
    assert apply_verdicts(gate, "generic", Policy()).passed
    assert not apply_verdicts(no_errors(_playing(errors=[axios])), "generic", Policy()).passed  # nothing blocked
