"""Ceilings: the security config says which workspace kinds exist and that there is never a network; the hot policy
and a run's option can pick among them and lower limits, never widen anything."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tier2.errors import BadInput, SetupError
from tier2.sandbox import resolve_workspace
from tier2.settings.loader import REPO_ROOT, PolicyStore, load_security
from tier2.settings.sandbox import SandboxConfig, SandboxLimits, SandboxLimitsOverride, SandboxPolicy


def test_the_shipped_config_allows_every_kind_without_network() -> None:
    sec = load_security(REPO_ROOT / "config").sandbox
    assert sec.network is False and set(sec.allowed_kinds) == {"local", "isolated", "docker"}
    assert resolve_workspace(sec, PolicyStore(REPO_ROOT / "config").snapshot().sandbox).kind == sec.default_kind


def test_a_run_may_pick_only_an_allowed_kind() -> None:
    sec = SandboxConfig(allowed_kinds=["isolated", "docker"], default_kind="isolated")
    assert resolve_workspace(sec, None, None).kind == "isolated"
    assert resolve_workspace(sec, None, "docker").kind == "docker"
    with pytest.raises(BadInput, match="not allowed"):
        resolve_workspace(sec, None, "local")
    with pytest.raises(BadInput, match="unknown workspace kind"):
        resolve_workspace(sec, None, "host")


def test_hot_policy_narrows_but_cannot_add_a_kind_or_network() -> None:
    sec = SandboxConfig(allowed_kinds=["isolated"], default_kind="isolated")
    widened = SandboxPolicy(allowed_kinds=["local", "isolated", "docker"], default_kind="local")
    choice = resolve_workspace(sec, widened, None)
    assert choice.kind == "isolated"  # the policy's default is not allowed by the config: the config wins
    with pytest.raises(BadInput):
        resolve_workspace(sec, widened, "local")
    narrowed = SandboxPolicy(allowed_kinds=["docker"])
    with pytest.raises(BadInput, match="no workspace kind is allowed"):
        resolve_workspace(sec, narrowed, None)
    with pytest.raises(BadInput, match="network is never allowed"):
        resolve_workspace(sec, SandboxPolicy(network=True), None)


def test_a_run_cannot_ask_for_network() -> None:
    sec = SandboxConfig()
    for asked in ({"kind": "isolated", "network": True}, {"network": "yes"}):
        with pytest.raises(BadInput, match="network is never allowed"):
            resolve_workspace(sec, None, asked)
    with pytest.raises(BadInput, match="unknown field"):
        resolve_workspace(sec, None, {"kind": "isolated", "privileged": True})


def test_limits_only_go_down() -> None:
    sec = SandboxConfig(limits=SandboxLimits(memory_mb=2048, pids=256))
    policy = SandboxPolicy(limits=SandboxLimitsOverride(memory_mb=8192, pids=128))
    choice = resolve_workspace(sec, policy, {"kind": "local", "limits": {"memory_mb": 512, "pids": 4000}})
    assert choice.limits.memory_mb == 512 and choice.limits.pids == 128
    assert resolve_workspace(sec, policy, None).limits.memory_mb == 2048
    high = SandboxConfig(limits=SandboxLimits(pids=2048))  # a field the policy leaves alone keeps the config's
    assert resolve_workspace(high, SandboxPolicy(limits=SandboxLimitsOverride(memory_mb=512)), None).limits.pids == 2048


def test_the_security_config_cannot_turn_network_on_or_pass_the_compiled_ceilings(tmp_path: Path) -> None:
    config = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    toml = config / "security" / "runtime.toml"
    base = toml.read_text()
    for bad in ('network = false', 'default_kind = "local"'):
        assert bad in base
    toml.write_text(base.replace("network = false", "network = true"))
    with pytest.raises(SetupError, match="network"):
        load_security(config)
    toml.write_text(base.replace("pids = 512", "pids = 100000"))
    with pytest.raises(SetupError, match="pids"):
        load_security(config)
    toml.write_text(base.replace('allowed_kinds = ["local", "isolated", "docker"]', 'allowed_kinds = ["isolated"]'))
    with pytest.raises(SetupError, match="default_kind"):
        load_security(config)  # the default ("local") must itself be allowed


def test_the_cli_refuses_a_forbidden_kind_before_starting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from tier2.cli import main

    config = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    (config / "policy" / "sandbox.yaml").write_text("sandbox:\n  allowed_kinds: [isolated]\n  default_kind: isolated\n")
    monkeypatch.setenv("TIER2_CONFIG_DIR", str(config))
    monkeypatch.setenv("TIER2_WORKSPACES", str(tmp_path / "ws"))
    assert main(["generate", "a potion shop tycoon game", "--workspace", "docker"]) == 2
    assert "not allowed" in capsys.readouterr().err
