from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tier2.errors import ModelRouteError, SetupError
from tier2.settings.loader import REPO_ROOT, PolicyStore, load_security


def _config_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", dest)
    return dest


def test_repo_config_loads() -> None:
    policy = PolicyStore(REPO_ROOT / "config").snapshot()
    assert policy.default_model == "offline"
    name, route = policy.route(None)
    assert name == "offline" and route.kind == "offline"
    assert load_security(REPO_ROOT / "config").brief.max_chars > 0


def test_policy_hot_reloads_and_old_snapshots_stay_immutable(tmp_path: Path) -> None:
    cfg = _config_copy(tmp_path)
    store = PolicyStore(cfg)
    before = store.snapshot()
    runtime = cfg / "policy" / "runtime.yaml"
    mtime_ns = runtime.stat().st_mtime_ns
    runtime.write_text(runtime.read_text().replace("max_iters: 24", "max_iters: 7"))
    os.utime(runtime, ns=(mtime_ns + 10**9, mtime_ns + 10**9))  # a visibly newer file, however coarse the clock
    after = store.snapshot()
    assert after.writer.max_iters == 7
    assert before.writer.max_iters == 24


def test_unknown_route_is_a_clear_error() -> None:
    with pytest.raises(ModelRouteError, match="unknown model route 'nope'"):
        PolicyStore(REPO_ROOT / "config").snapshot().route("nope")


def test_broken_policy_is_a_setup_error(tmp_path: Path) -> None:
    cfg = _config_copy(tmp_path)
    (cfg / "policy" / "zz.yaml").write_text("writer: {max_iters: [not, a, number]}\n")
    with pytest.raises(SetupError, match="invalid policy"):
        PolicyStore(cfg).snapshot()
