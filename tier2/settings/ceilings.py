"""Ceilings on hot-policy values: the policy (``config/policy``) may lower them, never raise them.

Three levels, each bounded by the one above it:

1. **compiled maxima** (the ``*_MAX`` constants here, `tier2.settings.tenants`, `tier2.settings.sandbox`) —
   mechanism: moving one is a code change;
2. the **versioned security config** — ``[ceilings]`` for the values below, ``[tools] max_write_bytes`` and
   ``[sandbox]`` for write caps and workspaces (``config/security/*.toml``, loaded once at start; a value above a
   compiled maximum refuses to load);
3. the **hot policy** — a policy whose value is above its ceiling is refused as a whole, with the reason, and the
   previous snapshot stays in effect (`tier2.settings.loader.PolicyStore`).

Policy values with a ceiling (the dotted name is the policy's, and the ``[ceilings]`` key):

* ``budget.usd``, ``budget.tokens``, ``budget.deadline_s`` (the default of a run without its own budget; ``null`` —
  no default cap — stays allowed: every service run is still bounded by its tenant's ``max_usd`` /
  ``max_tokens`` / ``max_deadline_s`` when it starts), ``budget.max_output_tokens``;
* ``writer.max_iters``, ``writer.max_fix_rounds``;
* ``breakers.steps_per_run``, ``breakers.steps_per_turn``, ``breakers.model_call_s``, ``breakers.tool_call_s``;
* ``timeouts.build_s``, ``timeouts.validation_s``, ``timeouts.gate_s``, ``timeouts.boot_s``,
  ``timeouts.model_call_s``; ``l3_timeout_s``;
* ``durability.max_attempts``;
* ``tools.max_write_bytes`` (ceiling: the security config's ``[tools] max_write_bytes``);
* ``sandbox.limits.*`` (ceiling: ``[sandbox.limits]``), ``sandbox.allowed_kinds`` (only kinds ``[sandbox]``
  allows), ``sandbox.default_kind`` (one of the kinds left), ``sandbox.network`` (never ``true``).
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from tier2.settings.policy import Policy
from tier2.settings.sandbox import SandboxConfig
from tier2.settings.tenants import DEADLINE_S_CEILING, TOKENS_CEILING, USD_CEILING

__all__ = ["BreakerCeilings", "BudgetCeilings", "DurabilityCeilings", "PolicyCeilings", "TimeoutCeilings",
           "WriterCeilings", "policy_violations"]

MAX_OUTPUT_TOKENS_MAX: Final = 1_000_000
MAX_ITERS_MAX: Final = 1000
FIX_ROUNDS_MAX: Final = 50
STEPS_MAX: Final = 10_000
CALL_S_MAX: Final = 7200.0
TIMEOUT_S_MAX: Final = 3600.0
ATTEMPTS_MAX: Final = 1000

_FORBID = ConfigDict(extra="forbid", frozen=True)


class BudgetCeilings(BaseModel):
    model_config = _FORBID
    usd: float = Field(default=5.0, gt=0, le=USD_CEILING, allow_inf_nan=False)
    tokens: int = Field(default=5_000_000, ge=1, le=TOKENS_CEILING)
    deadline_s: float = Field(default=3600.0, gt=0, le=DEADLINE_S_CEILING, allow_inf_nan=False)
    max_output_tokens: int = Field(default=65_536, ge=1, le=MAX_OUTPUT_TOKENS_MAX)


class WriterCeilings(BaseModel):
    model_config = _FORBID
    max_iters: int = Field(default=64, ge=1, le=MAX_ITERS_MAX)
    max_fix_rounds: int = Field(default=5, ge=0, le=FIX_ROUNDS_MAX)


class BreakerCeilings(BaseModel):
    model_config = _FORBID
    steps_per_run: int = Field(default=200, ge=1, le=STEPS_MAX)
    steps_per_turn: int = Field(default=60, ge=1, le=STEPS_MAX)
    model_call_s: float = Field(default=600.0, gt=0, le=CALL_S_MAX, allow_inf_nan=False)
    tool_call_s: float = Field(default=600.0, gt=0, le=CALL_S_MAX, allow_inf_nan=False)


class TimeoutCeilings(BaseModel):
    model_config = _FORBID
    build_s: float = Field(default=300.0, gt=0, le=TIMEOUT_S_MAX, allow_inf_nan=False)
    validation_s: float = Field(default=300.0, gt=0, le=TIMEOUT_S_MAX, allow_inf_nan=False)
    gate_s: float = Field(default=60.0, gt=0, le=TIMEOUT_S_MAX, allow_inf_nan=False)
    boot_s: float = Field(default=60.0, gt=0, le=TIMEOUT_S_MAX, allow_inf_nan=False)
    model_call_s: float = Field(default=600.0, gt=0, le=CALL_S_MAX, allow_inf_nan=False)


class DurabilityCeilings(BaseModel):
    model_config = _FORBID
    max_attempts: int = Field(default=100, ge=1, le=ATTEMPTS_MAX)


class PolicyCeilings(BaseModel):
    """Security config ``[ceilings]``: the highest value the hot policy may give each of these settings."""

    model_config = _FORBID
    budget: BudgetCeilings = BudgetCeilings()
    writer: WriterCeilings = WriterCeilings()
    breakers: BreakerCeilings = BreakerCeilings()
    timeouts: TimeoutCeilings = TimeoutCeilings()
    durability: DurabilityCeilings = DurabilityCeilings()
    l3_timeout_s: float = Field(default=120.0, gt=0, le=TIMEOUT_S_MAX, allow_inf_nan=False)


def _numbers_above(values: Any, ceilings: BaseModel, path: str) -> list[str]:
    """Every value of ``values`` above the same-named field of ``ceilings`` (nested sections walked alike)."""
    found: list[str] = []
    for name in type(ceilings).model_fields:
        ceiling = getattr(ceilings, name)
        value = getattr(values, name)
        where = f"{path}{name}"
        if isinstance(ceiling, BaseModel):
            found += _numbers_above(value, ceiling, where + ".")
        elif value is not None and value > ceiling:
            found.append(f"{where} = {value:g} is above its ceiling {ceiling:g} ([ceilings] {where} in the "
                         "security config)")
    return found


def _sandbox(policy: Policy, security: SandboxConfig) -> list[str]:
    found: list[str] = []
    asked = policy.sandbox
    if asked.network:
        found.append("sandbox.network = true is refused: no workspace kind ever gets a network ([sandbox] network "
                     "= false)")
    kinds = [k for k in security.allowed_kinds if asked.allowed_kinds is None or k in asked.allowed_kinds]
    if asked.allowed_kinds is not None:
        extra = [k for k in asked.allowed_kinds if k not in security.allowed_kinds]
        if extra:
            found.append(f"sandbox.allowed_kinds names {', '.join(extra)}, which the security config does not allow "
                         f"([sandbox] allowed_kinds = {list(security.allowed_kinds)})")
        if not kinds:
            found.append("sandbox.allowed_kinds leaves no workspace kind")
    if asked.default_kind is not None and asked.default_kind not in kinds:
        found.append(f"sandbox.default_kind = {asked.default_kind} is not among the allowed kinds {kinds}")
    if asked.limits is not None:
        for name in type(asked.limits).model_fields:
            value, ceiling = getattr(asked.limits, name), getattr(security.limits, name)
            if value is not None and value > ceiling:
                found.append(f"sandbox.limits.{name} = {value:g} is above its ceiling {ceiling:g} ([sandbox.limits] "
                             f"{name} in the security config)")
    return found


def policy_violations(policy: Policy, ceilings: PolicyCeilings, sandbox: SandboxConfig,
                      max_write_bytes: int) -> list[str]:
    """Why ``policy`` would raise a ceiling of the security config (empty: it keeps under every one)."""
    found = _numbers_above(policy, ceilings, "")
    wanted = policy.tools.max_write_bytes
    if wanted is not None and wanted > max_write_bytes:
        found.append(f"tools.max_write_bytes = {wanted} is above its ceiling {max_write_bytes} ([tools] "
                     "max_write_bytes in the security config)")
    return found + _sandbox(policy, sandbox)
