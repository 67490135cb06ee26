"""Tenant limits config (security TOML), finite budgets, the budget ceiling, allowed routes, window math."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tier2.errors import BadInput, SetupError
from tier2.middleware.budget import budget_caps
from tier2.runs.tenancy import RouteNotAllowed, admit_run, check_run_route, refusal, upload_limit
from tier2.settings.loader import REPO_ROOT, BudgetOverride, BudgetPolicy, Policy, PolicyStore, load_security
from tier2.settings.tenants import MAX_RUNNING_CEILING, TenantsConfig
from tier2.store.quotas import retry_after_s, seconds_to_next_utc_day, utc_day
from tier2.store.run_store import Accepted


def _security(tmp_path: Path, toml: str):
    cfg = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", cfg)
    (cfg / "security" / "zz-test.toml").write_text(toml)
    return load_security(cfg)


def test_repo_config_has_default_tenant_limits() -> None:
    tenants = load_security(REPO_ROOT / "config").tenants
    assert tenants.default.max_queued == 20 and tenants.default.max_running == 2
    assert tenants.limits("anyone") == tenants.default and tenants.default.allowed_routes is None


def test_an_override_replaces_the_default_field_by_field(tmp_path: Path) -> None:
    sec = _security(tmp_path, '[tenants.overrides.acme]\nmax_running = 5\nallowed_routes = ["offline"]\n'
                              "[tenants.overrides.tiny]\nmax_queued = 1\nmax_usd = 0.1\n")
    acme, tiny = sec.tenants.limits("acme"), sec.tenants.limits("tiny")
    assert acme.max_running == 5 and acme.max_queued == 20 and acme.allowed_routes == ("offline",)
    assert tiny.max_queued == 1 and tiny.max_running == 2 and tiny.max_usd == 0.1
    assert sec.tenants.max_running_table() == {"": 2, "acme": 5, "tiny": 2}


@pytest.mark.parametrize("toml", [
    f"[tenants.default]\nmax_running = {MAX_RUNNING_CEILING + 1}\n",       # above the compiled ceiling
    "[tenants.overrides.acme]\nmax_usd = 1e9\n",                            # an override cannot lift it either
    "[tenants.overrides.acme]\nmax_usd = inf\n",
    "[tenants.overrides.acme]\nmax_queued = 0\n",
    "[tenants.overrides.acme]\nmax_parallel = 3\n",                         # unknown field
])
def test_limits_beyond_the_compiled_ceilings_are_refused_at_load(tmp_path: Path, toml: str) -> None:
    with pytest.raises(SetupError):
        _security(tmp_path, toml)


@pytest.mark.parametrize("raw", ['{"usd": Infinity}', '{"usd": NaN}', '{"usd": 1e400}', '{"usd": -1}',
                                 '{"tokens": Infinity}', '{"deadline_s": -Infinity}', '{"usd": 1e9}'])
def test_a_budget_is_finite_positive_and_bounded(raw: str) -> None:
    with pytest.raises(ValueError) as err:
        BudgetOverride.model_validate(json.loads(raw))
    json.dumps(err.value.errors(include_url=False), allow_nan=False)  # the 422 body stays valid JSON


def test_a_stored_bad_budget_fails_the_run_instead_of_crashing() -> None:
    with pytest.raises(BadInput):
        budget_caps(BudgetPolicy(), {"usd": float("inf")})
    with pytest.raises(BadInput):
        budget_caps(BudgetPolicy(), {"usd": 1.0}, {"usd": float("nan")})


def test_the_tenant_ceiling_bounds_the_defaults_at_run_time() -> None:
    policy = BudgetPolicy(usd=0.5, tokens=None, deadline_s=900)
    caps = budget_caps(policy, None, {"usd": 0.2, "tokens": 1000, "deadline_s": 3600})
    assert (caps.usd, caps.tokens, caps.deadline_s) == (0.2, 1000, 900)
    caps = budget_caps(policy, {"usd": 0.1}, {"usd": 0.2})
    assert caps.usd == 0.1


def _policy() -> Policy:
    return PolicyStore(REPO_ROOT / "config").snapshot()


def test_admission_refuses_a_budget_above_the_tenant_ceiling() -> None:
    sec = load_security(REPO_ROOT / "config")
    with pytest.raises(BadInput, match="above tenant 'acme'.s ceiling of 5 USD"):
        admit_run(sec, _policy(), "acme", None, BudgetOverride(usd=10))
    ok = admit_run(sec, _policy(), "acme", None, BudgetOverride(usd=5))
    assert ok.options == {"budget_ceiling": {"usd": 5.0, "tokens": 5_000_000, "deadline_s": 3600.0}}
    assert ok.admission.max_queued == 20 and ok.admission.per_minute == 30


def test_admission_refuses_a_route_the_tenant_may_not_use(tmp_path: Path) -> None:
    sec = _security(tmp_path, '[tenants.overrides.acme]\nallowed_routes = ["offline"]\n'
                              '[tenants.overrides.paid]\nallowed_routes = ["openai"]\n')
    with pytest.raises(RouteNotAllowed, match="'openai' is not allowed for tenant 'acme'"):
        admit_run(sec, _policy(), "acme", "openai", None)
    admit_run(sec, _policy(), "acme", None, None)           # agents.writer = offline
    with pytest.raises(RouteNotAllowed, match="'offline'"):  # the per-agent routing may not bypass it either
        admit_run(sec, _policy(), "paid", None, None)
    data = _policy().model_dump()
    data["models"]["openai"]["fallback"] = "local"
    with pytest.raises(RouteNotAllowed, match="'local' \\(fallback of 'openai'\\)"):
        admit_run(sec, Policy(**data), "paid", "openai", None)


def test_refusals_carry_retry_after() -> None:
    sec = load_security(REPO_ROOT / "config")
    admitted = admit_run(sec, _policy(), "acme", None, None)
    full = refusal(Accepted("queue_full", detail="20"), admitted, now=1000.0)
    assert full is not None and full.status == 429 and full.retry_after and "max_queued = 20" in str(full)
    rate = refusal(Accepted("rate_limited", detail="990000"), admitted, now=1000.0)
    assert rate is not None and rate.retry_after == 50
    assert refusal(Accepted("created"), admitted, now=1000.0) is None
    assert upload_limit(sec, "acme") == min(sec.imports.max_upload_bytes, 500_000_000)


def test_window_math() -> None:
    assert retry_after_s(oldest_ms=0, now_ms=0) == 60
    assert retry_after_s(oldest_ms=0, now_ms=59_001) == 1
    assert retry_after_s(oldest_ms=0, now_ms=70_000) == 1      # never 0: the header asks for a wait
    noon = datetime(2026, 3, 1, 12, 0, tzinfo=UTC).timestamp()
    assert seconds_to_next_utc_day(noon) == 12 * 3600 and utc_day(noon) == "20260301"
    assert seconds_to_next_utc_day(datetime(2026, 3, 1, 23, 59, 59, 500_000, tzinfo=UTC).timestamp()) == 1


def test_tenants_config_defaults_without_a_section() -> None:
    assert TenantsConfig().limits("x").max_running == 2


def test_the_route_is_checked_again_when_the_run_starts(tmp_path: Path) -> None:
    sec = _security(tmp_path, '[tenants.overrides.acme]\nallowed_routes = ["offline"]\n')
    options = admit_run(sec, _policy(), "acme", None, None).options
    assert options["allowed_routes"] == ["offline"]
    check_run_route(_policy(), "offline", options)
    with pytest.raises(RouteNotAllowed, match="'openai'"):  # e.g. agents.writer was switched after acceptance
        check_run_route(_policy(), "openai", options)
    check_run_route(_policy(), "openai", {})                 # runs without the option (CLI): unrestricted
