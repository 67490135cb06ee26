"""`load_packs`: a process loads every allowed, installed pack, the default first; an allowed pack that is not
installed is left out, one that is installed but broken stops the start naming it, a default that is not allowed
too."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tier2.errors import PackError
from tier2.runs.process.runtime import load_packs
from tier2.settings.loader import REPO_ROOT, Settings, load_security

REAL = REPO_ROOT / "capability_packs"


def _packs_dir(tmp_path: Path, *real: str) -> Path:
    packs = tmp_path / "packs"
    packs.mkdir()
    for name in real:  # the real pack (its node_modules included), by a link: load_pack resolves it
        (packs / name).symlink_to(REAL / name, target_is_directory=True)
    return packs


def test_every_allowed_installed_pack_is_loaded_the_default_first() -> None:
    security = load_security(REPO_ROOT / "config")
    packs = load_packs(Settings(packs_dir=REAL, pack="pixi"), security)
    assert list(packs) == ["pixi", "phaser"] and packs["pixi"].ref == "pixi@1.0.0"
    assert list(load_packs(Settings(packs_dir=REAL), security)) == ["phaser", "pixi"]  # default_pack


def test_an_allowed_pack_not_installed_is_left_out(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        packs = load_packs(Settings(packs_dir=_packs_dir(tmp_path, "phaser")), load_security(REPO_ROOT / "config"))
    assert list(packs) == ["phaser"]
    assert "pack pixi is allowed but not installed" in caplog.text


def test_an_installed_pack_that_does_not_load_is_a_start_error_naming_it(tmp_path: Path) -> None:
    packs = _packs_dir(tmp_path, "phaser")
    (packs / "pixi").mkdir()
    (packs / "pixi" / "pack.yaml").write_text("id: pixi\nversion: [not a version\n")
    with pytest.raises(PackError, match=r"an allowed pack cannot be served: invalid pack manifest .*pixi/pack\.yaml"):
        load_packs(Settings(packs_dir=packs), load_security(REPO_ROOT / "config"))


def test_the_default_must_be_allowed_and_installed(tmp_path: Path) -> None:
    security = load_security(REPO_ROOT / "config")
    with pytest.raises(PackError, match="pack 'nope' is not in allowed_packs"):
        load_packs(Settings(packs_dir=REAL, pack="nope"), security)
    with pytest.raises(PackError, match="unknown capability pack 'pixi'"):
        load_packs(Settings(packs_dir=_packs_dir(tmp_path, "phaser"), pack="pixi"), security)
