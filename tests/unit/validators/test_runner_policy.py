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
