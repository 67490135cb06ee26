"""The three configuration tiers: compiled maxima bound the versioned security config, whose ceilings bound the hot
policy; a hot edit is validated before it takes effect and a refused one leaves the previous snapshot in place."""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from tier2.errors import SetupError
from tier2.settings.loader import CONFIG_LOG, REPO_ROOT, PolicyStore, load_policy, load_security
from tier2.store.keys import Keys
from tier2.store.policies import PolicySnapshots


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    dest = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", dest)
    return dest


def _edit(cfg: Path, text: str, name: str = "zz-edit.yaml") -> Path:
    """Write a policy file so that the store sees it as changed (a visibly newer mtime, however coarse the clock)."""
    path = cfg / "policy" / name
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    stamp = max(before, path.stat().st_mtime_ns) + 10**9
    os.utime(path, ns=(stamp, stamp))
    return path


def test_the_shipped_policy_keeps_under_every_shipped_ceiling() -> None:
    security = load_security(REPO_ROOT / "config")
    policy = load_policy(REPO_ROOT / "config", security)
    assert policy.breakers.steps_per_run <= security.ceilings.breakers.steps_per_run
    assert policy.budget.usd is not None and policy.budget.usd <= security.ceilings.budget.usd


RAISES = [
    ("breakers:\n  steps_per_run: 5000\n", "breakers.steps_per_run = 5000 is above its ceiling 200"),
    ("breakers:\n  model_call_s: 9000\n", "breakers.model_call_s = 9000 is above its ceiling 600"),
    ("budget:\n  usd: 50\n", "budget.usd = 50 is above its ceiling 5"),
    ("budget:\n  deadline_s: 86400\n", "budget.deadline_s = 86400 is above its ceiling 3600"),
    ("budget:\n  max_output_tokens: 200000\n", "budget.max_output_tokens = 200000 is above its ceiling 65536"),
    ("writer:\n  max_iters: 500\n", "writer.max_iters = 500 is above its ceiling 64"),
    ("timeouts:\n  build_s: 3000\n", "timeouts.build_s = 3000 is above its ceiling 300"),
    ("durability:\n  max_attempts: 500\n", "durability.max_attempts = 500 is above its ceiling 100"),
    ("l3_timeout_s: 900\n", "l3_timeout_s = 900 is above its ceiling 120"),
    ("tools:\n  max_write_bytes: 5000000\n", "tools.max_write_bytes = 5000000 is above its ceiling 1000000"),
    ("sandbox:\n  limits: {memory_mb: 8192}\n", "sandbox.limits.memory_mb = 8192 is above its ceiling 3072"),
    ("sandbox:\n  network: true\n", "sandbox.network = true is refused"),
]


@pytest.mark.parametrize(("edit", "reason"), RAISES, ids=[r[1].split(" ")[0] for r in RAISES])
def test_a_policy_edit_that_raises_a_ceiling_is_refused_and_the_previous_snapshot_stays(
        cfg: Path, edit: str, reason: str, caplog: pytest.LogCaptureFixture) -> None:
    store = PolicyStore(cfg)
    before = store.snapshot()
    caplog.set_level(logging.WARNING, logger=CONFIG_LOG)
    _edit(cfg, edit)
    after = store.snapshot()
    assert after is before                                     # the snapshot in effect did not move
    refusal = store.refused
    assert refusal is not None and reason in refusal.reason and refusal.in_effect == before.source_hash
    assert refusal.digest != before.source_hash                # the refused files are named by their own hash
    assert reason in caplog.text and "stays in effect" in caplog.text
    with pytest.raises(SetupError, match="raises a ceiling"):
        load_policy(cfg, load_security(cfg))                   # a fresh process refuses it at start, loudly


def test_lowering_a_ceiling_value_takes_effect(cfg: Path) -> None:
    store = PolicyStore(cfg)
    before = store.snapshot()
    _edit(cfg, "breakers:\n  steps_per_run: 10\ntools:\n  max_write_bytes: 1000\n"
               "sandbox:\n  allowed_kinds: [local, isolated]\n  limits: {memory_mb: 512}\n")
    after = store.snapshot()
    assert after.breakers.steps_per_run == 10 and after.tools.max_write_bytes == 1000
    assert after.sandbox.limits is not None and after.sandbox.limits.memory_mb == 512
    assert after.source_hash != before.source_hash and store.refused is None


def test_a_kind_the_security_config_does_not_allow_cannot_be_added_by_policy(cfg: Path) -> None:
    (cfg / "security" / "zz-kinds.toml").write_text('[sandbox]\nallowed_kinds = ["local", "isolated"]\n')
    store = PolicyStore(cfg)
    store.snapshot()
    _edit(cfg, "sandbox:\n  allowed_kinds: [isolated, docker]\n")
    store.snapshot()
    assert store.refused is not None and "names docker, which the security config does not allow" in \
        store.refused.reason
    _edit(cfg, "sandbox:\n  default_kind: docker\n")
    store.snapshot()
    assert store.refused is not None and "sandbox.default_kind = docker is not among the allowed kinds" in \
        store.refused.reason


def test_a_bad_edit_is_refused_then_a_good_one_takes_effect(cfg: Path) -> None:
    store = PolicyStore(cfg)
    before = store.snapshot()
    path = _edit(cfg, "writer: {max_iters: [not, a, number]\n")  # YAML syntax error
    assert store.snapshot() is before and store.refused is not None and "cannot parse" in store.refused.reason
    _edit(cfg, "writer: {max_iters: nine}\n", path.name)  # valid YAML, invalid value
    assert store.snapshot() is before and store.refused is not None and "invalid policy" in store.refused.reason
    _edit(cfg, "agents:\n  writer: no-such-route\n", path.name)  # routing checked before it takes effect too
    assert store.snapshot() is before and store.refused is not None and "no-such-route" in store.refused.reason
    _edit(cfg, "writer: {max_iters: 9}\n", path.name)
    fixed = store.snapshot()
    assert fixed.writer.max_iters == 9 and store.refused is None
    assert before.writer.max_iters == 24                       # the old snapshot object never changed


def test_a_refused_edit_is_logged_once(cfg: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = PolicyStore(cfg)
    store.snapshot()
    caplog.set_level(logging.WARNING, logger=CONFIG_LOG)
    path = _edit(cfg, "writer: {max_iters: 1000}\n")
    for _ in range(3):
        store.snapshot()
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)  # touched, same bytes: the same refusal
    store.snapshot()
    assert caplog.text.count("policy edit refused") == 1


def test_the_first_load_of_a_policy_above_a_ceiling_fails_loudly(cfg: Path) -> None:
    _edit(cfg, "breakers:\n  steps_per_turn: 1000\n")
    with pytest.raises(SetupError, match="breakers.steps_per_turn = 1000 is above its ceiling 60"):
        PolicyStore(cfg).snapshot()


def test_the_security_config_may_lower_a_ceiling_but_not_pass_the_compiled_maximum(cfg: Path) -> None:
    (cfg / "security" / "zz-ceilings.toml").write_text("[ceilings.breakers]\nsteps_per_run = 50\n")
    with pytest.raises(SetupError, match="breakers.steps_per_run = 80 is above its ceiling 50"):
        PolicyStore(cfg).snapshot()                            # the shipped policy's 80 is now too high
    (cfg / "security" / "zz-ceilings.toml").write_text("[ceilings.breakers]\nsteps_per_run = 50000\n")
    with pytest.raises(SetupError, match="invalid security config"):
        load_security(cfg)
    (cfg / "security" / "zz-ceilings.toml").write_text("[ceilings.budget]\nusd = inf\n")
    with pytest.raises(SetupError, match="invalid security config"):
        load_security(cfg)


def test_a_null_default_budget_is_allowed_the_tenant_ceiling_still_bounds_service_runs(cfg: Path) -> None:
    store = PolicyStore(cfg)
    store.snapshot()
    _edit(cfg, "budget:\n  usd: null\n  deadline_s: null\n")
    policy = store.snapshot()
    assert policy.budget.usd is None and store.refused is None


@pytest.mark.redis
async def test_a_policy_snapshot_round_trips_through_redis_by_its_hash(redis_url: str) -> None:
    policy = PolicyStore(REPO_ROOT / "config").snapshot()
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    snapshots = PolicySnapshots(client, Keys(prefix=f"t-{uuid.uuid4().hex[:8]}"))
    try:
        assert await snapshots.get(policy.source_hash) is None
        assert await snapshots.put(policy) == policy.source_hash
        assert await snapshots.get(policy.source_hash) == policy
        changed = policy.model_copy(update={"default_model": "offline-faulty"})
        await snapshots.put(changed)                           # same hash: the first snapshot is kept
        assert await snapshots.get(policy.source_hash) == policy
    finally:
        await client.aclose()
